"""Search over a small written corpus: each mode, filters, MMR, and the errors a user can fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.errors import CollectionNotFound, EmptyCollection, RaystormError
from retrieval.search import SearchSettings, mmr_order
from retrieval.store import SearchFilter

MODES = ["dense", "sparse", "hybrid"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query, title, phrase", [
    ("Which city did Mount Vesuvius bury under ash?", "Volcanoes", "Pompeii"),
    ("how to bake sourdough bread with a starter", "Sourdough bread", "starter"),
    ("Sicilian Defence chess opening", "chess", "Sicilian"),
    ("Amazon river rainforest", "Rivers", "Amazon"),
    ("Hubble Space Telescope galaxies", "Hubble", "Hubble"),
])
def test_each_mode_finds_the_right_passage(small_search, mode, query, title, phrase):
    _, corpus, _, _ = small_search
    hits = corpus.search(query, k=3, mode=mode)
    assert hits[0].passage.title == title and phrase in hits[0].passage.text
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_hits_carry_their_place_in_the_source(small_search):
    _, corpus, corpus_dir, _ = small_search
    [hit] = corpus.search("seismometers warn observatories", k=1)
    p = hit.passage
    assert (p.title, p.heading_path, p.url, p.tags) == (
        "Volcanoes", ["Monitoring"], "https://example.org/volcanoes", ["geology", "earth"])
    lines = (corpus_dir / "volcanoes.md").read_text(encoding="utf-8").splitlines()
    assert "\n".join(lines[p.line_start - 1 : p.line_end]) == p.text
    assert p.path == str((corpus_dir / "volcanoes.md").resolve())


@pytest.mark.parametrize("mode", MODES)
def test_filters(small_search, mode):
    ws, corpus, corpus_dir, _ = small_search
    bread_doc = corpus.search("sourdough", k=1, mode="sparse")[0].passage.doc_id
    chess = str((corpus_dir / "chess.txt").resolve())
    cases = [
        (SearchFilter(doc_ids=[bread_doc]), lambda p: p.doc_id == bread_doc),
        (SearchFilter(sources=[chess]), lambda p: p.path == chess),
        (SearchFilter(sources=["https://example.org/volcanoes"]), lambda p: p.url == "https://example.org/volcanoes"),
        (SearchFilter(tags=["space"]), lambda p: "space" in p.tags),
        (SearchFilter(exclude_urls=["https://example.org/hubble"]), lambda p: p.url != "https://example.org/hubble"),
    ]
    for flt, keep in cases:
        # a query aimed at everything the filter drops still returns only what it keeps
        hits = corpus.search("volcano eruption Hubble telescope sourdough chess", k=10, mode=mode, flt=flt)
        assert hits, flt
        assert all(keep(h.passage) for h in hits), flt
    hubble = corpus.search("Hubble Space Telescope", k=10, mode=mode,
                           flt=SearchFilter(exclude_urls=["https://example.org/hubble"]))
    assert all(h.passage.title != "Hubble" for h in hubble)


@pytest.fixture(scope="module")
def duplicates(small_search, tmp_path_factory, write_corpus):
    """Three near-copies of one passage and three other passages on the same topic."""
    ws, _, _, _ = small_search
    same = "Apollo 11 landed the first humans on the Moon in July 1969, with Neil Armstrong stepping out first."
    folder = write_corpus(tmp_path_factory.mktemp("dups"), {
        "copy1.txt": same + "\n",
        "copy2.txt": same.replace("July 1969", "1969") + "\n",
        "copy3.txt": same.replace("humans", "people") + "\n",
        "tides.txt": "The Moon's gravity raises the ocean tides on Earth twice a day.\n",
        "craters.txt": "Lunar craters were formed by meteorite impacts over billions of years.\n",
        "rover.txt": "Apollo astronauts drove the Lunar Roving Vehicle across the Moon's surface.\n",
    })
    ws.ingestor().ingest_paths([folder], "dups")
    return ws


def _copies(hits) -> int:
    return sum(Path(h.passage.path).name.startswith("copy") for h in hits)


@pytest.mark.parametrize("mode", MODES)
def test_mmr_returns_k_diverse_hits(duplicates, mode):
    query = "Apollo 11 first humans on the Moon"
    plain = duplicates.corpus("dups").search(query, k=4, mode=mode)
    diverse = duplicates.corpus("dups", search=SearchSettings(mmr_lambda=0.5)).search(query, k=4, mode=mode,
                                                                                      mmr=True)
    assert _copies(plain) == 3
    assert len(diverse) == 4 and len({h.passage.passage_id for h in diverse}) == 4
    # sparse candidates are only the passages sharing a term with the query, so fewer to choose from
    assert _copies(diverse) == (2 if mode == "sparse" else 1)
    assert _copies(diverse[:1]) == 1  # the most relevant still leads


def test_mmr_with_default_settings_returns_k_distinct_hits(duplicates):
    hits = duplicates.corpus("dups").search("Apollo 11 first humans on the Moon", k=5, mmr=True)
    assert len({h.passage.passage_id for h in hits}) == 5


def test_mmr_order_prefers_unlike_candidates():
    query = [1.0, 0.0]
    candidates = [[1.0, 0.0], [0.99, 0.01], [0.6, 0.8]]
    assert mmr_order(query, candidates, 2, lambda_=0.3) == [0, 2]
    assert mmr_order(query, candidates, 2, lambda_=1.0) == [0, 1]
    assert mmr_order(query, candidates, 5, lambda_=0.3) == [0, 2, 1]


def test_stopword_only_queries(small_search):
    _, corpus, _, _ = small_search
    assert corpus.search("the of and", k=3, mode="sparse") == []
    assert len(corpus.search("the of and", k=3, mode="hybrid")) == 3  # falls back to dense


@pytest.mark.parametrize("query, k, message", [("   ", 3, "empty search query"), ("lava", 0, "k must be")])
def test_bad_queries(small_search, query, k, message):
    _, corpus, _, _ = small_search
    with pytest.raises(RaystormError, match=message):
        corpus.search(query, k=k)


def test_unknown_collection_names_the_fix(small_search):
    ws, _, _, _ = small_search
    with pytest.raises(CollectionNotFound, match=r"run `raystorm ingest PATH --collection nowhere`"):
        ws.corpus("nowhere").search("lava")


def test_empty_collection_names_the_fix(small_search, tmp_path, write_corpus):
    ws, _, _, _ = small_search
    folder = write_corpus(tmp_path / "brief", {"note.txt": "A short note.\n"})
    ws.ingestor().ingest_paths([folder], "emptied")
    (folder / "note.txt").unlink()
    summary = ws.ingestor().ingest_paths([folder], "emptied", prune=True)
    assert summary.pruned_files == 1 and ws.store.info("emptied").passages == 0
    with pytest.raises(EmptyCollection, match=r"no passages in collection 'emptied': run `raystorm ingest"):
        ws.corpus("emptied").search("note")


def test_collection_records_its_model(small_search):
    ws, _, _, summary = small_search
    info = ws.store.info("small")
    assert info.passages == summary.passages
    assert info.dense_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert info.dense_vector == "dense-all-minilm-l6-v2"
