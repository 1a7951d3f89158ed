"""The steps of DeepSearch (DeepSearcher's breadth-first strategy), each with its extractive form.

`SubQueries` splits the question into at most four; every passage retrieved for
them goes through `PassageRelevance`; `Reflection` proposes at most three gap
queries (an empty list stops); `Report` writes the long answer with citations.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.instructions import numbered_source
from agents.multihop import evidence
from agents.multihop.chain_steps import MIN_SUPPORT, CitedAnswer, uncited
from agents.multihop.short_answer import answer_span
from agents.multihop.trace import NO_INFORMATION
from retrieval.documents import PassageText

MAX_SUB_QUERIES = 4
MAX_GAP_QUERIES = 3
REPORT_SENTENCES = 6


def _queries(queries: list[str]) -> str:
    return "\n".join(f"- {q}" for q in queries) or "(none)"


# --- sub-queries -----------------------------------------------------------------------------

class SubQueriesInput(BaseModel):
    question: str


class SubQueriesOutput(BaseModel):
    queries: list[str] = Field(description=f"1 to {MAX_SUB_QUERIES} sub-questions")


class SubQueries(Step[SubQueriesInput, SubQueriesOutput]):
    name: ClassVar[str] = "multihop.deep.sub_queries"
    role: ClassVar[str] = "plan"
    Input = SubQueriesInput
    Output = SubQueriesOutput
    instructions: ClassVar[str] = (
        f"To answer the question comprehensively, break it down into at most {MAX_SUB_QUERIES} "
        "sub-questions, each answerable by one search. If the question is simple and needs no "
        "decomposition, return a list holding only the original question."
    )

    @classmethod
    def extract(cls, inp: SubQueriesInput, nlp: TextToolkit) -> SubQueriesOutput:
        # the question itself, then each thing it names, then its multi-word key phrases
        aspects = [e.text for e in nlp.entities(inp.question, evidence.BRIDGE_KINDS)]
        aspects += [k for k in nlp.keyphrases(inp.question, k=MAX_SUB_QUERIES * 2) if len(k.split()) > 1]
        queries, seen = [inp.question], [evidence.terms(nlp, inp.question)]
        for aspect in aspects:
            t = evidence.terms(nlp, aspect)
            if len(queries) >= MAX_SUB_QUERIES:
                break
            if t and t not in seen:
                seen.append(t)
                queries.append(aspect)
        return SubQueriesOutput(queries=queries)


# --- per-passage relevance -------------------------------------------------------------------

class RelevanceInput(BaseModel):
    question: str
    queries: list[str]
    passage: PassageText


class RelevanceOutput(BaseModel):
    relevant: bool = Field(description="true when the passage helps answer the question or a query")


class PassageRelevance(Step[RelevanceInput, RelevanceOutput]):
    name: ClassVar[str] = "multihop.deep.relevance"
    role: ClassVar[str] = "filter"
    Input = RelevanceInput
    Output = RelevanceOutput
    instructions: ClassVar[str] = (
        "Given the question, the search queries and one retrieved passage, decide whether the passage "
        "helps answer the question or any of the queries."
    )

    @classmethod
    def extract(cls, inp: RelevanceInput, nlp: TextToolkit) -> RelevanceOutput:
        # relevant: covers enough of the question itself, is about something a query names (its
        # title), or mentions an entity a gap query follows that the question does not name
        p = inp.passage
        best = evidence.rank_sentences(nlp, inp.question, [p])
        if best and best[0].coverage >= 2 * MIN_SUPPORT:
            return RelevanceOutput(relevant=True)
        if any(evidence.mentions(nlp, evidence.terms(nlp, q), p.title) for q in [inp.question, *inp.queries]):
            return RelevanceOutput(relevant=True)
        asked, text = evidence.terms(nlp, inp.question), evidence.terms(nlp, f"{p.title} {p.text}")
        bridges = [e.text for q in inp.queries for e in nlp.entities(q, evidence.BRIDGE_KINDS)
                   if not evidence.terms(nlp, e.text) <= asked]
        return RelevanceOutput(relevant=any(evidence.mentions(nlp, text, b) for b in bridges))


# --- reflection ------------------------------------------------------------------------------

class ReflectionInput(BaseModel):
    question: str
    queries: list[str] = Field(description="every query searched so far")
    passages: list[PassageText] = Field(description="the relevant passages found so far")


class ReflectionOutput(BaseModel):
    queries: list[str] = Field(default_factory=list,
                               description=f"at most {MAX_GAP_QUERIES} new queries; empty when nothing is missing")


class Reflection(Step[ReflectionInput, ReflectionOutput]):
    name: ClassVar[str] = "multihop.deep.reflection"
    role: ClassVar[str] = "reflect"
    Input = ReflectionInput
    Output = ReflectionOutput
    instructions: ClassVar[str] = (
        "Given the question, the queries searched so far and the passages found, decide whether more "
        f"searching is needed. If so, give at most {MAX_GAP_QUERIES} new search queries for what is still "
        "missing; if not, return an empty list."
    )

    @classmethod
    def render_input(cls, inp: ReflectionInput) -> str:
        passages = "\n\n".join(numbered_source(i, p.title, p.text) for i, p in enumerate(inp.passages, start=1))
        return (f"## Question\n{inp.question}\n\n## Queries so far\n{_queries(inp.queries)}\n\n"
                f"## Passages\n{passages or '(none)'}")

    @classmethod
    def extract(cls, inp: ReflectionInput, nlp: TextToolkit) -> ReflectionOutput:
        # done when every question word is covered and the best sentence names an answer of the
        # asked-for kind; else follow the entities the best sentences name, with the words still
        # missing (or, all covered, the question's words less the names of what was found)
        if not inp.passages:
            return ReflectionOutput(queries=[])
        covered = [f"{p.title} {p.text}" for p in inp.passages]
        missing = evidence.open_terms(nlp, inp.question, covered)
        ranked = evidence.rank_sentences(nlp, inp.question, inp.passages)
        if not missing and ranked and answer_span(nlp, inp.question, ranked[0].text, inp.queries):
            return ReflectionOutput(queries=[])
        words = missing or evidence.open_terms(nlp, inp.question, [p.title for p in inp.passages])
        out: list[str] = []
        for s in ranked[:MAX_GAP_QUERIES]:
            source = inp.passages[s.passage]
            for bridge in evidence.bridge_candidates(nlp, inp.question, s.text, [source], [*inp.queries, *out]):
                query = " ".join([bridge, *words])
                if query not in inp.queries and query not in out:
                    out.append(query)
                break
        return ReflectionOutput(queries=out[:MAX_GAP_QUERIES])


# --- the report ------------------------------------------------------------------------------

class ReportInput(BaseModel):
    question: str
    queries: list[str]
    passages: list[PassageText] = Field(description="the relevant passages, numbered from 1")


class Report(Step[ReportInput, CitedAnswer]):
    name: ClassVar[str] = "multihop.deep.report"
    role: ClassVar[str] = "answer"
    Input = ReportInput
    Output = CitedAnswer
    instructions: ClassVar[str] = (
        "Write a specific, detailed answer (a short report) to the question from the numbered passages "
        "and the queries that found them. Use only the passages; cite each statement's passages as [n]. "
        "Lead with the direct answer."
    )

    @classmethod
    def render_input(cls, inp: ReportInput) -> str:
        numbered = "\n\n".join(numbered_source(i, p.title, p.text) for i, p in enumerate(inp.passages, start=1))
        return f"## Question\n{inp.question}\n\n## Queries\n{_queries(inp.queries)}\n\n## Passages\n{numbered}"

    @classmethod
    def check(cls, inp: ReportInput, out: CitedAnswer) -> str | None:
        return uncited(out, len(inp.passages))

    @classmethod
    def extract(cls, inp: ReportInput, nlp: TextToolkit) -> CitedAnswer:
        return extractive_report(nlp, inp.question, inp.queries, inp.passages, REPORT_SENTENCES)


def extractive_report(nlp: TextToolkit, question: str, queries: list[str], passages: list[PassageText],
                      size: int) -> CitedAnswer:
    """The best-supported sentence for the question first, then relevant yet diverse ones, each cited."""
    pool: dict[tuple[int, str], evidence.ScoredSentence] = {}
    for query in [question, *queries]:  # the question's own ranking first, so its best sentence leads
        for s in evidence.rank_sentences(nlp, query, passages):
            if s.coverage >= MIN_SUPPORT:
                pool.setdefault((s.passage, s.text), s)
    if not pool:
        return CitedAnswer(answer=NO_INFORMATION, citations=[])
    lead, *rest = pool.values()
    picked = [lead] + [rest[i] for i in nlp.mmr_select(question, [s.text for s in rest], k=size - 1)]
    parts, cited = [], []
    for s in picked:
        parts.append(f"{s.text} [{s.passage + 1}]")
        if s.passage + 1 not in cited:
            cited.append(s.passage + 1)
    return CitedAnswer(answer=" ".join(parts), citations=cited)
