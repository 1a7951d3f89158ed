"""Edition-aware answers over tests/data/editions (two editions of a form and a bulletin replacing one of its
sections; real embedders, embedded Qdrant, the evidence graph): the value in force, the value in a named
edition, the change between two, and value verification on the chat path (server faked at the HTTP layer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.answer.editions import edition_ask, label_keys, value_question
from agents.lm.models import ExtractiveModel
from agents.multihop.strategies import ask
from tests.support.multihop_helpers import FakeLLM, chat_model, run

EDITIONS = Path(__file__).resolve().parents[1] / "data" / "editions"


@pytest.fixture(scope="module")
def editions_corpus(tmp_path_factory):
    from retrieval.config import StoreSettings
    from retrieval.ingest import Ingestor
    from retrieval.search import AsyncCorpus, Corpus

    settings = StoreSettings.resolve(str(tmp_path_factory.mktemp("editions-home")))
    ingestor = Ingestor(settings)
    try:
        ingestor.ingest_paths(sorted(EDITIONS.glob("*.md")), "editions")
    finally:
        ingestor.store.close()
    retriever = AsyncCorpus(Corpus(settings, "editions"))
    yield retriever
    retriever.close()


@pytest.mark.parametrize("question, kind, editions", [
    ("What is the special limit on money under the 2019-10 edition of Form HX-3?", "named", ["2019-10"]),
    ("What is the limit according to Form HX-3 (2023-07 edition)?", "named", ["2023-07"]),
    ("What was the limit under the edition effective October 1, 2019?", "named", ["October 1, 2019"]),
    ("What is the special limit on money under Form HX-3 today?", "current", []),
    ("How did the limit change from the 2019-10 edition to the 2023-07 edition?", "change", ["2019-10", "2023-07"]),
    ("Between editions 2019-10 and 2023-07, how did the limit change?", "change", ["2019-10", "2023-07"]),
    ("How has the limit changed since edition 2019-10?", "change", ["2019-10"]),
    ("What waiting period did the rule replaced by Bulletin 2022-11 impose?", "prior", ["2022-11"]),
    ("Which rule did Bulletin 2022-11 replace?", "prior", ["2022-11"]),
    ("What limit applied in the edition before the 2023-07 edition?", "prior", ["2023-07"]),
    ("What is the deductible in Bulletin 2022-11?", "named", ["2022-11"]),
    ("How many days before the loss did Bulletin 2022-11 require notice?", "named", ["2022-11"]),
    ("Who founded the company in 1990?", "", []),
])
def test_the_question_grammar_names_the_edition_asked(question, kind, editions):
    asked = edition_ask(question)
    assert (asked.kind, asked.editions) == (kind, editions)


def test_edition_labels_match_how_documents_write_them():
    assert label_keys("October 1, 2019") == ["2019-10", "2019"]
    assert label_keys("10/2019")[0] == "2019-10"
    assert value_question("How did the limit on money change from the 2019-10 edition to the 2023-07 edition "
                          "of Form HX-3?") == "What is the limit on money of Form HX-3?"


def test_the_current_value_comes_from_the_document_in_force(editions_corpus):
    answer = run(ask("What is the special limit on money, bank notes and precious metals under Form HX-3 now?",
                     "chain", ExtractiveModel(), editions_corpus, _any_confidence()))
    assert not answer.abstained and answer.short_answer == "five hundred dollars ($500)"
    assert all("bulletin-2025-01" in c.path for c in answer.answer_support)
    # the value it replaced is shown as history, cited to the superseded edition
    assert answer.history.startswith("$300 (superseded: Homeowners Special Form (Form HX-3, edition 2023-07)")
    assert all("form-hx-3-2023-07" in c.path for c in answer.history_support)


def test_a_named_edition_is_answered_from_that_edition(editions_corpus):
    answer = run(ask("What is the special limit on money, bank notes and precious metals in the 2019-10 edition "
                     "of Form HX-3?", "chain", ExtractiveModel(), editions_corpus, _any_confidence()))
    assert answer.short_answer == "two hundred fifty dollars"
    assert all("2019-10" in c.path for c in answer.answer_support)
    horsepower = run(ask("Above what horsepower are outboard motors excluded in edition 2023-07 of Form HX-3?",
                         "chain", ExtractiveModel(), editions_corpus, _any_confidence()))
    assert horsepower.short_answer == "fifty (50) horsepower"


def test_a_change_between_editions_gives_both_values_each_cited_to_its_edition(editions_corpus):
    answer = run(ask("How did the special limit on money, bank notes and precious metals change from the 2019-10 "
                     "edition to the 2023-07 edition of Form HX-3?", "chain", ExtractiveModel(), editions_corpus,
                     _any_confidence()))
    assert answer.short_answer == "from two hundred fifty dollars (edition 2019-10) to $300 (edition 2023-07)"
    assert {Path(c.path).name for c in answer.answer_support} == {"form-hx-3-2019-10.md", "form-hx-3-2023-07.md"}


def test_an_edition_the_corpus_lacks_is_refused_as_not_stated(editions_corpus):
    answer = run(ask("What is the special limit on money in the 2011-01 edition of Form HX-3?", "chain",
                     ExtractiveModel(), editions_corpus, _any_confidence()))
    assert answer.abstained and "no passage names a number" in answer.abstain_reason
    assert answer.abstain_reason.startswith("no document found names '2011-01'")  # what is missing, said first


def test_a_chat_models_value_verifies_against_the_value_written_in_words(editions_corpus):
    """The model answers "$250" from a passage that says "two hundred fifty dollars": the layer verifies it by
    value, without asking the model to find "$250" in the text (its verification would say no)."""
    server = FakeLLM({
        "multihop_naive_answer": [json.dumps({"answer": "It is two hundred fifty dollars [1].", "citations": [1]})],
        "multihop_short_answer": [json.dumps({"short_answer": "$250"})],
        "answer_analyze": [json.dumps({"answer_type": "number", "measure": "amount", "entities": ["Form HX-3"]})],
        "answer_fuse": [json.dumps({"short_answer": "$250", "confidence": 0.9, "passages": [], "reason": "x"})],
        "answer_verify": [json.dumps({"supported": False, "passages": []})],
    })
    answer = run(ask("What is the special limit on money in the 2019-10 edition of Form HX-3?", "naive",
                     chat_model(server), editions_corpus))
    assert not answer.abstained and answer.short_answer == "$250"
    assert "answer_verify" not in server.steps
    assert all("two hundred fifty dollars" in c.text for c in answer.answer_support)
    # a value no passage of that edition states is still refused
    server.replies["answer_fuse"] = [json.dumps({"short_answer": "$300", "confidence": 0.9, "passages": [],
                                                 "reason": "x"})]
    wrong = run(ask("What is the special limit on money in the 2019-10 edition of Form HX-3?", "naive",
                    chat_model(server), editions_corpus))
    assert wrong.abstained and wrong.abstain_reason == "no cited passage contains '$300'"


def _any_confidence():
    from agents.answer.layer import AnswerSettings
    from agents.multihop.strategies import MultihopSettings

    return MultihopSettings(answer=AnswerSettings(min_confidence=0.0))
