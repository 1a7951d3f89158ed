"""What one step's model call records as it goes (attempts, replays, tokens, repair, fallback), and the
signal that a server refused the requested output format; shared by the JSON path (`chat`) and the
function-calling path (`tool_calls`)."""

from __future__ import annotations

from dataclasses import dataclass

from agents.lm.backoff import Failure


@dataclass
class CallStats:
    attempts: int = 0
    replayed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    repaired: bool = False
    fallback_reason: str | None = None
    first_key: str | None = None
    mode: str | None = None


class FormatRefused(Exception):
    def __init__(self, failure: Failure):
        self.failure = failure


class PromptTooLong(Exception):
    """The server says the prompt does not fit the model's context: the step falls back, as for bad output."""

    def __init__(self, failure: Failure):
        self.failure = failure
