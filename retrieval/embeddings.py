"""Dense (fastembed) and sparse (BM25) embedders, loaded lazily and offline by default.

The default dense model, all-MiniLM-L6-v2, comes with the install and loads with no
network (`retrieval.model_files`). Any other fastembed model name is passed through
(it downloads). Queries to the default model go through an int8 copy of it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from retrieval.cjk import spaced_bigrams
from retrieval.config import DEFAULT_DENSE_MODEL
from retrieval.errors import ModelUnavailable
from retrieval.model_files import offline_model_dir, query_model_dir
from retrieval.stopwords import STOPWORDS

CLAIM_WAIT_S = 120.0  # how long a call waits for a text another thread is embedding
log = logging.getLogger(__name__)


def vector_name(model_name: str) -> str:
    """The Qdrant vector name for a dense model, so a collection says what embedded it."""
    return "dense-" + re.sub(r"[^a-z0-9]+", "-", model_name.lower().split("/")[-1]).strip("-")


def _length_sorted_batches(texts: Sequence[str], batch_size: int) -> Iterable[list[int]]:
    """Indices in batches of similar length: padding costs less (3.3x faster measured)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


_QUERY_KEY = "\x00query\x00"  # a query's cache key: fastembed may embed queries and documents differently


class _VectorCache:
    """The last `size` vectors by text (float32 rows), shared by threads, filled single-flight.

    `claim` hands each missing text to exactly one caller; the others wait for it
    (`wait`) instead of embedding it again, so calls that start together (every
    topic's first stage at once) do not all embed the same texts.
    """

    def __init__(self, size: int):
        self.size = size
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._pending: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def _get(self, key: str) -> list[float] | None:
        row = self._rows.get(key)
        if row is None:
            return None
        self._rows.move_to_end(key)
        return row.tolist()

    def get(self, key: str) -> list[float] | None:
        if not self.size:
            return None
        with self._lock:
            return self._get(key)

    def claim(self, keys: Sequence[str]) -> tuple[dict[str, list[float]], list[str], dict[str, threading.Event]]:
        """(cached vectors, keys this caller must embed, keys another caller is embedding)."""
        if not self.size:
            return {}, list(dict.fromkeys(keys)), {}
        hits: dict[str, list[float]] = {}
        mine: list[str] = []
        theirs: dict[str, threading.Event] = {}
        with self._lock:
            for key in dict.fromkeys(keys):
                vec = self._get(key)
                if vec is not None:
                    hits[key] = vec
                elif key in self._pending:
                    theirs[key] = self._pending[key]
                else:
                    self._pending[key] = threading.Event()
                    mine.append(key)
        return hits, mine, theirs

    def put(self, key: str, vector) -> None:
        if not self.size:
            return
        with self._lock:
            self._rows[key] = np.asarray(vector, dtype=np.float32)
            self._rows.move_to_end(key)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)
            done = self._pending.pop(key, None)
        if done is not None:
            done.set()

    def release(self, keys: Sequence[str]) -> None:
        """Give up claims that were not filled (the model failed): their waiters embed them themselves."""
        with self._lock:
            events = [self._pending.pop(k) for k in keys if k in self._pending]
        for event in events:
            event.set()


