"""TextToolkit: sentences, tokens, keywords, entities, similarity, MMR, clustering."""

from __future__ import annotations

import pytest

from agents.lm.nlp import TextToolkit

PASSAGE = (
    "Dr. Maria Okafor led the HM-204 trial in Kisumu. It enrolled 1,200 people, i.e. 3.5% of the district, "
    "over 14 days.[2] The U.S. Agency for International Development funded it. Results appeared in "
    "Bulletin 2022-11 on 12 March 2021. Was it safe? Yes!"
)


@pytest.fixture(scope="module")
def nlp() -> TextToolkit:
    return TextToolkit()


def test_sentences_are_exact_substrings_and_respect_abbreviations(nlp):
    got = nlp.sentences(PASSAGE)
    assert got == [
        "Dr. Maria Okafor led the HM-204 trial in Kisumu.",
        "It enrolled 1,200 people, i.e. 3.5% of the district, over 14 days.[2]",
        "The U.S. Agency for International Development funded it.",
        "Results appeared in Bulletin 2022-11 on 12 March 2021.",
        "Was it safe?",
        "Yes!",
    ]
    for (a, b), sentence in zip(nlp.sentence_spans(PASSAGE), got):
        assert PASSAGE[a:b] == sentence


@pytest.mark.parametrize("text", [
    "# Title\nFirst line of the paragraph\ncontinues here. Second one.\n\n- item one\n- item two. More",
    "  leading space. Trailing space.  ",
    'He said "Stop." Then left. (See Fig. 3.) Done',
    "No terminal punctuation at all",
    "",
    "e.g. starts lower. J. R. R. Tolkien wrote it. Values rose 2.5 times.",
])
def test_every_sentence_is_a_substring_at_its_span(nlp, text):
    spans = nlp.sentence_spans(text)
    assert [text[a:b] for a, b in spans] == nlp.sentences(text)
    assert all(s == s.strip() and s for s in nlp.sentences(text))
    assert spans == sorted(spans) and all(b <= c for (_, b), (c, _) in zip(spans, spans[1:]))


def test_headings_list_items_and_bold_labels_are_their_own_sentences(nlp):
    text = ("## Rule 1. Waiting period\n**Issued:** May 2, 2022\n**Applies to:** FR-12\n"
            "Vaccines work.\n\n- Dose one\n- Dose two")
    assert nlp.sentences(text) == ["## Rule 1. Waiting period", "**Issued:** May 2, 2022", "**Applies to:** FR-12",
                                   "Vaccines work.", "- Dose one", "- Dose two"]


def test_a_sentence_that_opens_in_bold_mid_paragraph_is_a_sentence_of_its_own(nlp):
    text = "**2021** — Bulletin 2021-04 takes effect.[2] **2024** — Endorsement FE-24 adds exceptions.[2] Done."
    assert nlp.sentences(text) == ["**2021** — Bulletin 2021-04 takes effect.[2]",
                                   "**2024** — Endorsement FE-24 adds exceptions.[2]", "Done."]


def test_words_and_content_tokens(nlp):
    assert nlp.words("HM-204 costs 3.5 dollars, don't 1,200") == ["HM-204", "costs", "3.5", "dollars", "don't", "1,200"]
    assert nlp.content_tokens("The vaccines are not working in long-term HM-204 trials") == [
        "vaccin", "work", "long", "term", "hm-204", "trial"]
    assert nlp.is_stopword("The") and not nlp.is_stopword("vaccine")
    assert nlp.stem("Studies") == "studi"


def test_keywords_weigh_terms_against_other_documents(nlp):
    docs = ["The vaccine trial in Kisumu enrolled children. The vaccine was safe.",
            "The weather in Kisumu was warm.", "Kisumu is a city on Lake Victoria."]
    assert nlp.keywords(docs[0], k=2) == ["vaccine", "trial"]
    top = nlp.keywords(docs[0], k=3, background=docs[1:])
    assert top[0] == "vaccine" and "Kisumu" not in top  # common to every document


