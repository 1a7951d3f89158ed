"""Question analysis: the answer type and the entities (and options) the question names."""

from __future__ import annotations

import pytest

from agents.answer.analysis import analyze
from agents.lm.nlp import TextToolkit

NLP = TextToolkit()


@pytest.mark.parametrize("question, kind", [
    ("When was Oona Marchetti born?", "date"),
    ("In what year did the Admiral Twin open?", "date"),
    ("How many lock gates does the harbour have?", "number"),
    ("Who designed the Kestrel Street Bridge?", "person"),
    ("Which author wrote the memoir about rope-making?", "person"),
    ("In which city was the engineer who designed the Kestrel Street Bridge born?", "place"),
    ("Where is the Philbrook Museum?", "place"),
    ("Are Medici and Senet both board games?", "yes_no"),
    ("Which band was formed first, The Exies or Circus Diablo?", "comparison"),
    ("What instrument did the engineer who rebuilt the Heron Lane Swing Bridge play?", "free_text"),
    ("List the bridges Oona Marchetti designed.", "list"),
])
def test_answer_types(question, kind):
    assert analyze(NLP, question).answer_type == kind


def test_the_entities_and_the_two_options_of_a_comparison():
    a = analyze(NLP, "Which band was formed first, The Exies or Circus Diablo?")
    assert a.options == ["Exies", "Circus Diablo"]
    b = analyze(NLP, "Which came first the forming of The Dandy Warhols or the birth of Robert Young?")
    assert b.options == ["Dandy Warhols", "Robert Young"]
    c = analyze(NLP, "Are King Vidor and Géza von Cziffra both American directors?")
    assert c.answer_type == "yes_no" and c.options == []
    assert {"King Vidor", "Géza von Cziffra"} <= set(c.entities)
    # the question word is not an entity; what it asks for is in its own words
    d = analyze(NLP, "When was Oona Marchetti born?")
    assert d.entities == ["Oona Marchetti"] and d.asks_for == "born"


def test_or_without_two_named_things_is_no_comparison():
    a = analyze(NLP, "Who wrote the book or the play about the bridge?")
    assert a.answer_type == "person" and a.options == []