class DenseEmbedder:
    """Sentence embeddings through fastembed; the vector size is read from the model.

    Small batches run faster on CPU (activations stay in cache): 8 embeds ~20-30% more
    passages per CPU-second than 32 with all-MiniLM-L6-v2 int8 (scripts/bench_retrieval.py).
    A report embeds the same snippets and sentences again and again (the table, the
    evidence ranking, every topic over one corpus), so the last `cache_size` vectors
    are kept by text; 0 turns that off. A vector does not depend on its batch (tested),
    so a hit returns exactly what the model would.
    """

    def __init__(self, model_name: str = DEFAULT_DENSE_MODEL, models_dir: Path | None = None,
                 threads: int | None = None, batch_size: int = 8, cache_size: int = 8192):
        self.model_name = model_name
        self.vector_name = vector_name(model_name)
        self._models_dir = models_dir
        self._threads = threads
        self._batch_size = batch_size
        self._model = None
        self._query_model = None
        self._query_alone = False  # True: each query in its own run (the quantised query model)
        self._cache = _VectorCache(cache_size)
        self._load_lock = threading.Lock()

    def _load(self):
        with self._load_lock:  # one model per embedder, however many threads ask at once
            return self._load_once()

    def _load_once(self):
        if self._model is None:
            folder = None  # a model fastembed fetches by name
            if self.model_name == DEFAULT_DENSE_MODEL:
                folder = offline_model_dir(self._models_dir)  # None: this host's cache only
            self._model = self._text_embedding(folder)
        return self._model

    def _text_embedding(self, folder: Path | None):
        from fastembed import TextEmbedding

        kwargs = {"threads": self._threads} if self._threads else {}
        if folder is not None:
            kwargs["specific_model_path"] = str(folder)
        try:
            return TextEmbedding(self.model_name, **kwargs)
        except Exception as exc:  # fastembed raises bare errors for unknown or unreachable models
            raise ModelUnavailable(f"cannot load embedding model '{self.model_name}': {exc}") from exc

    def _load_query(self):
        """The model queries go through: the default model's int8 copy (`query_model_dir`), else the
        document model (another model, or when the copy cannot be built: said once in the log)."""
        with self._load_lock:
            if self._query_model is None:
                folder = None
                if self.model_name == DEFAULT_DENSE_MODEL:
                    try:
                        folder = query_model_dir(self._models_dir)
                    except ModelUnavailable as exc:
                        log.warning("queries use the document model (about 2.4x the CPU a query): %s", exc)
                if folder is None:
                    self._query_model = self._load_once()
                else:
                    self._query_model = self._text_embedding(folder)
                    self._query_alone = True
        return self._query_model

    @property
    def dimension(self) -> int:
        model = self._load()
        size = getattr(model, "embedding_size", None)
        return int(size) if size else len(next(iter(model.embed(["dimension probe"]))))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._cached(texts, self._run)

    def _cached(self, keys: Sequence[str],
                run: Callable[[Sequence[str]], dict[str, list[float]]]) -> list[list[float]]:
        """The vector of each key: cached, made by `run` (distinct keys -> vectors, into the cache) for the
        keys this caller claims, waited for where another thread is making it (past `CLAIM_WAIT_S`, made here)."""
        found, mine, theirs = self._cache.claim(keys)
        try:
            found.update(run(mine))
        finally:
            self._cache.release(mine)
        for key, event in theirs.items():
            event.wait(timeout=CLAIM_WAIT_S)
            vec = self._cache.get(key)
            found[key] = vec if vec is not None else run([key])[key]
        return [list(found[k]) for k in keys]

    def _run(self, texts: Sequence[str]) -> dict[str, list[float]]:
        """The model's vectors for distinct `texts`, into the cache."""
        if not texts:
            return {}
        model = self._load()
        out: dict[str, list[float]] = {}
        for batch in _length_sorted_batches(texts, self._batch_size):
            vectors = model.embed([texts[j] for j in batch], batch_size=len(batch))
            for j, vec in zip(batch, vectors):
                self._cache.put(texts[j], vec)
                out[texts[j]] = vec.tolist()
        return out

    def embed_query(self, text: str) -> list[float]:
        """The query's vector; a query another thread is embedding right now is waited for, not embedded twice."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Each query's vector through the query model (`_load_query`); queries other threads are embedding
        now are waited for, not embedded twice. The int8 query model runs each query alone (its vectors
        would depend on their batch); another model runs those not cached in one batch (a batch of 3
        costs 12–25% less CPU a query than 3 runs; the vectors are the same, tested)."""
        return self._cached([_QUERY_KEY + t for t in texts], self._run_queries)

    def _run_queries(self, keys: Sequence[str]) -> dict[str, list[float]]:
        """The model's query vectors for distinct query `keys`, into the cache."""
        if not keys:
            return {}
        model = self._load_query()
        queries = [k[len(_QUERY_KEY):] for k in keys]
        runs = [[q] for q in queries] if self._query_alone else [queries]
        vectors = [vec for run in runs for vec in model.query_embed(run, batch_size=len(run))]
        out: dict[str, list[float]] = {}
        for key, vec in zip(keys, vectors):
            self._cache.put(key, vec)
            out[key] = vec.tolist()
        return out


class SparseEmbedder:
    """BM25 term weights through fastembed's `Bm25` with our stopwords; IDF is applied by Qdrant."""

    vector_name = "bm25"

    def __init__(self, models_dir: Path):
        self._models_dir = models_dir
        self._model = None

    def _load(self):
        if self._model is None:
            from fastembed import SparseTextEmbedding

            folder = self._models_dir / "bm25"
            folder.mkdir(parents=True, exist_ok=True)
            self._model = SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(folder),
                                              stopwords=set(STOPWORDS))
        return self._model

    def embed(self, texts: Sequence[str]) -> list[tuple[list[int], list[float]]]:
        # CJK runs as bigrams: fastembed splits at spaces only, and would see a clause as one term
        vectors = self._load().embed([spaced_bigrams(t) for t in texts])
        return [(v.indices.tolist(), v.values.tolist()) for v in vectors]

    def embed_query(self, text: str) -> tuple[list[int], list[float]]:
        v = next(iter(self._load().query_embed(spaced_bigrams(text))))
        return v.indices.tolist(), v.values.tolist()


_shared: dict[tuple[str, str | None], DenseEmbedder] = {}
_shared_lock = threading.Lock()
_process_threads: int | None = None  # None: onnxruntime's default, every core


def embed_threads(threads: int | None) -> None:
    """Threads each model of this process embeds with, from now on (None: every core).

    A Ray actor sets 1: the actors are the parallelism, and one process's idle
    onnxruntime threads would spin on cores another actor needs (measured on 2
    cores: expert CPU 9.5 -> 6.9 s, the benchmark run 12.5 -> 9.7 s)."""
    global _process_threads
    _process_threads = threads


def shared_dense(model_name: str, models_dir: Path | None) -> DenseEmbedder:
    """One `DenseEmbedder` per model in this process: one model load and one vector cache for all its users."""
    key = (model_name, str(models_dir) if models_dir else None)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = DenseEmbedder(model_name, models_dir, threads=_process_threads)
        return _shared[key]
