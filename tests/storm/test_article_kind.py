"""The article kind an outline follows: what the title and the evidence say it is, and the usual
sections of that kind claiming the evidence close to them."""

from __future__ import annotations

import pytest

from agents.storm.headings import plan_headings
from agents.storm.outline_params import OutlineParams


def test_evidence_told_of_a_she_makes_the_kind_person(nlp):
    from agents.storm.lexicon import article_kind, person_share

    films = ["She starred in the film as the lead and later directed the sequel.",
             "Her role in the film earned critical praise and a nomination.",
             "The film was released in cinemas worldwide and grossed millions."]
    assert person_share(films) == pytest.approx(2 / 3)
    assert person_share(["The film was released in cinemas.", "Another film followed."]) == 0.0
    assert article_kind("Ann Lee", films, nlp, 1.0, person_weight=0.0).name == "film"
    assert article_kind("Ann Lee", films, nlp, 1.0, person_weight=1.0).name == "person"
    # without "he" or "she" the weight changes nothing
    plain = [t.replace("She", "The actress").replace("Her", "The") for t in films]
    assert article_kind("Ann Lee", plain, nlp, 1.0, person_weight=1.0).name == "film"


def test_a_title_that_names_its_class_decides_the_kind(nlp):
    """"Takeoff (rapper)" is a person whatever the evidence says of albums; a disambiguator that only
    places the name ("Liga 1 (Indonesia)") leaves the kind to the evidence."""
    from agents.storm.lexicon import article_kind, kind_words

    assert kind_words("Takeoff (rapper)") == "rapper"
    assert kind_words("Sardar (2022 film)") == "2022 film"
    assert kind_words("Liga 1 (Indonesia)") == "Liga 1 (Indonesia)"
    assert kind_words("Storm Eunice") == "Storm Eunice"
    songs = ["The album was recorded in the studio and released with three singles.",
             "The single debuted at number one on the chart and was certified platinum.",
             "The record's songs were produced by a producer from Atlanta."]
    assert article_kind("Takeoff", songs, nlp, 0.75).name == "album"
    assert article_kind("Takeoff (rapper)", songs, nlp, 0.75).name == "person"
    assert article_kind("Miracle (album)", songs, nlp, 0.75).name == "album"


def test_a_usual_section_of_the_kind_claims_the_sentences_close_to_it(nlp):
    """Sentences on a footballer's clubs that went to "Career" still make "Club career" a heading when
    `kind_claim` lets the kind's sections take the sentences close to them."""
    club = ["He signed a contract with the club and made his debut in the league in August.",
            "He joined the club on loan for a season and scored goals in the cup.",
            "The club signed him on a four-year contract after his loan spell.",
            "He made his debut for the club as a substitute and scored on his first start."]
    life = ["He was born in the capital and grew up with his parents and brothers.",
            "He married his partner in a private ceremony and they have three children.",
            "He died in the earthquake; his funeral was held in his home town."]

    def headings(claim: float) -> list[str]:
        plan = plan_headings("Kofi Mensah (footballer)", [*club, *life], nlp,
                             params=OutlineParams(kind_claim=claim, heading_filter=(), min_support=2,
                                                  min_share=0.0, sentences_per_heading=1,
                                                  writable_fit=0.0))  # "He ..." stands alone nowhere
        assert plan.kind == "person"
        return [h.heading for h in plan.headings]

    assert "Club career" in headings(0.3)
    assert set(headings(0.3)) - set(headings(1.0))
