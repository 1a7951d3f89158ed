"""The embedded store's own BM25 index returns what Qdrant's local mode returns, through writes and filters.

Qdrant is the reference throughout: its sparse query (`query_points(using="bm25")`) and
its own prefetch + RRF hybrid query, run by a store on the same embedded client with
the server code path (a `qdrant_url` in the settings makes the store leave all search
to Qdrant). Qdrant orders equal scores arbitrarily, the index by point id, so a
Qdrant sparse ranking is compared after sorting its ties by id. Hybrid results are
compared rank for rank: on these corpora no tie moves a fused rank.
"""

from __future__ import annotations

import random

import pytest
from qdrant_client import QdrantClient, models

from retrieval.search import SearchSettings
from retrieval.sparse_index import SparseIndex
from retrieval.store import SPARSE_VECTOR, PassageStore, SearchFilter

QUERIES = [
    "volcano eruption Hubble telescope sourdough chess",
    "Which city did Mount Vesuvius bury under ash?",
    "the river carries water to the ocean of Earth",
    "space telescope orbits Earth",
    "king rook castling chess opening",
]


def by_score_then_id(points) -> list[tuple[str, float]]:
    return sorted(((str(p.id), p.score) for p in points), key=lambda hit: (-hit[1], hit[0]))


def qdrant_path_store(store: PassageStore) -> PassageStore:
    """A store on the same embedded client that leaves every search to Qdrant, as with a server."""
    return PassageStore(store.settings.model_copy(update={"qdrant_url": "http://qdrant.invalid"}),
                        client=store.client)


def search_both(ws, collection, mode, query, limit, flt=None, with_vectors=False, settings=SearchSettings()):
    """The same query through the store's embedded path and through Qdrant's own."""
    dense = ws.dense.embed_query(query)
    sparse = ws.sparse.embed_query(query)
    args = dict(mode=mode, limit=limit, dense_vector=ws.dense.vector_name, dense=dense, sparse=sparse, flt=flt,
                with_vectors=with_vectors, fusion_k=settings.fusion_k,
                fusion_weights=(settings.dense_weight, settings.sparse_weight))
    return ws.store.query(collection, **args), qdrant_path_store(ws.store).query(collection, **args)


# -- the index alone, on random vectors --------------------------------------------------------


def test_index_scores_are_qdrants_bit_for_bit(tmp_path):
    rng = random.Random(7)
    client = QdrantClient(path=str(tmp_path / "qdrant"))
    client.create_collection("bm25", vectors_config={},
                             sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(
                                 modifier=models.Modifier.IDF)})

    def random_vector(terms: int) -> tuple[list[int], list[float]]:
        indices = rng.sample(range(400), terms)  # a small vocabulary: terms shared by many points
        return indices, [float(f"{rng.uniform(0.1, 3.0):.6g}") for _ in indices]

    vectors = {f"00000000-0000-0000-0000-{i:012d}": random_vector(rng.randint(0, 30)) for i in range(300)}
    vectors["00000000-0000-0000-0001-000000000000"] = vectors["00000000-0000-0000-0000-000000000005"]  # a tie

    def write(points: dict) -> None:
        client.upsert("bm25", points=[models.PointStruct(id=pid, vector={SPARSE_VECTOR: models.SparseVector(
            indices=v[0], values=v[1])}) for pid, v in points.items()], wait=True)

    def check(index: SparseIndex) -> None:
        for _ in range(20):
            query = random_vector(rng.randint(1, 8))
            expected = by_score_then_id(client.query_points(
                "bm25", query=models.SparseVector(indices=query[0], values=query[1]), using=SPARSE_VECTOR,
                limit=1000).points)
            assert index.search(query, 1000) == expected  # same ids, same float32 scores
            assert index.search(query, 7) == expected[:7]

    write(vectors)
    index = SparseIndex.from_collection(client, "bm25", SPARSE_VECTOR)
    assert len(index) == 301
    check(index)
    # writes change n and df, so every score: the index follows them without a reload
    changed = {pid: random_vector(12) for pid in rng.sample(sorted(vectors), 40)}
    changed["00000000-0000-0000-0002-000000000000"] = random_vector(5)
    write(changed)
    index.upsert(changed.items())
    gone = rng.sample(sorted(vectors), 60)
    client.delete("bm25", points_selector=models.PointIdsList(points=gone), wait=True)
    index.delete(gone)
    assert len(index) == client.count("bm25").count == 242
    check(index)
    assert index.search(([10**6], [1.0]), 5) == [] and index.search(random_vector(3), 0) == []
    client.close()


# -- the store, on the small written corpus ----------------------------------------------------


