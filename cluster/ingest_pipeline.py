"""Ingest as a Ray pipeline: read → parse and split → embed → write, spread over a cluster's CPUs.

    summary, stats = ingest_on_ray(ingestor, paths, collection)

The driver lists the files (the same rules as a one-process ingest: hidden names and links out
of the given paths are passed over) and reads each one itself: it is the process that was given
the paths, and a Ray task may land on a host where they mean nothing (`cluster.ingest_files`).
One-CPU tasks parse and split the bytes they are sent. The driver then plans the ingest with the
one-process `Ingestor.plan` (point ids from content and place: only new passages are embedded,
stale ones deleted, `--prune`), and a Ray Data pool of embedding actors embeds the new passages
in `map_batches`, each with the model files of its own host's install and cache. Writes go
through `Ingestor.write`: on the driver for an embedded store (its data dir has one owner), from
every actor for a Qdrant server (`--qdrant-url`). `Ingestor.finish` then deletes the stale
passages and updates the evidence graph, as a one-process ingest does. If the embedding stage
fails, what it wrote is deleted again (a collection it created is dropped) and `IngestFailed`
says which stage and node.

`PipelineStats` says which actor, on which node, embedded how many passages, from the
counters each batch returns.
"""

from __future__ import annotations

import logging
import math
import os
import pickle
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from cluster.ingest_files import IngestFailed, parse_on_cluster
from retrieval.config import StoreSettings
from retrieval.errors import RaystormError, UsageError
from retrieval.ingest import Ingestor, IngestPlan, IngestSummary, Progress, prune_roots
from retrieval.loaders import Skipped, iter_files
from retrieval.store import check_collection_name

EMBED_BATCH = 64  # passages a map_batches call embeds
ACTORS_START_S = 300  # the embedding pool's start (a model load each), on a busy cluster


@dataclass
class PipelineStats:
    files: int = 0
    embedded: int = 0
    by_worker: dict[str, int] = field(default_factory=dict)  # "address (node id):pid" -> passages it embedded
    by_node: dict[str, int] = field(default_factory=dict)  # "address (node id)" -> passages embedded there
    embed_seconds: dict[str, float] = field(default_factory=dict)  # worker (as by_worker) -> seconds inside the model
    workers: int = 0  # actors in the embedding pool

    def per_worker_rate(self) -> float:
        """Passages a second one actor embeds (embedded over the actors' summed model seconds)."""
        seconds = sum(self.embed_seconds.values())
        return self.embedded / seconds if seconds else 0.0


