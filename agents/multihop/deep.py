"""DeepSearch: breadth first. Sub-queries searched at once, a relevance filter, reflection, a report.

Per iteration every open query is searched concurrently, every new passage is
judged relevant or not (concurrently too), and reflection proposes at most three
gap queries from what was found; an empty list ends the search. The report is
written from the relevant passages, with citations.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from agents.lm.steps import LanguageModel
from agents.multihop.deep_steps import (
    MAX_GAP_QUERIES,
    MAX_SUB_QUERIES,
    PassageRelevance,
    Reflection,
    ReflectionInput,
    RelevanceInput,
    Report,
    ReportInput,
    SubQueries,
    SubQueriesInput,
)
from agents.multihop.short_answer import short_answer
from agents.multihop.trace import AgentAnswer, Hop, all_of, cite, unique_passages
from retrieval.documents import Passage, PassageText
from retrieval.query import Retriever


class DeepSettings(BaseModel):
    max_iter: int = Field(3, ge=1, description="search rounds at most")
    k: int = Field(5, ge=1, description="passages retrieved per query")


class DeepSearch:
    name = "deep"
    description = ("DeepSearch: broad, report-like questions (overviews, comparisons, explanations, "
                   "several aspects at once): parallel sub-queries, reflection on gaps, a long cited answer.")

    def __init__(self, lm: LanguageModel, retriever: Retriever, settings: DeepSettings | None = None):
        self.lm = lm
        self.retriever = retriever
        self.settings = settings or DeepSettings()

    async def answer(self, question: str) -> AgentAnswer:
        s = self.settings
        planned = (await self.lm.run(SubQueries, SubQueriesInput(question=question))).queries
        queries = _fresh(planned, [], MAX_SUB_QUERIES) or [question]
        asked: list[str] = []
        hops: list[Hop] = []
        relevant: list[Passage] = []
        for _ in range(s.max_iter):
            asked += queries
            results = await asyncio.gather(*(self.retriever.search(q, k=s.k) for q in queries))
            for query, hits in zip(queries, results):
                passages = [h.passage for h in hits]
                # judged again when a new query finds it: a gap query can make a passage relevant
                kept_before = {p.passage_id for p in relevant}
                new = unique_passages([p for p in passages if p.passage_id not in kept_before])
                verdicts = await asyncio.gather(*(self.lm.run(PassageRelevance, RelevanceInput(
                    question=question, queries=asked, passage=PassageText.of(p))) for p in new))
                kept = {p.passage_id for p, v in zip(new, verdicts) if v.relevant}
                relevant += [p for p in new if p.passage_id in kept]
                hops.append(Hop(query=query, answer=f"{len(kept)} relevant passage(s)", passages=passages,
                                supporting=[i for i, p in enumerate(passages) if p.passage_id in kept]))
            gaps = (await self.lm.run(Reflection, ReflectionInput(
                question=question, queries=asked, passages=[PassageText.of(p) for p in relevant]))).queries
            queries = _fresh(gaps, asked, MAX_GAP_QUERIES)
            if not queries:
                break
        report = await self.lm.run(Report, ReportInput(question=question, queries=asked,
                                                       passages=[PassageText.of(p) for p in relevant]))
        ranking = unique_passages(relevant + [p for h in hops for p in h.passages])
        return AgentAnswer(question=question, strategy="deep", answer=report.answer,
                           short_answer=await short_answer(self.lm, question, report.answer),
                           hops=hops, citations=cite(relevant, report.numbers() or all_of(relevant)), retrieved=ranking)


def _fresh(queries: list[str], asked: list[str], limit: int) -> list[str]:
    """At most `limit` non-empty queries not asked before, once each (a model may repeat itself)."""
    seen = {q.strip().lower() for q in asked}
    out = []
    for q in queries:
        key = q.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(q.strip())
    return out[:limit]
