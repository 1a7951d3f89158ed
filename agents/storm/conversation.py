"""One simulated conversation: a persona's writer and the expert in a `RoundRobinGroupChat`.

The writer speaks first; the conversation ends when the writer thanks the
expert (`TextMentionTermination`): early, or once it has heard the answer to its
`max_turns`-th question (so the writer holds the whole conversation, e.g. to be
interviewed after the run). `MaxMessageTermination` is the backstop for a writer
that never thanks: the task message, the turns, and the thank-you.
"""

from __future__ import annotations

from typing import Callable, Sequence

from autogen_agentchat.base import ChatAgent
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.messages import StructuredMessage, TextMessage
from autogen_agentchat.teams import RoundRobinGroupChat

from agents.lm.steps import LanguageModel
from agents.storm.expert import ExpertAgent, TurnMessage
from agents.storm.records import THANK_YOU, Conversation, DialogueTurn, Persona
from agents.storm.writer import WriterAgent
from retrieval.query import Retriever

OnTurn = Callable[[Persona, DialogueTurn], None]


def conversation_team(writer: ChatAgent, expert: ChatAgent, max_turns: int) -> RoundRobinGroupChat:
    """The team of one conversation; either agent may be a proxy to a Ray actor."""
    termination = TextMentionTermination(THANK_YOU) | MaxMessageTermination(2 + 2 * max_turns)
    return RoundRobinGroupChat([writer, expert], termination_condition=termination,
                               custom_message_types=[TurnMessage])


def opening_task(topic: str, persona: Persona) -> TextMessage:
    return TextMessage(content=f"Topic: {topic}. Research it as {persona.name}: {persona.description}.",
                       source="user")


def writer_name(persona: Persona) -> str:
    """The writer agent's name: `writer_` and the persona's name in lowercase letters, digits and _."""
    slug = "".join(ch if ch.isalnum() else "_" for ch in persona.name.lower())[:40] or "writer"
    return f"writer_{slug}"


async def run_conversation(topic: str, persona: Persona, models: LanguageModel, retriever: Retriever, *,
                           max_turns: int = 3, search_k: int = 8, exclude_urls: Sequence[str] = (),
                           on_turn: OnTurn | None = None) -> Conversation:
    """Interview the expert as `persona`; returns every turn with its queries, results and citations."""
    writer = WriterAgent(writer_name(persona), topic, persona, models, max_turns)
    expert = ExpertAgent("expert", topic, models, retriever, search_k=search_k, exclude_urls=exclude_urls)
    return await converse(topic, persona, writer, expert, max_turns, on_turn=on_turn)


async def converse(topic: str, persona: Persona, writer: ChatAgent, expert: ChatAgent, max_turns: int,
                   on_turn: OnTurn | None = None) -> Conversation:
    """Run the team of `writer` and `expert` and collect the expert's turns."""
    team = conversation_team(writer, expert, max_turns)
    turns: list[DialogueTurn] = []
    try:
        async for item in team.run_stream(task=opening_task(topic, persona)):
            if isinstance(item, StructuredMessage) and isinstance(item.content, DialogueTurn):
                turns.append(item.content)
                if on_turn:
                    on_turn(persona, item.content)
    except Exception as exc:
        # autogen turns an agent's exception into a RuntimeError holding its text; re-raise the original
        original = getattr(writer, "error", None) or getattr(expert, "error", None)
        if original is not None:
            raise original from exc
        raise
    return Conversation.of(persona, turns)
