"""The dense embedder's vector cache: exact vectors, each text embedded once however many threads ask."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from retrieval.embeddings import DenseEmbedder

TEXTS = [f"Bulletin {i} amends the flood rider: the waiting period is now {10 + i} days." for i in range(40)]


class CountingModel:
    """The real fastembed model, counting the texts it is asked to embed."""

    def __init__(self, model):
        self.model = model
        self.texts = 0
        self.queries = 0
        self._lock = threading.Lock()

    def embed(self, texts, **kwargs):
        with self._lock:
            self.texts += len(texts)
        return self.model.embed(texts, **kwargs)

    def query_embed(self, text, **kwargs):
        with self._lock:
            self.queries += 1
        return self.model.query_embed(text, **kwargs)


def test_cached_vectors_are_the_models_and_concurrent_callers_share_the_work(models_dir):
    plain = DenseEmbedder(models_dir=models_dir, cache_size=0)
    expected = plain.embed(TEXTS)
    cached = DenseEmbedder(models_dir=models_dir)
    counting = CountingModel(cached._load())
    cached._model = counting
    start = threading.Barrier(4)

    def one(offset: int) -> list[list[float]]:
        start.wait()  # all four ask at once, in different orders
        order = TEXTS[offset:] + TEXTS[:offset]
        vectors = cached.embed(order)
        return vectors[len(TEXTS) - offset:] + vectors[:len(TEXTS) - offset]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, [0, 10, 20, 30]))
    assert all(r == expected for r in results)  # bit for bit what the uncached model gives
    assert counting.texts == len(TEXTS)  # each text embedded once
    assert cached.embed(TEXTS[:5] + TEXTS[:5]) == expected[:5] * 2 and counting.texts == len(TEXTS)
    assert cached.embed_query(TEXTS[0]) == plain.embed_query(TEXTS[0])


def test_a_small_cache_forgets_the_oldest_and_still_answers_exactly(models_dir):
    plain = DenseEmbedder(models_dir=models_dir, cache_size=0)
    small = DenseEmbedder(models_dir=models_dir, cache_size=8)
    assert small.embed(TEXTS[:20]) == plain.embed(TEXTS[:20])
    assert small.embed(TEXTS[:3]) == plain.embed(TEXTS[:3])  # evicted, embedded again
    assert len(small._cache._rows) == 8


def test_a_query_asked_by_several_threads_at_once_is_embedded_once(models_dir):
    plain = DenseEmbedder(models_dir=models_dir, cache_size=0)
    cached = DenseEmbedder(models_dir=models_dir)
    counting = CountingModel(cached._load())
    cached._model = counting
    queries = ["flood rider waiting period", "deductible schedule after the Marrow River flood"]
    start = threading.Barrier(6)

    def one(i: int) -> list[float]:
        start.wait()
        return cached.embed_query(queries[i % 2])

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(one, range(6)))
    assert results == [plain.embed_query(queries[i % 2]) for i in range(6)]  # the model's own vectors
    assert counting.queries == 2


def test_a_turns_queries_are_embedded_in_one_run_with_the_vectors_of_one_at_a_time(models_dir):
    plain = DenseEmbedder(models_dir=models_dir, cache_size=0)
    cached = DenseEmbedder(models_dir=models_dir)
    counting = CountingModel(cached._load())
    cached._model = counting
    queries = ["flood rider waiting period", "who signed the deductible schedule after the Marrow River flood in 2024",
               "Harborline Mutual", "flood rider waiting period"]
    vectors = cached.embed_queries(queries)
    assert counting.queries == 1  # three distinct queries, one model run
    assert vectors == [plain.embed_query(q) for q in queries]  # padding in the batch changes no vector
    assert cached.embed_queries(queries[1:3]) == vectors[1:3] and counting.queries == 1  # cached now
