"""The dense embedder's vector cache: exact vectors, each text embedded once however many threads ask."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx

from retrieval import model_files
from retrieval.embeddings import DenseEmbedder
from retrieval.model_files import query_model_dir
from retrieval.errors import ModelUnavailable

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
    counting = CountingModel(cached._load_query())
    cached._query_model = counting
    queries = ["flood rider waiting period", "deductible schedule after the Marrow River flood"]
    start = threading.Barrier(6)

    def one(i: int) -> list[float]:
        start.wait()
        return cached.embed_query(queries[i % 2])

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(one, range(6)))
    assert results == [plain.embed_query(queries[i % 2]) for i in range(6)]  # the model's own vectors
    assert counting.queries == 2


def test_a_turns_queries_are_each_embedded_alone_once(models_dir):
    plain = DenseEmbedder(models_dir=models_dir, cache_size=0)
    cached = DenseEmbedder(models_dir=models_dir)
    counting = CountingModel(cached._load_query())
    cached._query_model = counting
    queries = ["flood rider waiting period", "who signed the deductible schedule after the Marrow River flood in 2024",
               "Harborline Mutual", "flood rider waiting period"]
    vectors = cached.embed_queries(queries)
    assert counting.queries == 3  # three distinct queries, each in its own run
    assert vectors == [plain.embed_query(q) for q in queries]  # what each query gets alone
    assert cached.embed_queries(queries[1:3]) == vectors[1:3] and counting.queries == 3  # cached now


def _cosines(a, b) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_queries_go_through_an_int8_copy_of_the_model_built_once(models_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = query_model_dir(models_dir)
    assert folder.parent == tmp_path / "cache" / "raystorm"
    ops = Counter(node.op_type for node in onnx.load(str(folder / "model.onnx")).graph.node)
    assert ops["MatMulInteger"] >= 36 and ops["DynamicQuantizeLinear"] >= 24  # multiplies in int8
    built = (folder / "model.onnx").stat().st_mtime_ns
    assert query_model_dir(models_dir) == folder and (folder / "model.onnx").stat().st_mtime_ns == built

    embedder = DenseEmbedder(models_dir=models_dir, cache_size=0)
    queries = ["flood rider waiting period", "who signed the deductible schedule after the Marrow River flood in 2024"]
    vectors = embedder.embed_queries(queries)
    assert embedder._query_alone and embedder._load_query() is not embedder._load()
    assert embedder.embed_queries(queries[::-1]) == vectors[::-1]  # the same vector whatever its companions
    float_vectors = [v.tolist() for v in embedder._load().query_embed(queries)]
    assert vectors != float_vectors and _cosines(vectors, float_vectors).min() > 0.98  # close, not the same


def test_an_unwritable_cache_builds_the_query_model_beside_the_data(models_dir, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert query_model_dir(models_dir).parent == models_dir


def test_without_the_int8_copy_queries_use_the_document_model_and_say_so(models_dir, tmp_path, monkeypatch,
                                                                         caplog):
    def cannot_build(*args):
        raise ModelUnavailable("cannot build the query model: No module named 'onnx'")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(model_files, "_build_query_model", cannot_build)
    embedder = DenseEmbedder(models_dir=tmp_path / "models", cache_size=0)
    with caplog.at_level(logging.WARNING, logger="retrieval.embeddings"):
        vector = embedder.embed_query("flood rider waiting period")
    assert "queries use the document model" in caplog.text and "No module named 'onnx'" in caplog.text
    assert vector == next(iter(embedder._load().query_embed(["flood rider waiting period"]))).tolist()


def test_a_query_model_folder_missing_a_file_is_built_again(models_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = query_model_dir(models_dir)
    assert not (folder / "tokenizer.json").is_symlink()  # copied: the cache outlives the venv it came from
    (folder / "tokenizer.json").unlink()  # as when a build was cut short
    assert query_model_dir(models_dir) == folder and (folder / "tokenizer.json").is_file()
