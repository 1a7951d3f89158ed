"""A composed question taken apart into its nested relations, and the chain walking that plan."""

from __future__ import annotations

import pytest

from agents.lm.extractive import ExtractiveModel
from agents.lm.nlp import TextToolkit
from agents.multihop.chain import ChainOfRAG, ChainSettings
from agents.multihop.chain_steps import (
    ChainAnswer,
    ChainAnswerInput,
    FollowUpInput,
    FollowUpQuery,
    HopBrief,
    Sufficiency,
    SufficiencyInput,
)
from agents.multihop.decompose import SubQuestion, decompose, substitute
from agents.multihop.plan import PlanHop, step_candidates, walk_plan
from agents.multihop.trace import NO_INFORMATION
from agents.multihop.short_answer import answer_kinds
from retrieval.documents import PassageText
from tests.support.multihop_helpers import run, two_hop_questions

QUESTIONS = two_hop_questions()
KESTREL = PassageText(title="Kestrel Street Bridge",
                      text="The Kestrel Street Bridge was designed by the engineer Oona Marchetti, then a junior "
                           "member of the county surveyor's staff.")
MARCHETTI = PassageText(title="Oona Marchetti",
                        text="Oona Marchetti (1891–1967) came into the world in Tressling, a rope-making port on "
                             "the northern coast.")


def plan(question: str) -> list[tuple[str, str]]:
    return [(s.text, s.answer_type) for s in decompose(question)]


def test_a_relative_clause_is_the_first_hop_and_the_question_keeps_its_own_verb():
    assert plan(QUESTIONS[0]["question"]) == [("engineer who designed the Kestrel Street Bridge", "person"),
                                              ("In which city was #1 born?", "place")]
    assert plan(QUESTIONS[1]["question"]) == [("engineer who rebuilt the Heron Lane Swing Bridge", "person"),
                                              ("What instrument did #1 play?", "free_text")]


@pytest.mark.parametrize("question, expected", [
    ("Who is the spouse of the director of Kestrel Street Bridge?",  # a relation inside another's "of"
     [("director of Kestrel Street Bridge", "person"), ("Who is the spouse of #1?", "person")]),
    ("In which city was Kestrel Street Bridge's designer born?",  # a possessive on a name
     [("designer of Kestrel Street Bridge", "person"), ("In which city was #1 born?", "place")]),
    # clauses nest: the inner one ends where the outer one's verb begins
    ("Where did Caspar Lindqvist give lessons in the town where the engineer who designed the Kestrel Street "
     "Bridge was born?",
     [("engineer who designed the Kestrel Street Bridge", "person"), ("town where #1 was born", "place"),
      ("Where did Caspar Lindqvist give lessons in #2?", "place")]),
])
def test_nested_relations_innermost_first(question, expected):
    assert plan(question) == expected


def test_a_simple_question_is_a_plan_of_one_step():
    assert plan(QUESTIONS[2]["question"]) == [(QUESTIONS[2]["question"], "free_text")]
    assert plan("Who is the spouse of Oona Marchetti?") == [("Who is the spouse of Oona Marchetti?", "person")]
    assert plan("When did the village of Fenby flood?") == [("When did the village of Fenby flood?", "date")]


def test_substitution_waits_for_every_answer():
    assert substitute("In which city was #1 born?", ["Oona Marchetti"]) == "In which city was Oona Marchetti born?"
    assert substitute("Where is #2?", ["Oona Marchetti", None]) is None


def test_a_hop_answers_with_the_entity_of_its_sub_questions_type():
    nlp = TextToolkit()
    hop = HopBrief(query="engineer who designed the Kestrel Street Bridge", answer=KESTREL.text, supporting=[KESTREL])
    assert step_candidates(nlp, SubQuestion(text=hop.query, answer_type="person"), hop)[0] == "Oona Marchetti"
    born = HopBrief(query="In which city was Oona Marchetti born?", answer=MARCHETTI.text, supporting=[MARCHETTI])
    assert step_candidates(nlp, SubQuestion(text=born.query, answer_type="place"), born)[0] == "Tressling"


def test_the_follow_up_is_the_next_sub_question_with_the_bridge_put_in():
    nlp = TextToolkit()
    question = QUESTIONS[0]["question"]
    assert FollowUpQuery.extract(FollowUpInput(question=question), nlp).query == \
        "engineer who designed the Kestrel Street Bridge"
    hop = HopBrief(query="engineer who designed the Kestrel Street Bridge", answer=KESTREL.text, supporting=[KESTREL])
    assert FollowUpQuery.extract(FollowUpInput(question=question, hops=[hop]), nlp).query == \
        "In which city was Oona Marchetti born?"


def test_the_chain_does_not_judge_itself_done_before_the_plan_is_walked():
    nlp = TextToolkit()
    question = QUESTIONS[0]["question"]
    first = HopBrief(query="engineer who designed the Kestrel Street Bridge", answer=KESTREL.text,
                     supporting=[KESTREL, MARCHETTI])  # every question word covered, yet one relation is left
    assert not Sufficiency.extract(SufficiencyInput(question=question, hops=[first]), nlp).sufficient
    second = HopBrief(query="In which city was Oona Marchetti born?", answer=MARCHETTI.text, supporting=[MARCHETTI])
    assert Sufficiency.extract(SufficiencyInput(question=question, hops=[first, second]), nlp).sufficient