class EmbedWorker:
    """One embedding actor: dense + BM25 models on one thread; writes itself to a Qdrant server."""

    def __init__(self, settings: StoreSettings, collection: str):
        import ray

        from retrieval.embeddings import DenseEmbedder, SparseEmbedder, embed_threads
        from retrieval.model_files import model_cache_root

        embed_threads(1)  # the actors are the parallelism
        node = f"{ray.util.get_node_ip_address()} ({ray.get_runtime_context().get_node_id()[:8]})"
        # this host's own cache: settings.models_dir is under the driver's data dir, a path of its host
        models = model_cache_root()
        # A failure here is raised by the first batch, not by the constructor: Ray prints a constructor's
        # error with its whole traceback on the driver's terminal; a batch's comes back to `_failure`.
        self.setup_error: WorkerSetupFailed | None = None
        try:
            self.dense = DenseEmbedder(settings.dense_model, None, threads=1, cache_size=0)
            self.sparse = SparseEmbedder(models)
            self.dense.embed(["model check"])  # here, once, not in the middle of a batch
            self.sparse.embed(["model check"])
            self.ingestor = Ingestor(settings, dense=self.dense, sparse=self.sparse) if settings.qdrant_url else None
        except Exception as exc:
            self.setup_error = WorkerSetupFailed(f"node {node}: the embedding actor cannot set up: "
                                                 f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        self.collection = collection
        self.name = f"{node}:{os.getpid()}"

    def __call__(self, batch: dict) -> dict:
        if self.setup_error is not None:
            raise self.setup_error
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


class WorkerSetupFailed(RaystormError):
    """An embedding actor could not load its models on its node (its message names the node)."""


_SETUP_LINE = re.compile(r"WorkerSetupFailed: (node [^\n]*)")


def cluster_cpus() -> int:
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def ingest_on_ray(ingestor: Ingestor, paths: Sequence[str | Path], collection: str, prune: bool = False,
                  progress: Progress | None = None, on_skip: Callable[[Skipped], None] | None = None,
                  on_file: Progress | None = None, workers: int | None = None, batch_size: int = EMBED_BATCH
                  ) -> tuple[IngestSummary, PipelineStats]:
    """Ingest `paths` on the Ray cluster this process has joined; `workers`: embedding actors, exactly (at most
    the cluster's CPUs; default: the cluster's CPUs, at most one per `batch_size` passages). `on_file(files read, files)` and
    `progress(passages embedded, to embed)` follow it."""
    started = time.perf_counter()
    check_collection_name(collection)
    cpus = cluster_cpus()
    if workers and workers > cpus:  # each actor takes one CPU: Ray Data would wait for CPUs that never come
        raise UsageError(f"--embed-workers {workers}: the cluster has {cpus} CPU(s) and each embedding actor "
                         f"takes one; ask for at most {cpus}")
    stats = PipelineStats()
    files, skipped = [], []
    for item in iter_files(list(paths)):
        (skipped if isinstance(item, Skipped) else files).append(item)
    stats.files = len(files)
    documents, passages = [], []
    if files:
        if on_file:
            on_file(0, len(files))
        for parsed in parse_on_cluster(files, ingestor.max_words, in_flight=2 * cpus, on_file=on_file):
            if isinstance(parsed, Skipped):  # unreadable on this host, the one that was given the path
                skipped.append(parsed)
                continue
            docs, parts, skips = parsed  # in the files' order: the one-process ingest's summary and graph
            documents += docs
            passages += parts
            skipped += skips
    for item in skipped:
        if on_skip:
            on_skip(item)
    existed = ingestor.store.exists(collection)
    plan = ingestor.plan(documents, collection, prune_roots(paths) if prune else None, passages=passages)
    if progress:
        progress(0, len(plan.todo))
    if plan.todo:
        try:
            _embed_and_write(ingestor, plan, collection, stats, workers, batch_size, progress)
        except BaseException as exc:
            _undo(ingestor, plan, collection, existed)
            if isinstance(exc, Exception):
                raise _failure(exc) from exc
            raise
    summary = ingestor.finish(plan)
    summary.skipped = skipped
    summary.seconds = time.perf_counter() - started
    return summary, stats


def _embed_and_write(ingestor: Ingestor, plan: IngestPlan, collection: str, stats: PipelineStats,
                     workers: int | None, batch_size: int, progress: Progress | None) -> None:
    """`plan.todo` embedded on a pool of `workers` actors (exactly that many) and written."""
    import ray.data
    from ray.data import ActorPoolStrategy

    # our bars and summary say it, and a failure is said in one line: no executor lines, no tracebacks
    logging.getLogger("ray.data").setLevel(logging.CRITICAL)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = ctx.verbose_progress = False
    # the whole pool is up before the first batch goes out (and an actor that cannot set up fails it here),
    # and an actor takes one batch at a time: each of the N actors asked for embeds, not only the first up
    ctx.wait_for_min_actors_s = ACTORS_START_S
    total = len(plan.todo)
    stats.workers = workers or min(cluster_cpus(), max(1, total // batch_size))
    # each actor gets batches even when the passages are few
    batch = max(1, min(batch_size, math.ceil(total / stats.workers)))
    rows = [{"index": i, "passage": pickle.dumps(p)} for i, p in enumerate(plan.todo)]
    blocks = min(total, max(stats.workers, min(math.ceil(total / batch), 8 * stats.workers)))
    embedded = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
        EmbedWorker, fn_constructor_kwargs={"settings": ingestor.settings, "collection": collection},
        compute=ActorPoolStrategy(size=stats.workers, max_tasks_in_flight_per_actor=1), num_cpus=1,
        batch_size=batch, batch_format="numpy")  # Ray Data's default scheduling spreads the actors over the nodes
    by_worker, by_seconds = Counter(), Counter()
    for out in embedded.iter_batches(batch_size=None, batch_format="numpy"):
        chunk = [plan.todo[int(i)] for i in out["index"]]
        if not ingestor.settings.qdrant_url:  # the embedded store's one owner writes
            vectors = [pickle.loads(b) for b in out["vectors"]]
            ingestor.write(collection, chunk, [d for d, _ in vectors], [s for _, s in vectors])
        for worker, seconds in zip(out["worker"], out["seconds"]):
            by_worker[str(worker)] += 1
            by_seconds[str(worker)] += float(seconds)
        stats.embedded += len(chunk)
        if progress:
            progress(stats.embedded, total)
    stats.by_worker = dict(by_worker)
    stats.embed_seconds = dict(by_seconds)
    for worker, n in by_worker.items():
        node = worker.rsplit(":", 1)[0]
        stats.by_node[node] = stats.by_node.get(node, 0) + n


def _undo(ingestor: Ingestor, plan: IngestPlan, collection: str, existed: bool) -> None:
    """Nothing half-written stays: a collection this ingest created goes, else the new points it wrote
    (every `todo` id was absent before, so deleting them all restores the collection as it was)."""
    if not existed:
        ingestor.store.drop(collection)
    else:
        ingestor.store.delete(collection, [p.passage_id for p in plan.todo])


def _failure(exc: Exception) -> IngestFailed:
    """One line for a failed embedding stage: the actor's own (which names its node) when it left one."""
    found = _SETUP_LINE.search(str(exc))
    detail = found.group(1) if found else f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return IngestFailed(f"ingest stopped at the embedding stage: {detail}; nothing of this run was kept in "
                        "the collection")