def test_keyphrases_are_substrings(nlp):
    text = "Maria Okafor led the malaria vaccine trial. The malaria vaccine trial was a success."
    phrases = nlp.keyphrases(text, k=3)
    assert phrases == ["Maria Okafor led", "malaria vaccine trial", "success"]
    assert all(p in text for p in phrases)


def test_entities_find_names_references_codes_dates_quantities(nlp):
    found = {(e.kind, e.text) for e in nlp.entities(PASSAGE)}
    assert {("name", "Maria Okafor"), ("code", "HM-204"), ("name", "Kisumu"), ("quantity", "1,200 people"),
            ("quantity", "3.5%"), ("quantity", "14 days"), ("reference", "Bulletin 2022-11"),
            ("date", "12 March 2021"), ("name", "Agency for International Development")} <= found
    for e in nlp.entities(PASSAGE):
        assert PASSAGE[e.start:e.end] == e.text
    assert not any(e.text in ("The", "It", "Results", "Was", "Yes") for e in nlp.entities(PASSAGE))


def test_years_and_times_are_dates_not_quantities(nlp):
    text = "A review from 2012 through 2021 looked at claims. Cover starts at 12:01 a.m. on day 15."
    assert [(e.kind, e.text) for e in nlp.entities(text)] == [
        ("date", "2012"), ("date", "2021"), ("date", "12:01 a.m."), ("number", "15")]


def test_entity_kinds_can_be_chosen(nlp):
    assert [e.text for e in nlp.entities(PASSAGE, kinds=["date"])] == ["2022-11", "12 March 2021"]


def test_novel_entities_are_bridge_candidates(nlp):
    question = "Who led the HM-204 trial in Kisumu?"
    novel = [e.text for e in nlp.novel_entities(PASSAGE, known=question)]
    assert "Maria Okafor" in novel and "Bulletin 2022-11" in novel
    assert "HM-204" not in novel and "Kisumu" not in novel
    assert len(novel) == len(set(novel))


def test_lexical_similarity(nlp):
    assert nlp.lexical_similarity("vaccine trials in Kisumu", "the Kisumu vaccine trial") == pytest.approx(1.0)
    assert nlp.lexical_similarity("vaccine trial", "weather report") == 0.0
    scores = nlp.similarities("who led the vaccine trial", ["Okafor led the vaccine trial.", "It rained."])
    assert scores[0] > scores[1] == 0.0


def test_mmr_prefers_relevant_and_diverse(nlp):
    candidates = [
        "The vaccine trial enrolled children in Kisumu.",
        "The vaccine trial enrolled children in Kisumu district.",  # near duplicate of 0
        "Children in the vaccine trial were healthy.",
        "The weather was warm.",
    ]
    query = "vaccine trial children Kisumu"
    assert nlp.mmr_select(query, candidates, k=2, lambda_=1.0) == [0, 1]  # relevance alone
    assert nlp.mmr_select(query, candidates, k=2, lambda_=0.7) == [0, 2]  # the duplicate gives way
    assert nlp.mmr_select(["weather"], candidates, k=1) == [3]  # content tokens as the query
    assert nlp.mmr_select(query, [], k=3) == []
    with pytest.raises(ValueError):
        nlp.mmr_select(query, candidates, k=1, lambda_=1.5)


def test_dense_embeddings_are_used_when_injected():
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return [[1.0, 0.0] if "cat" in t else [0.0, 1.0] for t in texts]

    nlp = TextToolkit(embed=embed)
    assert nlp.similarities("a cat", ["kitten cat", "dog"]) == [1.0, 0.0]
    assert nlp.mmr_select([1.0, 0.0], ["dog", "cat"], k=1) == [1]
    nlp.similarities("a cat", ["kitten cat"])
    assert calls == [["a cat", "kitten cat", "dog"], ["cat"]]  # cached texts are not embedded again


def test_cluster_groups_similar_texts_deterministically(nlp):
    texts = ["vaccine trial dose", "vaccine dose schedule", "rainfall weather season", "weather rainfall forecast"]
    assert nlp.cluster(texts, 2) == [[0, 1], [2, 3]]
    assert nlp.cluster(texts, 2) == nlp.cluster(texts, 2)
    assert nlp.cluster([], 3) == []
