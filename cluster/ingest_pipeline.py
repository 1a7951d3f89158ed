"""Ingest as a Ray Data pipeline: load → split → embed → write, spread over a cluster's CPUs.

    summary, stats = ingest_on_ray(ingestor, paths, collection)

The driver lists the files (the same rules as a one-process ingest: hidden names and links out
of the given paths are passed over); Ray Data tasks read and split them where they run (each
node reads the files it can see, by path); the driver then plans the ingest with the one-process
`Ingestor.plan` (point ids from content and place: only new passages are embedded, stale ones
deleted, `--prune`), and a pool of embedding actors, one CPU each, embeds the new passages in
`map_batches`. Writes go through `Ingestor.write`: on the driver for an embedded store (its
data dir has one owner), from every actor for a Qdrant server (`--qdrant-url`). `Ingestor.finish`
then deletes the stale passages and updates the evidence graph, as a one-process ingest does.

`PipelineStats` says which actor, on which node, embedded how many passages, from the
counters each batch returns.
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from retrieval.config import StoreSettings
from retrieval.ingest import Ingestor, IngestSummary, Progress, prune_roots
from retrieval.loaders import Skipped, iter_files, load_file
from retrieval.splitter import split_document
from retrieval.store import check_collection_name

EMBED_BATCH = 64  # passages a map_batches call embeds


@dataclass
class PipelineStats:
    files: int = 0
    embedded: int = 0
    by_worker: dict[str, int] = field(default_factory=dict)  # "node:pid" -> passages it embedded
    by_node: dict[str, int] = field(default_factory=dict)  # node id -> passages embedded there
    embed_seconds: dict[str, float] = field(default_factory=dict)  # "node:pid" -> seconds inside the model
    workers: int = 0  # actors in the embedding pool

    def per_worker_rate(self) -> float:
        """Passages a second one actor embeds (embedded over the actors' summed model seconds)."""
        seconds = sum(self.embed_seconds.values())
        return self.embedded / seconds if seconds else 0.0


def _load_split(batch: dict, max_words: int) -> dict:
    """A Ray Data batch of file paths → each file's documents, passages and skipped lines, pickled."""
    out = {"index": [], "loaded": []}
    for index, path in zip(batch["index"], batch["path"]):
        documents, skipped = load_file(Path(path))
        passages = [p for doc in documents for p in split_document(doc, max_words)]
        out["index"].append(int(index))
        out["loaded"].append(pickle.dumps((documents, passages, skipped)))
    return {"index": np.array(out["index"]), "loaded": np.array(out["loaded"], dtype=object)}


class EmbedWorker:
    """One embedding actor: dense + BM25 models on one thread; writes itself to a Qdrant server."""

    def __init__(self, settings: StoreSettings, collection: str):
        import ray

        from retrieval.embeddings import DenseEmbedder, SparseEmbedder, embed_threads

        embed_threads(1)  # the actors are the parallelism
        self.dense = DenseEmbedder(settings.dense_model, settings.models_dir, threads=1, cache_size=0)
        self.sparse = SparseEmbedder(settings.models_dir)
        self.collection = collection
        self.ingestor = Ingestor(settings, dense=self.dense, sparse=self.sparse) if settings.qdrant_url else None
        self.name = f"{ray.get_runtime_context().get_node_id()[:12]}:{os.getpid()}"

    def __call__(self, batch: dict) -> dict:
        passages = [pickle.loads(b) for b in batch["passage"]]
        texts = [p.embedding_text() for p in passages]
        started = time.perf_counter()
        dense, sparse = self.dense.embed(texts), self.sparse.embed(texts)
        seconds = time.perf_counter() - started
        n = len(passages)
        out = {"worker": np.array([self.name] * n), "seconds": np.full(n, seconds / max(n, 1)),
               "index": np.asarray(batch["index"])}
        if self.ingestor is not None:  # a server takes writes from every worker
            self.ingestor.write(self.collection, passages, dense, sparse)
            out["vectors"] = np.array([b""] * n, dtype=object)
        else:
            out["vectors"] = np.array([pickle.dumps((d, s)) for d, s in zip(dense, sparse)], dtype=object)
        return out


def cluster_cpus() -> int:
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def ingest_on_ray(ingestor: Ingestor, paths: Sequence[str | Path], collection: str, prune: bool = False,
                  progress: Progress | None = None, on_skip: Callable[[Skipped], None] | None = None,
                  on_file: Progress | None = None, workers: int | None = None, batch_size: int = EMBED_BATCH) -> tuple[IngestSummary, PipelineStats]:
    """Ingest `paths` on the Ray cluster this process has joined; `workers`: embedding actors (default:
    the cluster's CPUs). `on_file(files read, files)` and `progress(passages embedded, to embed)` follow it."""
    import ray.data
    from ray.data import ActorPoolStrategy

    started = time.perf_counter()
    check_collection_name(collection)
    stats = PipelineStats()
    files, skipped = [], []
    for item in iter_files(list(paths)):
        (skipped if isinstance(item, Skipped) else files).append(item)
    stats.files = len(files)
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # our bars and summary say it; no executor lines
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = ctx.verbose_progress = False
    documents, passages = [], []
    if files:
        if on_file:
            on_file(0, len(files))
        rows = [{"index": i, "path": str(f)} for i, f in enumerate(files)]
        loaded = ray.data.from_items(rows, override_num_blocks=min(len(rows), 4 * cluster_cpus())).map_batches(
            _load_split, fn_kwargs={"max_words": ingestor.max_words}, batch_size=1, num_cpus=1)
        by_index = {}
        for batch in loaded.iter_batches(batch_size=None, batch_format="numpy"):
            for index, blob in zip(batch["index"], batch["loaded"]):
                by_index[int(index)] = pickle.loads(blob)
            if on_file:
                on_file(len(by_index), len(files))
        for i in range(len(files)):  # the one-process ingest's order: same summary, same graph
            docs, parts, skips = by_index[i]
            documents += docs
            passages += parts
            skipped += skips
    for item in skipped:
        if on_skip:
            on_skip(item)
    plan = ingestor.plan(documents, collection, prune_roots(paths) if prune else None, passages=passages)
    total = len(plan.todo)
    if progress:
        progress(0, total)
    if total:
        stats.workers = min(workers or cluster_cpus(), max(1, total // batch_size))
        rows = [{"index": i, "passage": pickle.dumps(p)} for i, p in enumerate(plan.todo)]
        blocks = max(1, min(len(rows) // batch_size, 8 * stats.workers))
        embedded = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
            EmbedWorker, fn_constructor_kwargs={"settings": ingestor.settings, "collection": collection},
            compute=ActorPoolStrategy(size=stats.workers), num_cpus=1, batch_size=batch_size,
            batch_format="numpy")  # Ray Data's default scheduling spreads the actors over the nodes
        by_worker, by_seconds = Counter(), Counter()
        for batch in embedded.iter_batches(batch_size=None, batch_format="numpy"):
            chunk = [plan.todo[int(i)] for i in batch["index"]]
            if not ingestor.settings.qdrant_url:  # the embedded store's one owner writes
                vectors = [pickle.loads(b) for b in batch["vectors"]]
                ingestor.write(collection, chunk, [d for d, _ in vectors], [s for _, s in vectors])
            for worker, seconds in zip(batch["worker"], batch["seconds"]):
                by_worker[str(worker)] += 1
                by_seconds[str(worker)] += float(seconds)
            stats.embedded += len(chunk)
            if progress:
                progress(stats.embedded, total)
        stats.by_worker = dict(by_worker)
        stats.embed_seconds = dict(by_seconds)
        for worker, n in by_worker.items():
            node = worker.split(":")[0]
            stats.by_node[node] = stats.by_node.get(node, 0) + n
    summary = ingestor.finish(plan)
    summary.skipped = skipped
    summary.seconds = time.perf_counter() - started
    return summary, stats
