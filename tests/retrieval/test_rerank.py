"""The second-stage reranker: its features, its order, and search with it on and off (embedded Qdrant)."""

from __future__ import annotations

import pytest

from retrieval.documents import Passage
from retrieval.rerank import FEATURES, Reranker, RerankSettings, features, order, words
from retrieval.search import SearchSettings

DOCS = {
    # The first stage likes "prize.md" for the query below (it repeats the query's words); the passage
    # about the person asked about is the one whose title names her.
    "prize.md": """---
title: Physics prizes
---

Prize winners by year: the physics prize went to Marie Curie, and the chemistry prize too. Each prize
winner is listed with the prize won, and every prize of every year is in the list of prize winners.
""",
    "curie.md": """---
title: Marie Curie
---

She was a Polish physicist who moved to Paris to study and discovered polonium and radium.
""",
    "bread.md": """---
title: Sourdough
---

A sourdough starter of flour and water ferments with wild yeast before the dough is baked.
""",
}
QUERY = "Which prize did Marie Curie win?"


def only(**weights) -> RerankSettings:
    """Settings that weigh only the named features."""
    return RerankSettings(**{**{f: 0.0 for f in FEATURES}, **weights})


def passage(title: str, text: str) -> Passage:
    return Passage(passage_id=title, doc_id=title, path=f"{title}.md", title=title, line_start=1, line_end=1,
                   text=text, sha256="0")


def test_words_drop_stopwords_and_plural_s():
    assert words("The bulletins were filed by Harborline's staff") == ["bulletin", "filed", "harborline",
                                                                      "staff"]


def test_each_feature_tells_the_right_passage_apart(dense_embedder):
    ps = [passage("Physics prizes", "Winners are listed by year, with the year of each award."),
          passage("Marie Curie", "The scientist won the Nobel prize in 1903. Later she moved to Paris.")]
    x = features(QUERY, ps, dense_embedder.embed)
    assert x.shape == (2, len(FEATURES))
    col = {f: x[:, i] for i, f in enumerate(FEATURES)}
    assert list(col["first"]) == [1.0, 0.5]
    assert col["title"][1] > col["title"][0]  # "Marie Curie" is the title of the second
    assert col["terms"][1] > col["terms"][0]  # it also holds "prize" and "won"
    assert col["sentence"][1] > 0.3


def test_reranking_changes_the_order_on_a_crafted_case(dense_embedder):
    ps = [passage("Physics prizes", "Prize winners are listed by year, two prizes a year."),
          passage("Sourdough", "A starter of flour and water ferments with wild yeast."),
          passage("Marie Curie", "The scientist was born in Warsaw in 1867. Later she moved to Paris.")]
    assert Reranker(dense_embedder.embed, only(first=1.0)).rerank(QUERY, ps) == [0, 1, 2]
    by_title = Reranker(dense_embedder.embed, only(title=1.0))
    assert by_title.rerank(QUERY, ps)[0] == 2  # two rare query words in its title beat one
    assert by_title.rerank(QUERY, ps, k=1) == [2]
    by_meaning = Reranker(dense_embedder.embed, only(sentence=1.0))
    assert by_meaning.rerank(QUERY, ps)[-1] == 1  # bread is furthest from the question
    assert Reranker(dense_embedder.embed).rerank(QUERY, []) == []


def test_ties_keep_the_first_stage_order():
    import numpy as np

    x = np.ones((3, len(FEATURES)))
    assert order(x, only(title=1.0)) == [0, 1, 2]


@pytest.fixture
def crafted(workspace, write_corpus, tmp_path):
    workspace.ingestor().ingest_paths([write_corpus(tmp_path / "docs", DOCS)], "crafted")
    return workspace


def test_search_with_the_reranker_on_and_off(crafted):
    off = crafted.corpus("crafted", search=SearchSettings(rerank=False)).search(QUERY, k=3, mode="hybrid")
    assert [h.rank for h in off] == [1, 2, 3]
    # a reranker that only reverses the first stage's order shows it is applied, with its settings
    backwards = SearchSettings(rerank=True, reranker=only(first=-1.0))
    on = crafted.corpus("crafted", search=backwards).search(QUERY, k=3, mode="hybrid")
    assert [h.passage.passage_id for h in on] == [h.passage.passage_id for h in reversed(off)]
    assert [h.rank for h in on] == [1, 2, 3]
    # the default reranker (weights chosen by cross-validation) runs in every mode and keeps k hits
    for mode in ("dense", "sparse", "hybrid"):
        hits = crafted.corpus("crafted", search=SearchSettings(rerank=True)).search(QUERY, k=2, mode=mode)
        assert len(hits) == 2 and len({h.passage.passage_id for h in hits}) == 2
        assert hits[0].passage.title in ("Marie Curie", "Physics prizes")
    mixed = crafted.corpus("crafted", search=backwards).search(QUERY, k=1, mode="hybrid", mmr=True)
    assert mixed[0].passage.passage_id == off[-1].passage.passage_id  # MMR starts from the reranker's order
