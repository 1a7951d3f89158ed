"""The Wikipedia writer of one persona: an autogen chat agent that asks the expert questions.

It keeps the whole conversation, but shows its question step only the last
`WINDOW` turns in full; older answers are elided (STORM does the same, to keep
long conversations within a model's context). It asks at most `max_turns`
questions, then thanks the expert, which ends the conversation.
"""

from __future__ import annotations

from typing import Sequence

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage, TextMessage
from autogen_core import CancellationToken

from agents.lm.steps import LanguageModel
from agents.storm.records import THANK_YOU, DialogueTurn, Persona
from agents.storm.steps_research import AskQuestion, HistoryTurn, QuestionInput

WINDOW = 4
ELIDED = "(answer omitted)"


def writer_history(turns: Sequence[tuple[str, str]], window: int = WINDOW) -> list[HistoryTurn]:
    """The turns a writer sees: the last `window` in full, earlier ones with the answer elided."""
    cut = max(0, len(turns) - window)
    return [HistoryTurn(question=q, answer=a if i >= cut else ELIDED) for i, (q, a) in enumerate(turns)]


def finished_question(text: str) -> str:
    """A question as asked: one line, and a thank-you wherever it appears ends the conversation."""
    text = " ".join(text.split())
    return THANK_YOU if THANK_YOU.lower() in text.lower() or not text else text


class WriterAgent(BaseChatAgent):
    """Asks the next question from its persona's perspective, given what the expert said so far."""

    def __init__(self, name: str, topic: str, persona: Persona, models: LanguageModel, max_turns: int):
        super().__init__(name, f"a Wikipedia writer researching '{topic}' as {persona.name}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self.topic = topic
        self.persona = persona
        self.models = models
        self.max_turns = max_turns
        self.turns: list[tuple[str, str]] = []  # (question, answer) pairs so far
        self.heard: list[DialogueTurn] = []  # the expert's turns, with the passages each retrieved
        self._pending: str | None = None
        self.error: BaseException | None = None  # what stopped it, kept typed (autogen re-raises a string)

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TextMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        for m in messages:
            if m.source == self.name:
                continue
            if isinstance(m, StructuredMessage) and isinstance(m.content, DialogueTurn):
                answer = m.content.agent_utterance
                self.heard.append(m.content)
            else:
                answer = m.to_text()
            if self._pending is not None:  # the expert's reply to our last question
                self.turns.append((self._pending, answer))
                self._pending = None
        if len(self.turns) >= self.max_turns:
            question = THANK_YOU
        else:
            try:
                out = await self.models.run(AskQuestion, QuestionInput(
                    topic=self.topic, persona=self.persona, history=writer_history(self.turns)))
            except Exception as exc:
                self.error = exc
                raise
            question = finished_question(out.question)
        if question != THANK_YOU:
            self._pending = question
        return Response(chat_message=TextMessage(content=question, source=self.name))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        self.turns.clear()
        self.heard.clear()
        self._pending = None
