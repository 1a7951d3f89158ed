"""Reading which entity a sentence states as the asked relation's value: relation words and their passage
forms, life-span parentheses, numbers that only repeat the question's unit, ranks, aliases, early years; and
the plan walk and the candidates that read them. All on the real text toolkit over sentences written here."""

from __future__ import annotations

import re

from agents.answer.analysis import analyze, fits_measure
from agents.answer.candidates import Evidence, HopEvidence, gather
from agents.answer.relation import anchored, answer_entities, relation_terms, sentence_words, transparent
from agents.lm.nlp import TextToolkit
from agents.multihop import evidence
from agents.multihop.decompose import SubQuestion, decompose
from agents.multihop.plan import PlanHop, step_candidates
from retrieval.documents import PassageText

NLP = TextToolkit()


def _anchoring(sentence: str, relation_of: str, entity: str) -> float:
    words = sentence_words(NLP, sentence)
    start = sentence.index(entity)
    skip = transparent(NLP, sentence, evidence.terms(NLP, relation_of))
    return anchored(words, start, start + len(entity), relation_terms(NLP, relation_of), skip)


def test_a_relation_word_stands_for_the_words_passages_state_it_with():
    assert {"spous", "marri"} <= relation_terms(NLP, "Who is the spouse of #1?")
    assert NLP.stem("born") in relation_terms(NLP, "city where Oona Marchetti was born")
    # the names the question gives are no relation words
    assert not relation_terms(NLP, "Who is the spouse of #1?") & evidence.terms(NLP, "Oona Marchetti")


def test_the_value_right_after_the_relation_word_is_anchored_to_it():
    s = "Tomas Brell married Ilse Varga in 1931, two years after meeting Anna Kohl in Tressling."
    assert _anchoring(s, "Who is the spouse of #1?", "Ilse Varga") > _anchoring(s, "Who is the spouse of #1?",
                                                                                    "Anna Kohl")
    # function words and the question's own words between do not push the value away
    s2 = "The waiting period for the Flood Rider is 14 days from the date of purchase."
    assert _anchoring(s2, "What is the current waiting period for the Flood Rider?", "14 days") == 0.5
    # nor do the numbers of a date: "born 6 March 1982 in Windhoek"
    s3 = "Gisvi (born 6 March 1982 in Windhoek, South-West Africa) is a retired footballer."
    assert _anchoring(s3, "city of birth of Gisvi", "Windhoek") > _anchoring(s3, "city of birth of Gisvi",
                                                                             "South-West Africa")


def _hop(query: str, text: str, title: str = "Passage") -> PlanHop:
    return PlanHop(query=query, answer=text, supporting=[PassageText(title=title, text=text)])


def test_a_life_span_parenthesis_says_where_one_was_born_and_where_one_died():
    text = "Karel Brenner (15 March 1834, Wrocław – 5 April 1868, Prague) was a painter."
    died = SubQuestion(text="city where Karel Brenner died", answer_type="place")
    born = SubQuestion(text="city where Karel Brenner was born", answer_type="place")
    assert step_candidates(NLP, died, _hop(died.text, text))[0] == "Prague"
    assert step_candidates(NLP, born, _hop(born.text, text))[0] == "Wrocław"


def test_the_step_answer_is_the_entity_the_relation_names_not_the_nearest_one():
    text = ("The Jewel of the Nile is a 1985 film directed by Lewis Teague and produced by one of its stars, "
            "Michael Douglas.")
    producer = SubQuestion(text="producer of The Jewel of the Nile", answer_type="person")
    director = SubQuestion(text="director of The Jewel of the Nile", answer_type="person")
    assert step_candidates(NLP, producer, _hop(producer.text, text))[0] == "Michael Douglas"
    assert step_candidates(NLP, director, _hop(director.text, text))[0] == "Lewis Teague"


def test_a_number_whose_unit_repeats_the_question_is_the_bare_number_and_a_rank_is_no_count():
    q = "How many congressional districts does Kansas have?"
    s = "Kansas is currently divided into 4 congressional districts."
    assert [e.text for e in answer_entities(NLP, s, ("quantity", "number"), evidence.terms(NLP, q))] == ["4"]
    ranked = answer_entities(NLP, "Population Ranked 35th Total 2,913,123", ("quantity", "number"), set())
    assert [e.text for e in ranked] == ["35th", "2,913,123"]
    assert not fits_measure("35th", "count") and fits_measure("2,913,123", "count")


def _candidates(question: str, text: str, title: str = "Passage") -> set[str]:
    passage = PassageText(title=title, text=text)
    ev = Evidence(question=question, answer=text, passages=[passage],
                  hops=[HopEvidence(query=question, answer=text, supporting=[0])])
    return {c.text for c in gather(NLP, analyze(NLP, question), ev)}


def test_another_name_of_what_the_question_names_is_no_candidate():
    texts = _candidates("Where are Gila monsters found?",
                        "The Gila monster (Heloderma suspectum, Hee-la) is a lizard native to the state of Sonora.")
    assert "Sonora" in texts and not texts & {"Heloderma", "Hee-la"}


def test_an_early_year_written_bare_is_a_date_candidate():
    texts = _candidates("When was the astronomical clock of Prague built?",
                        "The oldest part of the clock dates back to 1410, when it was made by a clockmaker.")
    assert "1410" in texts


def test_a_subject_clause_ends_before_the_questions_own_verb():
    steps = [s.text for s in decompose(
        "When did the country where the city where Steven Blankaart was born is located refuse to surrender Namibia?")]
    assert steps == ["city where Steven Blankaart was born", "country where #1 is located",
                     "When did #2 refuse to surrender Namibia?"]


def test_a_composed_question_weighs_its_features_apart():
    q = "Who is the spouse of the director of Jump for Glory?"
    text = "Raoul Walsh directed Jump for Glory; Walsh married Miriam Cooper in 1916."
    ev = Evidence(question=q, answer=text, passages=[PassageText(title="Jump for Glory", text=text)],
                  hops=[HopEvidence(query="director of Jump for Glory", answer=text, supporting=[0])])
    cands = gather(NLP, analyze(NLP, q), ev)
    assert cands and all(c.features[f"composed_{k}"] == v for c in cands for k, v in c.features.items()
                         if not k.startswith(("composed_", "value_")))
    assert all(v == 0.0 for c in cands for k, v in c.features.items() if k.startswith("value_"))  # a name
    one_step = "Who did Walsh marry?"
    single = gather(NLP, analyze(NLP, one_step), ev.model_copy(update={"question": one_step}))
    assert single and all(v == 0.0 for c in single for k, v in c.features.items() if re.match("composed_", k))