def test_the_plans_last_hop_concludes_the_answer():
    nlp = TextToolkit()
    question = QUESTIONS[0]["question"]
    hops = [HopBrief(query="engineer who designed the Kestrel Street Bridge", answer=KESTREL.text,
                     supporting=[KESTREL]),
            HopBrief(query="In which city was Oona Marchetti born?", answer=MARCHETTI.text, supporting=[MARCHETTI]),
            # a later hop that restates more of the question's words must not take over
            HopBrief(query="Kestrel Street Bridge engineer city born", answer=KESTREL.text, supporting=[KESTREL])]
    out = ChainAnswer.extract(ChainAnswerInput(question=question, hops=hops, passages=[KESTREL, MARCHETTI]), nlp)
    assert out.answer.startswith(MARCHETTI.text)


def test_short_answers_take_the_answer_layers_typing():
    assert answer_kinds("How many arches does the Abbey Mill Bridge have?") == ("quantity", "number")
    assert answer_kinds("In what year did Oona Marchetti retire?") == ("date",)
    assert answer_kinds("In which city was Oona Marchetti born?") == ("name",)  # a place: a name, not a code


def test_the_chain_walks_the_plan_over_the_two_hop_corpus(two_hop):
    case = QUESTIONS[0]
    answer = run(ChainOfRAG(ExtractiveModel(), two_hop.retriever, ChainSettings(early_stop=True))
                 .answer(case["question"]))
    assert [h.query for h in answer.hops] == ["engineer who designed the Kestrel Street Bridge",
                                              "In which city was Oona Marchetti born?"]
    assert answer.short_answer == case["answer"]


def test_another_name_of_the_asked_thing_is_not_its_answer():
    nlp = TextToolkit()
    for text in ["The Kestrel Street Bridge, also known as the Wren Crossing, was designed by Oona Marchetti.",
                 "The Kestrel Street Bridge (Wren Crossing) was designed by Oona Marchetti.",
                 "The Kestrel Street Bridge or Wren Crossing was designed by Oona Marchetti."]:
        hop = PlanHop(query="engineer who designed Kestrel Street Bridge", answer=text,
                      supporting=[PassageText(title="Kestrel Street Bridge", text=text)])
        assert step_candidates(nlp, SubQuestion(text=hop.query, answer_type="person"), hop) == ["Oona Marchetti"]


def test_a_number_step_takes_a_number_of_what_it_measures():
    nlp = TextToolkit()
    text = "The Abbey Mill Bridge, finished in 1889, has five arches and 312 paving stones."
    hop = PlanHop(query="How many paving stones does the Abbey Mill Bridge have?", answer=text,
                  supporting=[PassageText(title="Abbey Mill Bridge", text=text)])
    found = step_candidates(nlp, SubQuestion(text=hop.query, answer_type="number"), hop)
    assert found and found[0].startswith("312") and "1889" not in found  # a count, not a year


def test_a_step_that_finds_nothing_is_asked_again_with_the_previous_steps_next_candidate():
    nlp = TextToolkit()
    question = QUESTIONS[0]["question"]
    both = PassageText(title="Kestrel Street Bridge",
                       text="The Kestrel Street Bridge was designed by Bram Hollis and Oona Marchetti.")
    first = PlanHop(query="engineer who designed the Kestrel Street Bridge", answer=both.text, supporting=[both])
    walk = walk_plan(nlp, decompose(question), [first])
    assert walk.answers == ["Bram Hollis"] and walk.next_query == "In which city was Bram Hollis born?"
    nothing = PlanHop(query="In which city was Bram Hollis born?", answer=NO_INFORMATION)
    walk = walk_plan(nlp, decompose(question), [first, nothing])
    assert walk.next_query == "In which city was Oona Marchetti born?" and walk.concluding is None
    born = PlanHop(query="In which city was Oona Marchetti born?", answer=MARCHETTI.text, supporting=[MARCHETTI])
    walk = walk_plan(nlp, decompose(question), [first, nothing, born])
    assert walk.answers == ["Oona Marchetti", "Tressling"] and walk.concluding == 2 and walk.next_query is None
    # a hop off the plan (another query) ends the walk where it is
    assert walk_plan(nlp, decompose(question), [first, PlanHop(query="Bram Hollis", answer=MARCHETTI.text)]
                     ).concluding is None


def test_the_first_hop_of_a_plan_also_reads_the_whole_questions_hits(two_hop):
    # the whole question's words ("violin", "town band") reach a passage its first sub-question does not
    question = "Which violin did the engineer who designed the Tollgate Viaduct learn as a boy in the town band?"
    answer = run(ChainOfRAG(ExtractiveModel(), two_hop.retriever, ChainSettings(max_iter=1)).answer(question))
    k = ChainSettings().k
    narrow = [h.passage.passage_id for h in two_hop.corpus.search(answer.hops[0].query, k=k)]
    whole = [h.passage.passage_id for h in two_hop.corpus.search(question, k=k)]
    interleaved = list(dict.fromkeys(p for pair in zip(narrow, whole) for p in pair))[:k]
    assert answer.hops[0].query != question and interleaved != narrow
    assert [p.passage_id for p in answer.hops[0].passages] == interleaved
