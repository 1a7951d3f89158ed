"""What a multi-hop agent returns: the answer, the hop trace and the passages behind it.

Everything here is pydantic, so an `AgentAnswer` crosses from a `Hopper` actor to
the CLI, to `--json` output and into benchmark lines unchanged.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from retrieval.documents import Part, Passage

NO_INFORMATION = "No relevant information found"

StrategyName = Literal["chain", "deep", "naive"]


def found_nothing(answer: str) -> bool:
    """True for the exact "nothing found" reply (case, spacing and a final period aside)."""
    return " ".join(answer.lower().split()).rstrip(".") == NO_INFORMATION.lower()


class Hop(BaseModel):
    """One retrieval round: the query, what it found, and the passages that support it."""

    query: str
    answer: str  # the intermediate answer, or exactly NO_INFORMATION
    passages: list[Passage]  # retrieved for `query`, in rank order (Chain-of-RAG: less earlier hops' support)
    supporting: list[int] = Field(default_factory=list)  # indices into `passages`

    @property
    def found(self) -> bool:
        return not found_nothing(self.answer)

    @property
    def supporting_passages(self) -> list[Passage]:
        return [self.passages[i] for i in self.supporting]


class Citation(BaseModel):
    """A passage the answer cites as `[n]`: where to find it, line range included."""

    n: int
    title: str
    source: str  # the URL when the document has one, else its path
    path: str = ""  # the file the text was read from, always (several files may share a URL)
    line_start: int
    line_end: int
    text: str
    part: Part | None = None  # the PDF page, slide or sheet the lines count within

    @classmethod
    def of(cls, n: int, passage: Passage) -> "Citation":
        return cls(n=n, title=passage.title, source=passage.source, path=passage.path,
                   line_start=passage.line_start,
                   line_end=passage.line_end, text=passage.text, part=passage.part)


class AgentAnswer(BaseModel):
    """The result of one question: answer, trace, citations and the retrieval ranking."""

    question: str
    strategy: StrategyName
    answer: str
    short_answer: str | None = None  # a span of the answer naming just the asked-for thing, when found
    hops: list[Hop] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    retrieved: list[Passage] = Field(default_factory=list)  # union over hops, deduplicated, ranked
    route_note: str | None = None  # how the router chose (or why it fell back)
    # the answer layer (agents/answer): type, calibrated confidence, abstention, the passages stating it
    answer_type: str | None = None
    strategy_span: str | None = None  # the strategy's own short span, before fusion (a candidate among others)
    confidence: float | None = None  # P(short answer right), 0-1; None before the answer layer ran
    guess: str | None = None  # the fused candidate, kept when abstaining (for calibration figures)
    abstained: bool = False
    abstain_reason: str | None = None  # why raystorm cannot answer ("no passage states ...")
    answer_support: list[Citation] = Field(default_factory=list)  # passages containing the short answer
    # a question about the value in force: the value it replaced, as history, and the passages stating that
    history: str | None = None
    history_support: list[Citation] = Field(default_factory=list)


def unique_passages(passages: list[Passage]) -> list[Passage]:
    seen: set[str] = set()
    out = []
    for p in passages:
        if p.passage_id not in seen:
            seen.add(p.passage_id)
            out.append(p)
    return out


def merge_hops(hops: list[Hop]) -> list[Passage]:
    """The union of the hops' passages in one ranking.

    Supporting passages come first, hop by hop (what the chain relied on, in the
    order it found them), then every hop's other passages, hop by hop in rank
    order. On MuSiQue and HotpotQA this beat plain interleaving of the hops'
    rankings (hop 1's first, hop 2's first, ..., hop 1's second, ...) at both k = 2 and 5.
    """
    return unique_passages([p for hop in hops for p in hop.supporting_passages] +
                           [p for hop in hops for p in hop.passages])


def cite(numbered: list[Passage], cited: list[int]) -> list[Citation]:
    """The citations of an answer given `numbered` passages (from 1) that cited the numbers `cited`,
    keeping the answer's own numbers; numbers that name no passage are dropped."""
    return [Citation.of(n, numbered[n - 1]) for n in sorted({n for n in cited if 1 <= n <= len(numbered)})]


def all_of(numbered: list[Passage]) -> list[int]:
    """Every number of `numbered`: what an answer that cites nothing rests on, when all of it is support."""
    return list(range(1, len(numbered) + 1))
