"""Values written in words and digits, measure questions, and candidates that are values, never labels."""

from __future__ import annotations

import pytest

from agents.answer.analysis import analyze
from agents.answer.candidates import Evidence, HopEvidence, asked_unit
from agents.answer.fusion import fuse
from agents.answer.values import parse_value, same_value, states, values_in
from agents.answer.verify import VerifyInput, contained
from agents.lm.nlp import TextToolkit
from retrieval.documents import PassageText


@pytest.fixture(scope="module")
def nlp():
    return TextToolkit()


@pytest.mark.parametrize("text, number, kind, shown", [
    ("is three hundred dollars.", 300, "money", "three hundred dollars"),
    ("a deductible of five (5) percent of Coverage A applies", 5, "percent", "five (5) percent of Coverage A"),
    ("within seventy-two (72) hours of discovery", 72 * 3600, "duration", "seventy-two (72) hours"),
    ("no later than forty-five days after", 45 * 86400, "duration", "forty-five days"),
    ("outboard motors of more than fifty horsepower", 50, "size", "fifty horsepower"),
    ("up to one thousand two hundred and fifty dollars ($1,250)", 1250, "money",
     "one thousand two hundred and fifty dollars ($1,250)"),
    ("ten percent (10%) of the limit", 10, "percent", "ten percent (10%)"),
    ("a thirty-day period", 30 * 86400, "duration", "thirty-day"),
    ("$2.5 million in total", 2_500_000, "money", "$2.5 million"),
    ("sixty consecutive days", 60 * 86400, "duration", "sixty consecutive days"),
    ("not less than thirty (30) days' written notice", 30 * 86400, "duration", "thirty (30) days'"),
])
def test_a_value_in_words_digits_or_both_is_one_value_shown_as_written(text, number, kind, shown):
    found = values_in(text)
    assert len(found) == 1
    assert (found[0].number, found[0].kind, found[0].text) == (number, kind, shown)


@pytest.mark.parametrize("text", ["under Section 4 of the form", "Paragraph 12 applies", "Bulletin B-2021-08",
                                  "Form HO 00 03", "the 2018-09 edition", "8.1 The insured must protect it.",
                                  "one of the insureds"])
def test_labels_codes_and_pronouns_are_not_values(text):
    assert [v for v in values_in(text) if v.kind != "year"] == []


def test_writings_of_one_value_compare_equal_and_others_do_not():
    assert states("The most we will pay is three hundred dollars.", "$300")
    assert not states("The most we will pay is two hundred fifty dollars.", "$300")
    assert states("within seventy-two (72) hours", "3 days")  # durations compare in seconds
    assert states("five (5) percent of Coverage A", "5%")
    assert not states("five (5) days", "5%")
    assert same_value(parse_value("$300"), parse_value("300"))  # a reader may drop the unit
    assert not states("anything", "Tressling")  # no value in the answer: not this check's to say


def test_verification_compares_normalised_values():
    passages = [PassageText(title="Form HX-3", text="The limit is three hundred dollars ($300) per loss.")]
    assert contained(VerifyInput(question="What is the limit?", short_answer="300 dollars", passages=passages)).supported
    assert not contained(VerifyInput(question="What is the limit?", short_answer="$250", passages=passages)).supported


@pytest.mark.parametrize("question, measure", [
    ("What is the floor on a windstorm deductible?", ""),
    ("For how many days can the premises be rented to others?", "duration"),
    ("Above what horsepower are outboard motors excluded?", "size"),
    ("How far in advance must notice of cancellation be given?", "duration"),
    ("What is the length limit on sailing vessels?", "size"),
    ("What is the time limit for a sworn proof of loss?", "duration"),
    ("What is the maximum number of roomers or boarders?", "count"),
    ("What is the limit on other structures as a percentage?", "percent"),
    ("Within how many hours must a theft be reported?", "duration"),
    ("At what age does the dependent coverage end?", ""),
    ("What is the special limit on money and bank notes?", "amount"),
    ("What is the maximum windstorm deductible now, as a percentage of the dwelling limit?", "percent"),
])
def test_measure_questions_however_phrased_ask_for_a_number(nlp, question, measure):
    analysis = analyze(nlp, question)
    assert (analysis.answer_type, analysis.measure) == ("number", measure)


def test_a_question_naming_a_unit_wants_values_in_it():
    assert asked_unit("How many days before expiration must notice be mailed?") == "day"
    assert asked_unit("Above what horsepower are motors excluded?") == "horsepower"
    assert asked_unit("How many people live there?") == ""


def test_a_title_a_paragraph_label_or_a_status_word_is_never_the_answer_to_a_measure_question(nlp):
    question = "What is the special limit on money, bank notes and precious metals?"
    text = ("SUPERSEDED. Paragraph B. 4.2 Special limits. The most we will pay for loss to money, bank notes, "
            "bullion, coins, medals and precious metals is three hundred dollars. See Bulletin B-2021-08.")
    ev = Evidence(question=question, answer=text, hops=[HopEvidence(query=question, answer=text, supporting=[0])],
                  passages=[PassageText(title="Texas Department of Insurance Bulletin B-2021-08", text=text)])
    fused = fuse(nlp, analyze(nlp, question), ev)
    assert fused.short_answer == "three hundred dollars" and fused.passages == [0]


def test_a_value_question_weighs_its_features_apart(nlp):
    question = "How many days of notice are required?"
    text = "Notice of nonrenewal is mailed at least thirty (30) days before expiration."
    ev = Evidence(question=question, answer=text, hops=[HopEvidence(query=question, answer=text, supporting=[0])],
                  passages=[PassageText(title="Form DP-7", text=text)])
    from agents.answer.candidates import gather

    cands = gather(nlp, analyze(nlp, question), ev)
    assert [c.text for c in cands] == ["thirty (30) days"]
    assert all(c.features[f"value_{k}"] == v for c in cands for k, v in c.features.items()
               if not k.startswith(("value_", "composed_")))
