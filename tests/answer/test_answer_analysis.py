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
    # the asking clause decides, not a relative clause or an earlier sentence
    ("Memo CM-24-05 tells adjusters to check a bulletin; who signed that bulletin?", "person"),
    ("There is a country where the trains ran fast. Who mothered the person who ruled it?", "person"),
    ("Who was in charge of the state where Shringarpur is located?", "person"),
    ("What kind of plane dropped the bomb on Akinoshu Kenji's birthplace?", "free_text"),
    ("At the 2011 census, what was the population of the city where Kerry Saxby-Junna was born?", "number"),
    ("Chiang Kai-shek was president of the Republic of China, who died on which date?", "date"),
    ("Grace Krilanovich's novel was published by a house that is based where?", "place"),
    ("Name the mother of Edward Stafford, 4th Baron Stafford.", "person"),
    ("Which filing number does the bulletin in force for the flood waiting period carry?", "free_text"),
    ("Which endorsement amends the deductible and waiting period section of form FR-12?", "free_text"),
])
def test_answer_types(question, kind):
    assert analyze(NLP, question).answer_type == kind


@pytest.mark.parametrize("question, measure", [
    # durations, amounts and counts are numbers, with what they measure
    ("What is the current waiting period for the Flood Rider?", "duration"),
    ("How long must a policyholder wait after buying the flood rider before coverage begins?", "duration"),
    ("When does coverage under the Flood Rider begin after the rider is purchased?", "duration"),
    ("After how many hours of suspension is lost income paid under SB-5?", "duration"),
    ("What waiting period did the rule replaced by Bulletin 2022-11 impose?", "duration"),
    ("What is the ransomware sublimit of the CY-2 Cyber Add-On?", "amount"),
    ("What is the standard all-peril deductible for form HM-3?", "amount"),
    ("What windstorm and hail deductible applies in the coastal tier?", "amount"),
    ("How much is the deductible per flood event for form FR-12?", "amount"),
    ("What is the most payable for extortion demands under the Cyber Add-On?", "amount"),
    ("What is the monthly fee for the premium plan?", "amount"),
    ("The state where Henry Worrall died has how many congressional districts?", "count"),
    ("What is the population of the state where Dodge City Regional Airport is located?", "count"),
    ("What is the usual average snowfall in the city where the band was formed?", "size"),
])
def test_duration_amount_and_count_questions_are_numbers(question, measure):
    a = analyze(NLP, question)
    assert (a.answer_type, a.measure) == ("number", measure)


def test_what_the_question_asks_for_is_its_head_phrase():
    assert analyze(NLP, "Who is the spouse of the director of Jump for Glory?").head == "spouse"
    assert analyze(NLP, "What is the current waiting period for the Flood Rider?").head == "current waiting period"
    assert analyze(NLP, "When was Oona Marchetti born?").head == ""


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
