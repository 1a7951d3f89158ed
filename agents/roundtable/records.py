"""The records of a roundtable: utterances, the mind map, and the session that holds them (saved each turn)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, Field

from agents.storm.records import Persona
from agents.storm.citations import strip_citations
from retrieval.snippets import Snippet

Role = Literal["expert", "moderator", "user"]


class Utterance(BaseModel):
    """One turn: who spoke, what, and the numbered sources its `[n]` point into (1-based)."""

    turn: int = 0
    role: Role
    speaker: str
    text: str
    focus: str = Field("", description="the question this turn answers (an expert's), or asks (the moderator's)")
    queries: list[str] = Field(default_factory=list, description="what the turn searched for")
    sources: list[Snippet] = Field(default_factory=list)
    cited: list[int] = Field(default_factory=list, description="the [n] the text uses, ascending")
    warm_start: bool = False
    simulated: bool = Field(False, description="a user turn written by the simulated user (--observe)")

    def cited_snippets(self) -> list[Snippet]:
        return [self.sources[n - 1] for n in self.cited if 0 < n <= len(self.sources)]

    def line(self) -> str:
        """The turn as the other speakers read it: name and text, without its citations."""
        return f"{self.speaker} ({self.role}): {strip_citations(self.text)}"


class MindMapNode(BaseModel):
    """A concept, the snippets cited under it, and its sub-concepts."""

    id: str
    concept: str
    snippets: list[Snippet] = Field(default_factory=list)
    children: list[MindMapNode] = Field(default_factory=list)

    def walk(self, depth: int = 0) -> Iterator[tuple[MindMapNode, int]]:
        """This node and every node below it, in the tree's order (pre-order), with its depth."""
        yield self, depth
        for child in self.children:
            yield from child.walk(depth + 1)

    def find(self, node_id: str) -> MindMapNode | None:
        return next((n for n, _ in self.walk() if n.id == node_id), None)

    def all_snippets(self) -> list[Snippet]:
        return [s for n, _ in self.walk() for s in n.snippets]


class RoundtableOptions(BaseModel):
    """How a roundtable runs: the turn policy, the mind map's split size and the searches."""

    moderator_after: int = Field(2, ge=1, description="expert turns in a row before the moderator asks")
    split_above: int = Field(4, ge=2, description="a concept holding more snippets than this is split")
    max_experts: int = Field(3, ge=1, description="experts at the table at once")
    search_k: int = Field(6, ge=1, description="passages per search query")
    warm_start_turns: int = Field(1, ge=0, description="turns each first expert takes in the warm start")


class RoundtableSession(BaseModel):
    """Everything a roundtable is: saved after every turn, and resumed from."""

    id: str
    topic: str
    collection: str = Field(description="the collection the experts search")
    source: str = Field("corpus", description="corpus, web or hybrid: what the experts search")
    options: RoundtableOptions = Field(default_factory=RoundtableOptions)
    experts: list[Persona] = Field(default_factory=list)
    utterances: list[Utterance] = Field(default_factory=list)
    mindmap: MindMapNode
    unused: list[Snippet] = Field(default_factory=list, description="retrieved by some turn, cited by none yet")
    expert_streak: int = Field(0, description="expert turns since the moderator or the user last spoke")
    next_expert: int = 0
    asked: dict[str, list[str]] = Field(default_factory=dict, description="each expert's own questions so far")
    next_node: int = 1

    @property
    def turns(self) -> int:
        return len(self.utterances)

    def cited_ids(self) -> set[str]:
        return {s.point_id for u in self.utterances for s in u.cited_snippets()}

    def pending_question(self) -> str:
        """What the next expert must answer: the user's message or the moderator's question, if the last
        turn was one; else "" (the expert raises its own)."""
        last = self.utterances[-1] if self.utterances else None
        return last.focus or last.text if last is not None and last.role in ("user", "moderator") else ""
