"""The answer layer behind `ask`: abstention on the real two-hop corpus, verification with a chat model
(real client, server faked at the HTTP layer), and `raystorm ask` output."""

from __future__ import annotations

import json

import pytest

from agents.lm.models import ExtractiveModel
from agents.multihop.strategies import ask
from tests.support.multihop_helpers import COLLECTION, FakeLLM, chat_model, ingest_two_hop, run

OUT_OF_CORPUS = "What is the capital of Peru?"


def test_a_question_the_corpus_cannot_answer_is_refused_with_a_reason(two_hop_corpus):
    answer = run(ask(OUT_OF_CORPUS, "chain", ExtractiveModel(), two_hop_corpus.retriever))
    assert answer.abstained and answer.short_answer is None and answer.answer_support == []
    assert answer.abstain_reason == "no passage names a place for Peru (capital)"
    assert answer.confidence == 0.0 and answer.answer_type == "place"


def test_every_returned_short_answer_is_in_a_passage_it_cites(two_hop_corpus):
    from tests.support.multihop_helpers import two_hop_questions

    for case in two_hop_questions():
        answer = run(ask(case["question"], "chain", ExtractiveModel(), two_hop_corpus.retriever,
                         _settings(min_confidence=0.0)))
        assert answer.confidence is not None and 0.0 <= answer.confidence <= 1.0
        if not answer.abstained:
            assert answer.answer_support
            assert all(answer.short_answer.lower() in f"{c.title} {c.text}".lower() for c in answer.answer_support)


def _settings(min_confidence: float):
    from agents.answer.layer import AnswerSettings
    from agents.multihop.strategies import MultihopSettings

    return MultihopSettings(answer=AnswerSettings(min_confidence=min_confidence))


def _server(fused: dict, supported: bool) -> FakeLLM:
    return FakeLLM({
        "multihop_naive_answer": [json.dumps({"answer": "She was born in Tressling [1].", "citations": [1]})],
        "multihop_short_answer": [json.dumps({"short_answer": "Tressling"})],
        "answer_analyze": [json.dumps({"answer_type": "place", "entities": ["Oona Marchetti"]})],
        "answer_fuse": [json.dumps(fused)],
        "answer_verify": [json.dumps({"supported": supported, "passages": [0] if supported else []})],
    })


def test_a_short_answer_no_cited_passage_supports_is_not_returned(two_hop_corpus):
    server = _server({"short_answer": "Fenby Harbour", "confidence": 0.95, "passages": [0], "reason": "x"}, False)
    answer = run(ask("Where was Oona Marchetti born?", "naive", chat_model(server), two_hop_corpus.retriever))
    assert answer.abstained and answer.short_answer is None
    assert answer.abstain_reason == "no cited passage contains 'Fenby Harbour'"
    assert answer.guess == "Fenby Harbour" and answer.strategy_span == "Tressling"
    assert server.steps[-3:] == ["answer_analyze", "answer_fuse", "answer_verify"]


def test_a_verified_confident_answer_is_returned_with_its_passage(two_hop_corpus):
    server = _server({"short_answer": "Tressling", "confidence": 0.9, "passages": [0], "reason": "stated"}, True)
    answer = run(ask("Where was Oona Marchetti born?", "naive", chat_model(server), two_hop_corpus.retriever))
    assert not answer.abstained and answer.short_answer == "Tressling" and answer.confidence == 0.9
    assert len(answer.answer_support) == 1
    # the same answer under a stricter threshold is refused, and the reason names the threshold
    strict = run(ask("Where was Oona Marchetti born?", "naive", chat_model(server), two_hop_corpus.retriever,
                     _settings(min_confidence=0.95)))
    assert strict.abstained and "below 0.95" in strict.abstain_reason


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return str(ingest_two_hop(tmp_path_factory.mktemp("answer-ask-home")).data_dir)


def test_ask_json_reports_short_answer_confidence_and_abstention(home, capsys):
    from cluster.cli import main

    assert main(["ask", OUT_OF_CORPUS, "-c", COLLECTION, "--strategy", "chain", "--json", "--data-dir", home]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["abstained"] is True and out["short_answer"] is None and out["confidence"] == 0.0
    assert out["abstain_reason"].startswith("no passage names")
    assert main(["ask", OUT_OF_CORPUS, "-c", COLLECTION, "--strategy", "chain", "--data-dir", home]) == 0
    assert "Cannot answer: no passage names" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        main(["ask", OUT_OF_CORPUS, "-c", COLLECTION, "--min-confidence", "1.5", "--data-dir", home])
    assert refused.value.code == 2
    assert "'1.5' is not a confidence" in capsys.readouterr().err
