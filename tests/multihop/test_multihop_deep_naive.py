"""DeepSearch (breadth first, reflection) and NaiveRAG (one search) on the two-hop corpus."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agents.lm.extractive import ExtractiveModel
from agents.lm.nlp import TextToolkit
from agents.multihop.deep import DeepSearch, DeepSettings
from agents.multihop.deep_steps import MAX_SUB_QUERIES, SubQueries, SubQueriesInput
from agents.multihop.naive import NaiveRAG
from tests.support.multihop_helpers import FakeLLM, chat_model, run, two_hop_questions

QUESTIONS = two_hop_questions()


def names(passages) -> list[str]:
    return [Path(p.path).name for p in passages]


class CountingRetriever:
    """The real retriever, counting searches in flight: DeepSearch must issue a round's at once."""

    def __init__(self, inner):
        self.inner = inner
        self.in_flight = self.peak = self.calls = 0

    async def search(self, query, k=5, flt=None):
        self.calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0)  # let the other searches of the round start
            return await self.inner.search(query, k=k, flt=flt)
        finally:
            self.in_flight -= 1


@pytest.mark.parametrize("case", QUESTIONS, ids=[q["bridge"] for q in QUESTIONS])
def test_deep_search_reaches_the_second_passage(two_hop, case):
    retriever = CountingRetriever(two_hop.retriever)

    answer = run(DeepSearch(ExtractiveModel(), retriever).answer(case["question"]))

    assert case["hop2_doc"] in names(answer.retrieved[:5])
    assert case["hop2_doc"] not in two_hop.single_shot(case["question"], k=5)
    assert retriever.peak > 1  # the sub-queries of a round were searched concurrently
    assert answer.citations and answer.answer.count("[") >= 2


def test_sub_queries_are_at_most_four():
    out = SubQueries.extract(SubQueriesInput(
        question="How did Oona Marchetti, Caspar Lindqvist, Bram Hollis and the Works Committee shape the "
                 "bridges over the River Tamsin?"), TextToolkit())
    assert 1 < len(out.queries) <= MAX_SUB_QUERIES
    assert out.queries[0].startswith("How did Oona Marchetti")


def test_reflection_bounds_and_stop_are_kept_whatever_the_model_says(two_hop):
    server = FakeLLM({
        "multihop_deep_sub_queries": [json.dumps({"queries": [f"bridge {i}" for i in range(7)]})],
        "multihop_deep_relevance": [json.dumps({"relevant": True})],
        "multihop_deep_reflection": [json.dumps({"queries": ["Oona Marchetti", "Caspar Lindqvist", "Bram Hollis",
                                                             "Miller's Ferry", "bridge 0"]}),
                                     json.dumps({"queries": []})],
        "multihop_deep_report": [json.dumps({"answer": "Three engineers [1].", "citations": [1, 50]})],
        "multihop_short_answer": [json.dumps({"short_answer": ""})],
    })
    retriever = CountingRetriever(two_hop.retriever)

    answer = run(DeepSearch(chat_model(server), retriever, DeepSettings(max_iter=3)).answer("Who built the bridges?"))

    # 4 of the 7 sub-queries, then 3 of the 5 gap queries ("bridge 0" was asked), then the empty list stops
    assert [h.query for h in answer.hops] == ["bridge 0", "bridge 1", "bridge 2", "bridge 3",
                                              "Oona Marchetti", "Caspar Lindqvist", "Bram Hollis"]
    assert retriever.calls == 7 and server.steps.count("multihop_deep_reflection") == 2
    assert [c.n for c in answer.citations] == [1] and answer.short_answer is None


def test_naive_is_one_search_of_ten(two_hop):
    case = QUESTIONS[0]
    retriever = CountingRetriever(two_hop.retriever)

    answer = run(NaiveRAG(ExtractiveModel(), retriever).answer(case["question"]))

    assert retriever.calls == 1 and len(answer.hops) == 1
    top = [h.passage.passage_id for h in two_hop.corpus.search(case["question"], k=10)]
    assert [p.passage_id for p in answer.retrieved] == top
    assert all(c.text in {p.text for p in answer.retrieved} for c in answer.citations)
