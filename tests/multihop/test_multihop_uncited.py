"""An answer a chat model wrote without citing its passages is never shown as a cited answer:
repaired once, then replaced by the step's extractive answer (server faked at the HTTP layer)."""

from __future__ import annotations

import json

from agents.lm.grounding import cited_numbers
from agents.multihop.naive import NaiveRAG
from tests.support.multihop_helpers import FakeLLM, chat_model, run, two_hop_questions

QUESTION = two_hop_questions()[0]["question"]


def test_an_uncited_naive_answer_is_replaced_by_a_cited_one(two_hop):
    uncited = json.dumps({"answer": "14 days from the date of purchase, January 2023"})
    server = FakeLLM({"multihop_naive_answer": [uncited],
                      "multihop_short_answer": [json.dumps({"short_answer": ""})]})
    model = chat_model(server)

    answer = run(NaiveRAG(model, two_hop.retriever).answer(QUESTION))

    assert server.steps[:2] == ["multihop_naive_answer", "multihop_naive_answer"]  # the reply, one repair
    assert answer.answer != "14 days from the date of purchase, January 2023"
    assert answer.citations, "an answer with no sources"
    numbers = {c.n for c in answer.citations}
    assert set(cited_numbers(answer.answer)) <= numbers  # every [n] in the text resolves
    retrieved = {p.text for p in answer.retrieved}
    assert all(c.text in retrieved for c in answer.citations)
    record = next(r for r in model.ledger.records if r.step == "multihop.naive.answer")
    assert record.fallback == "extractive" and "cites no source" in record.fallback_reason


def test_citations_written_only_in_the_text_are_the_answers_sources(two_hop):
    server = FakeLLM({"multihop_naive_answer": [json.dumps({"answer": "Oona Marchetti designed it [2]."})],
                      "multihop_short_answer": [json.dumps({"short_answer": "Oona Marchetti"})]})
    model = chat_model(server)

    answer = run(NaiveRAG(model, two_hop.retriever).answer(QUESTION))

    assert [c.n for c in answer.citations] == [2] and answer.hops[0].supporting == [1]
    assert answer.citations[0].text == answer.retrieved[1].text
    assert model.ledger.fallback_summary() == "0 of 2 calls fell back to the extractive model"
