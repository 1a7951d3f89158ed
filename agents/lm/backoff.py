"""Which request failures are worth retrying, and how long to wait before the next try.

Works on the exceptions any autogen client raises: the openai SDK's (status code,
response headers), httpx's, asyncio's timeouts and OS connection errors.
"""

from __future__ import annotations

import asyncio
import email.utils
import sys
import time
from dataclasses import dataclass
from typing import Literal

import httpx

from agents.retry import RetryPolicy  # noqa: F401  (the one schedule; re-exported for the LM settings)

FailureKind = Literal["rate_limited", "server_error", "timeout", "connection", "rejected", "format_refused",
                      "bad_reply", "context_exceeded"]

# Words a server's error uses when it is the response_format it cannot handle
# (llama.cpp: 500 "response_format type must be one of "text" or "json_object"").
# how servers say a prompt does not fit the model (OpenAI, vLLM, llama.cpp, Ollama, LM Studio)
_CONTEXT_WORDS = ("context length", "context window", "context size", "maximum context", "n_ctx",
                  "too many tokens", "exceeds the available context", "prompt is too long", "input is too long")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar", "guided", "structured",
                 "tool", "function")  # the last two: a server refusing native function calling


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    reason: str  # one line for messages and the ledger
    status: int | None = None
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limited", "server_error", "timeout", "connection", "bad_reply")


def classify(exc: BaseException, *, structured: bool) -> Failure | None:
    """What kind of failure `exc` is; None for exceptions that are not request failures.

    `structured` says whether the request asked for a structured response_format, in
    which case a 400/422/500/501 that talks about the format is `format_refused`.
    """
    # Not imported yet: then no openai exception exists (and extractive-only processes skip its import).
    openai = sys.modules.get("openai")
    sdk_status = (openai.APIStatusError,) if openai else ()
    sdk_timeout = (openai.APITimeoutError,) if openai else ()
    sdk_connection = (openai.APIConnectionError,) if openai else ()
    if isinstance(exc, sdk_status):
        return _from_status(exc.status_code, exc.response.headers, str(exc), structured)
    if isinstance(exc, httpx.HTTPStatusError):
        return _from_status(exc.response.status_code, exc.response.headers, exc.response.text, structured)
    if isinstance(exc, (*sdk_timeout, httpx.TimeoutException, asyncio.TimeoutError, TimeoutError)):
        return Failure("timeout", "the request timed out")
    if isinstance(exc, (*sdk_connection, httpx.TransportError, ConnectionError)):
        return Failure("connection", f"could not connect ({type(exc).__name__}: {exc})")
    return None


# what a client library raises while reading a reply that is not a chat completion (an HTML page,
# `{"choices": []}`, no `message`, an error object with status 200, a body cut short)
_REPLY_SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def malformed_reply(exc: BaseException) -> Failure | None:
    """The failure of a request whose reply the client could not read, or None for anything else.
    Only for exceptions raised inside the client's `create`, where nothing of ours runs."""
    if not isinstance(exc, _REPLY_SHAPE_ERRORS):
        return None
    detail = " ".join(str(exc).split())[:160]
    return Failure("bad_reply", f"the reply is not an OpenAI chat completion ({type(exc).__name__}: {detail})")


def _from_status(status: int, headers: httpx.Headers | dict, text: str, structured: bool) -> Failure:
    retry_after = retry_after_seconds(headers)
    brief = " ".join(text.split())[:200]
    if structured and status in (400, 422, 500, 501) and any(w in text.lower() for w in _FORMAT_WORDS):
        return Failure("format_refused", f"HTTP {status} refusing the response format: {brief}", status)
    if status in (400, 413, 422) and any(w in text.lower() for w in _CONTEXT_WORDS):
        return Failure("context_exceeded", f"HTTP {status}, the prompt does not fit the model's context: {brief}",
                       status)
    if status == 429:
        return Failure("rate_limited", f"HTTP 429 rate limited: {brief}", status, retry_after)
    if status >= 500 or status == 408:
        return Failure("server_error", f"HTTP {status}: {brief}", status, retry_after)
    return Failure("rejected", f"HTTP {status}: {brief}", status)


def retry_after_seconds(headers: httpx.Headers | dict) -> float | None:
    """The wait a server asked for: `retry-after-ms` (OpenAI), else `Retry-After` (seconds or a date)."""
    lower = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lower:
        try:
            return float(lower["retry-after-ms"]) / 1000.0
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def rejection_hint(status: int | None) -> str:
    """What a user can do about a non-retryable HTTP status."""
    if status in (401, 403):
        return "Check the API key: OPENAI_API_KEY for openai:MODEL, RAYSTORM_LLM_API_KEY for --llm-base-url servers"
    if status == 404:
        return "Check the model name and that --llm-base-url ends in the API root (often /v1)"
    return "The server refused this request; try --llm-structured-output text, or another model"