@pytest.mark.parametrize("query", QUERIES)
def test_sparse_search_equals_qdrants(small_search, query):
    ws, _, _, _ = small_search
    indices, values = ws.sparse.embed_query(query)
    expected = ws.store.client.query_points("small", query=models.SparseVector(indices=indices, values=values),
                                            using=SPARSE_VECTOR, limit=100, with_payload=True).points
    found = ws.store.query("small", "sparse", 100, ws.dense.vector_name, None, (indices, values))
    assert [(str(p.id), p.score) for p, _ in found] == by_score_then_id(expected)
    assert [p.payload for p, _ in found] == [p.payload for p in sorted(expected, key=lambda p: (-p.score, str(p.id)))]
    assert [passage.passage_id for p, passage in found] == [str(p.id) for p, _ in found]


@pytest.mark.parametrize("settings", [SearchSettings(), SearchSettings(fusion_k=60, sparse_weight=1.0),
                                      SearchSettings(fusion_k=2, dense_weight=0.5)])
@pytest.mark.parametrize("limit", [3, 10])
def test_hybrid_search_equals_qdrants_prefetch_and_rrf(small_search, settings, limit):
    ws, _, _, _ = small_search
    for query in QUERIES:
        ours, qdrants = search_both(ws, "small", "hybrid", query, limit, with_vectors=True, settings=settings)
        assert [str(p.id) for p, _ in ours] == [str(p.id) for p, _ in qdrants]  # same ids, same order
        assert [p.score for p, _ in ours] == pytest.approx([p.score for p, _ in qdrants], abs=1e-12)
        assert [p.vector for p, _ in ours] == [p.vector for p, _ in qdrants]  # MMR reads these
        assert [passage for _, passage in ours] == [passage for _, passage in qdrants]


def test_filters_are_qdrants(small_search):
    ws, corpus, corpus_dir, _ = small_search
    bread_doc = corpus.search("sourdough", k=1, mode="sparse")[0].passage.doc_id
    filters = [SearchFilter(doc_ids=[bread_doc]), SearchFilter(sources=[str((corpus_dir / "chess.txt").resolve())]),
               SearchFilter(sources=["https://example.org/volcanoes"]), SearchFilter(tags=["space"]),
               SearchFilter(exclude_urls=["https://example.org/hubble"]), SearchFilter(tags=["no such tag"])]
    for flt in filters:
        for mode in ("sparse", "hybrid"):
            for query in QUERIES:
                ours, qdrants = search_both(ws, "small", mode, query, 10, flt=flt)
                if mode == "sparse":
                    assert [(str(p.id), p.score) for p, _ in ours] == by_score_then_id(p for p, _ in qdrants)
                else:
                    assert [str(p.id) for p, _ in ours] == [str(p.id) for p, _ in qdrants], (flt, query)
    assert search_both(ws, "small", "sparse", QUERIES[0], 10, flt=filters[-1]) == ([], [])


# -- writes: a changed file re-ingested, a deleted file pruned ---------------------------------


def test_index_follows_reingest_and_prune(workspace, tmp_path, write_corpus):
    folder = write_corpus(tmp_path / "corpus", {
        "beta.txt": "Beta is about bees.\n\nBees make honey from nectar.\n",
        "gamma.txt": "Gamma is about goats. Goats make cheese from milk.\n",
        "delta.txt": "Delta is about river deltas, where bees rarely go.\n",
    })
    workspace.ingestor().ingest_paths([folder], "docs")
    beta = str((folder / "beta.txt").resolve())
    only_beta = SearchFilter(sources=[beta])
    queries = ["bees honey nectar", "bumblebees larger than honeybees", "goats cheese", "river bees"]

    def agree() -> None:
        for mode in ("sparse", "hybrid"):
            for query in queries:
                for flt in (None, only_beta):
                    ours, qdrants = search_both(workspace, "docs", mode, query, 10, flt=flt)
                    assert [(str(p.id), p.score) for p, _ in ours] == \
                        ([(str(p.id), p.score) for p, _ in qdrants] if mode == "hybrid"
                         else by_score_then_id(p for p, _ in qdrants))

    agree()  # loads the index and caches the filter, which the writes below must update
    (folder / "beta.txt").write_text("Beta is about bees.\n\nBumblebees are larger than honeybees.\n",
                                     encoding="utf-8")
    assert workspace.ingestor().ingest_paths([folder], "docs").removed == 1
    agree()
    [new] = workspace.store.ids_by_path("docs")[beta]  # the file is one passage
    hits = workspace.corpus("docs").search("bumblebees", k=3, mode="sparse", flt=only_beta)
    assert [h.passage.passage_id for h in hits] == [new]
    assert not workspace.corpus("docs").search("nectar", k=3, mode="sparse")

    (folder / "gamma.txt").unlink()
    assert workspace.ingestor().ingest_paths([folder], "docs", prune=True).pruned_files == 1
    agree()
    assert not workspace.corpus("docs").search("goats cheese", k=3, mode="sparse")
