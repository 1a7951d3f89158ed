"""Chain-of-RAG: answer a multi-hop question one simple query at a time.

Per hop: a follow-up query from the question and the earlier hops; retrieval;
an intermediate answer from the passages only (or "No relevant information
found"); the passages that support it (indices bounds-checked); optionally an
early stop when the model judges the hops sufficient. The final answer sees the
supporting passages and every hop, and is told the intermediate answers may be wrong.
When the first query is narrower than the question (the offline model asks the
question's first nested relation), the first hop also reads the question's own
hits, interleaved with the query's: they often hold later hops' passages.
"""

from __future__ import annotations

from itertools import zip_longest

from pydantic import BaseModel, Field

from agents.lm.steps import LanguageModel
from agents.multihop.chain_steps import (
    ChainAnswer,
    ChainAnswerInput,
    FollowUpInput,
    FollowUpQuery,
    HopBrief,
    IntermediateAnswer,
    IntermediateInput,
    SupportedPassages,
    SupportInput,
    Sufficiency,
    SufficiencyInput,
    guard_indices,
)
from agents.multihop.short_answer import short_answer
from agents.multihop.trace import (
    AgentAnswer,
    Hop,
    all_of,
    cite,
    found_nothing,
    merge_hops,
    unique_passages,
)
from retrieval.documents import PassageText
from retrieval.query import Retriever


class ChainSettings(BaseModel):
    max_iter: int = Field(4, ge=1, description="hops at most")
    k: int = Field(5, ge=1, description="passages retrieved per hop")
    early_stop: bool = Field(False, description="stop once the model judges the hops sufficient")


def brief(hop: Hop) -> HopBrief:
    return HopBrief(query=hop.query, answer=hop.answer,
                    supporting=[PassageText.of(p) for p in hop.supporting_passages])


class ChainOfRAG:
    name = "chain"
    description = ("Chain-of-RAG: concrete multi-hop factual questions whose answer goes through a "
                   "bridge entity (who/what/where/when of the thing that ...), one simple query per hop.")

    def __init__(self, lm: LanguageModel, retriever: Retriever, settings: ChainSettings | None = None):
        self.lm = lm
        self.retriever = retriever
        self.settings = settings or ChainSettings()

    async def answer(self, question: str) -> AgentAnswer:
        s = self.settings
        hops: list[Hop] = []
        for _ in range(s.max_iter):
            query = (await self.lm.run(FollowUpQuery, FollowUpInput(
                question=question, hops=[brief(h) for h in hops]))).query
            # passages an earlier hop already relied on are known: each hop reads k new ones
            used = {p.passage_id for h in hops for p in h.supporting_passages}
            hits = [h.passage for h in await self.retriever.search(query, k=s.k + len(used))]
            if not hops and query != question:
                # a first query narrower than the question (its first sub-question): the question's own
                # hits, which often hold later hops' passages too, interleaved with the query's
                whole = [h.passage for h in await self.retriever.search(question, k=s.k)]
                hits = unique_passages([p for pair in zip_longest(hits, whole) for p in pair if p is not None])
            passages = [p for p in hits if p.passage_id not in used][: s.k]
            texts = [PassageText.of(p) for p in passages]
            answer = (await self.lm.run(IntermediateAnswer, IntermediateInput(query=query, passages=texts))).answer
            supporting: list[int] = []
            if not found_nothing(answer) and passages:
                chosen = await self.lm.run(SupportedPassages, SupportInput(query=query, answer=answer,
                                                                           passages=texts))
                supporting = guard_indices([n - 1 for n in chosen.indices], len(passages))
            hops.append(Hop(query=query, answer=answer, passages=passages, supporting=supporting))
            if s.early_stop and (await self.lm.run(Sufficiency, SufficiencyInput(
                    question=question, hops=[brief(h) for h in hops]))).sufficient:
                break
        support = unique_passages([p for h in hops for p in h.supporting_passages])
        final = await self.lm.run(ChainAnswer, ChainAnswerInput(
            question=question, hops=[brief(h) for h in hops], passages=[PassageText.of(p) for p in support]))
        # the queries up to the hop the answer leads with name its bridges, which are not the answer
        lead = next((i for i, h in enumerate(hops) if h.found and final.answer.startswith(h.answer)), -1)
        known = [h.query for h in hops[:lead + 1]]
        return AgentAnswer(question=question, strategy="chain", answer=final.answer,
                           short_answer=await short_answer(self.lm, question, final.answer, known),
                           hops=hops, citations=cite(support, final.numbers() or all_of(support)), retrieved=merge_hops(hops))
