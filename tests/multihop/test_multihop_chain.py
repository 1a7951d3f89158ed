"""Chain-of-RAG on a corpus of our own where every answer needs two hops."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agents.lm.extractive import ExtractiveModel
from agents.multihop.chain import ChainOfRAG, ChainSettings
from agents.multihop.chain_steps import (
    ChainAnswer,
    ChainAnswerInput,
    FollowUpInput,
    FollowUpQuery,
    HopBrief,
    IntermediateAnswer,
    IntermediateInput,
    guard_indices,
)
from agents.lm.nlp import TextToolkit
from agents.multihop.trace import NO_INFORMATION
from retrieval.documents import PassageText
from tests.support.multihop_helpers import FakeLLM, chat_model, run, two_hop_questions

QUESTIONS = two_hop_questions()


def names(passages) -> list[str]:
    return [Path(p.path).name for p in passages]


@pytest.mark.parametrize("case", QUESTIONS, ids=[q["bridge"] for q in QUESTIONS])
def test_the_chain_finds_the_second_passage_single_shot_does_not(two_hop, case):
    assert case["hop2_doc"] not in two_hop.single_shot(case["question"], k=5)

    answer = run(ChainOfRAG(ExtractiveModel(), two_hop.retriever).answer(case["question"]))

    assert names(answer.retrieved[:5]).count(case["hop2_doc"]) >= 1
    assert case["hop1_doc"] in names(answer.retrieved[:2])
    # the second hop asks for the bridge entity the first hop's passage named
    assert case["bridge"].split("/")[0].lower() in answer.hops[1].query.lower()
    assert case["hop2_doc"] in names(answer.hops[1].supporting_passages)
    assert len(answer.hops) == ChainSettings().max_iter


def test_the_answer_cites_the_two_passages_with_their_line_ranges(two_hop):
    case = QUESTIONS[0]  # born in Tressling, says the second passage
    answer = run(ChainOfRAG(ExtractiveModel(), two_hop.retriever).answer(case["question"]))

    assert case["answer"] in answer.answer
    assert {c.source.rsplit("/", 1)[-1] for c in answer.citations} >= {"kestrel-street", "oona-marchetti"}
    # the [n] in the answer are the citations' own numbers, each after a sentence of that passage
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer.answer)} == {c.n for c in answer.citations}
    for sentence, n in re.findall(r"(.+?) \[(\d+)\]\s*", answer.answer):
        assert sentence.strip() in next(c.text for c in answer.citations if c.n == int(n))
    path_of = {p.text: p.path for p in answer.retrieved}
    for c in answer.citations:  # the line range holds the cited text
        lines = Path(path_of[c.text]).read_text(encoding="utf-8").splitlines()[c.line_start - 1:c.line_end]
        assert c.text[:40] in " ".join(lines)


def test_early_stop_ends_the_chain_once_an_answer_is_in_hand(two_hop):
    case = QUESTIONS[2]  # the stone's supplier: the register names it under the contract number
    chain = ChainOfRAG(ExtractiveModel(), two_hop.retriever, ChainSettings(early_stop=True))

    answer = run(chain.answer(case["question"]))

    assert len(answer.hops) == 2
    assert case["hop2_doc"] in names(answer.retrieved[:5])
    # the answer quotes the register entry of the contract, whose passage names the firm
    assert "W-1887/4" in answer.answer and any(case["answer"] in c.text for c in answer.citations)


def test_follow_up_carries_the_bridge_not_in_the_question():
    nlp = TextToolkit()
    hop = HopBrief(query="Who rebuilt the Heron Lane Swing Bridge?",
                   answer="It was rebuilt in 1958 under the engineer Caspar Lindqvist, who kept the old pier.",
                   supporting=[PassageText(title="Heron Lane Swing Bridge",
                                           text="It was rebuilt in 1958 under the engineer Caspar Lindqvist, "
                                                "who kept the old pier.")])
    out = FollowUpQuery.extract(FollowUpInput(question="What instrument did the engineer who rebuilt the "
                                                       "Heron Lane Swing Bridge play?", hops=[hop]), nlp)
    assert "Caspar Lindqvist" in out.query
    assert "instrument" in out.query and "Heron" not in out.query
    first = FollowUpQuery.extract(FollowUpInput(question="Who rebuilt it?"), nlp)
    assert first.query == "Who rebuilt it?"


def test_a_question_through_a_document_follows_the_document_that_states_the_answer():
    # "the circular that ..." asks about the circular itself: its own name is the bridge, not the older
    # circular its text mentions
    nlp = TextToolkit()
    stating = PassageText(title="Circular 7/2019: Harbour Dues for Small Craft",
                          text="Harbour dues for craft under twelve metres are 40 crowns a night. This replaces "
                               "the rate set by Circular 3/2014 of the Port Authority.")
    hop = HopBrief(query="harbour dues small craft", answer="Harbour dues for craft under twelve metres are 40 "
                   "crowns a night.", supporting=[stating])
    out = FollowUpQuery.extract(FollowUpInput(question="Who issued the circular that set the current harbour "
                                                       "dues for small craft?", hops=[hop]), nlp)
    assert out.query.startswith("Circular 7/2019") and "3/2014" not in out.query
    # a title that is no circular: the bridge is found in the passage as before
    other = hop.model_copy(update={"supporting": [stating.model_copy(update={"title": "Port tariff notes"})]})
    again = FollowUpQuery.extract(FollowUpInput(question="Who issued the circular that set the current harbour "
                                                         "dues for small craft?", hops=[other]), nlp)
    assert not again.query.startswith("Circular 7/2019")


def test_nothing_found_is_said_exactly():
    out = IntermediateAnswer.extract(IntermediateInput(
        query="Which firm supplied the stone?",
        passages=[PassageText(title="Sourdough", text="Knead the dough and let it proof overnight.")]),
        TextToolkit())
    assert out.answer == NO_INFORMATION


def test_supporting_indices_are_bounds_checked():
    assert guard_indices([7, -1, 0, 2, 0, 99, 1], 3) == [0, 2, 1]
    assert guard_indices([], 3) == [] and guard_indices([0], 0) == []


def test_a_model_naming_passages_that_do_not_exist_cannot_break_the_chain(two_hop):
    # a chat model (real client, server faked at the HTTP layer) that answers with indices out of range
    server = FakeLLM({
        "multihop_chain_follow_up": [json.dumps({"query": "Kestrel Street Bridge engineer"}),
                                     json.dumps({"query": "Oona Marchetti birthplace"})],
        "multihop_chain_intermediate_answer": [json.dumps({"answer": "Oona Marchetti designed it."}),
                                               json.dumps({"answer": "She was born in Tressling."})],
        "multihop_chain_supported_passages": [json.dumps({"indices": [1, 0, -1, 99, 1]}),
                                              json.dumps({"indices": [-3, 42]})],
        "multihop_chain_answer": [json.dumps({"answer": "Tressling [1]", "citations": [1, 7, -2]})],
        "multihop_short_answer": [json.dumps({"short_answer": "Tressling"})],
    })
    model = chat_model(server)
    chain = ChainOfRAG(model, two_hop.retriever, ChainSettings(max_iter=2))

    answer = run(chain.answer(QUESTIONS[0]["question"]))

    assert answer.hops[0].supporting == [0]  # passage numbers count from 1: 0, -1, 99 and the repeated 1 dropped
    assert answer.hops[1].supporting == []
    assert [c.n for c in answer.citations] == [1] and answer.short_answer == "Tressling"
    assert answer.answer == "Tressling [1]"
    assert server.steps.count("multihop_chain_follow_up") == 2
    assert sum(r.prompt_tokens for r in model.ledger.records) == 50 * len(server.steps)


def test_the_offline_final_answer_never_states_a_hop_it_cannot_cite():
    """A hop in a chat model's own words cites the passages it relied on; one with none is left out."""
    rider = PassageText(title="Bulletin 2022-11", text="The flood rider's waiting period is 14 days from purchase.")
    other = PassageText(title="Profiles", text="Delphine Varga is a senior actuary.")
    paraphrase = HopBrief(query="flood rider waiting period", answer="Two weeks after it is bought.",
                          supporting=[rider])
    unsupported = HopBrief(query="who wrote it", answer="Somebody at the head office.", supporting=[])
    question = "How long is the waiting period of the flood rider?"
    out = ChainAnswer.extract(ChainAnswerInput(question=question, hops=[paraphrase, unsupported],
                                               passages=[other, rider]), TextToolkit())
    assert out.answer == "Two weeks after it is bought. [2]" and out.citations == [2]
    alone = ChainAnswer.extract(ChainAnswerInput(question=question, hops=[unsupported], passages=[other]),
                                TextToolkit())
    assert alone.answer == NO_INFORMATION and alone.citations == []
