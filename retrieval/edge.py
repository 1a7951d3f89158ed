"""Qdrant Edge (Qdrant's own engine, in-process) behind the part of qdrant-client's API raystorm uses.

The embedded store: one Edge shard per collection under `DATA_DIR/edge/NAME/` (HNSW dense vectors,
sparse BM25 vectors with Qdrant's IDF modifier, payload indexes, hybrid fusion by RRF in the engine),
with the collection's settings beside it in `NAME.json`. `EdgeClient` takes and returns qdrant-client's
models, so `PassageStore`, the information tables and the evidence graph run the same code on Edge and
on a Qdrant server. One process owns a data dir at a time (a lock file), as with any embedded store.

Edge is beta: pinned in pyproject.toml. What it lacks here is made up in this module only: a collection
with no vectors (the graph's payload points) gets a placeholder sparse vector, and a collection's
metadata lives in its JSON file.
"""

from __future__ import annotations

import errno
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import qdrant_edge as qe
from qdrant_client import models

from retrieval.store_lock import StoreInUse, StoreLock  # noqa: F401  (StoreInUse: raised through here)

_PLACEHOLDER = "_payload_only"  # the sparse vector a collection without vectors is given
_BATCH = 512
_TIE_MARGIN = 8  # extra fused results read, so ties at the cut are broken by id as well
# Edge writes through memory-mapped files: on a full disk a write is a SIGBUS that kills the process, not
# an error. So every write first checks the disk has room for it, plus this much for segments and WAL.
ROOM_FLOOR = 64 * 2**20
WAIT_S = 60.0  # how long a command waits for another command's hold on the store that makes no progress
# A query runs on the calling thread. Edge's default hands each query to a pool of search threads, which
# on 2 cores doubles a search's CPU and slows it (`python -m scripts.bench_store --search-threads 1 0`:
# 0.69 instead of 1.37 ms of CPU a hybrid query at 10,000 passages, p50 0.68 instead of 0.85 ms; 1.65
# instead of 2.3 at 100,000, p50 1.25 instead of 1.44). A store serves many callers at once: parallelism
# comes from them, not from splitting one query.
SEARCH_THREADS = 1


class Untranslated(TypeError):
    """A qdrant-client request raystorm's code never sends to Edge (a bug of ours, raised as such)."""


@dataclass
class _Point:
    """A point as qdrant-client gives it back (`ScoredPoint` / `Record`): id as a string."""

    id: str
    payload: dict | None = None
    vector: Any = None
    score: float = 0.0


@dataclass
class _Params:
    vectors: dict
    sparse_vectors: dict


@dataclass
class _Config:
    params: _Params
    metadata: dict = field(default_factory=dict)


@dataclass
class _Collection:
    config: _Config


@dataclass
class _Name:
    name: str


@dataclass
class _Names:
    collections: list


@dataclass
class _Count:
    count: int


@dataclass
class _Response:
    points: list


def edge_filter(flt: models.Filter | None) -> qe.Filter | None:
    """qdrant-client's filter as Edge's (the conditions raystorm uses: match any / value, nested filters)."""
    if flt is None:
        return None

    def condition(c):
        if isinstance(c, models.Filter):
            return edge_filter(c)
        if isinstance(c, models.FieldCondition):
            match = c.match
            if isinstance(match, models.MatchAny):
                return qe.FieldCondition(key=c.key, match=qe.MatchAny(any=list(match.any)))
            if isinstance(match, models.MatchValue):
                return qe.FieldCondition(key=c.key, match=qe.MatchValue(match.value))
            if isinstance(match, models.MatchExcept):
                return qe.FieldCondition(key=c.key, match=qe.MatchExcept(list(match.except_)))
        if isinstance(c, models.HasIdCondition):
            return qe.HasIdCondition([str(i) for i in c.has_id])
        raise Untranslated(f"filter condition {type(c).__name__} is not translated to Qdrant Edge")

    def many(items):
        return [condition(c) for c in items] if items else None

    return qe.Filter(must=many(flt.must), should=many(flt.should), must_not=many(flt.must_not))


def _vector(v):
    if isinstance(v, models.SparseVector):
        return qe.SparseVector(list(v.indices), list(v.values))
    return [float(x) for x in v]


def _query(query, using: str | None):
    if isinstance(query, models.SparseVector):
        return qe.Query.Nearest(_vector(query), using=using)
    if isinstance(query, models.RrfQuery):
        return qe.Fusion.Rrf(k=query.rrf.k or 60, weights=list(query.rrf.weights) if query.rrf.weights else None)
    if isinstance(query, models.FusionQuery):
        return qe.Fusion.Rrf(k=60)
    if isinstance(query, (list, tuple)):
        return qe.Query.Nearest([float(x) for x in query], using=using)
    raise Untranslated(f"query {type(query).__name__} is not translated to Qdrant Edge")


def _edge_request(query, using: str | None, prefetch, limit: int, query_filter: models.Filter | None,
                  with_payload, with_vectors) -> qe.QueryRequest:
    prefetches = [qe.Prefetch(limit=p.limit, query=_query(p.query, p.using), filter=edge_filter(p.filter))
                  for p in (prefetch or [])] or None
    # fused ranks tie often (1/(k+1) + 1/(k+2) either way round): ties go by point id, so the same
    # points give the same order in every collection and run; a few more are read so a tie at the
    # cut is decided the same way too (`_response`)
    extra = _TIE_MARGIN if isinstance(query, (models.RrfQuery, models.FusionQuery)) else 0
    return qe.QueryRequest(limit=limit + extra, query=_query(query, using), prefetches=prefetches,
                           filter=edge_filter(query_filter),
                           with_payload=False if with_payload is None else with_payload,  # (a batch's default)
                           with_vector=_with_vector(with_vectors))


def _response(found: list, limit: int, with_vectors) -> _Response:
    found = sorted(found, key=lambda p: (-p.score, str(p.id)))[:limit]
    return _Response([_Point(str(p.id), p.payload, _vectors_of(p) if with_vectors else None, p.score)
                      for p in found])


def _with_vector(value):
    return value if isinstance(value, (bool, list)) else bool(value)


def _vectors_of(record) -> Any:
    vector = record.vector
    if isinstance(vector, dict):
        out = {}
        for name, v in vector.items():
            if name == _PLACEHOLDER:
                continue
            out[name] = models.SparseVector(indices=list(v.indices), values=list(v.values)) \
                if isinstance(v, qe.SparseVector) else list(v)
        return out
    return vector


def _edge_config(meta: dict) -> qe.EdgeConfig:
    """The Edge configuration of a collection described by its `NAME.json` (`EdgeClient.create_collection`)."""
    dense = {k: qe.EdgeVectorParams(size=v["size"], distance=qe.Distance.Cosine) for k, v in meta["vectors"].items()}
    sparse = {k: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if v["idf"] else None)
              for k, v in meta["sparse_vectors"].items()}
    if not dense and not sparse:  # Edge wants some vector: a payload-only collection gets a placeholder
        sparse = {_PLACEHOLDER: qe.EdgeSparseVectorParams()}
    return qe.EdgeConfig(vectors=dense or None, sparse_vectors=sparse or None, max_search_threads=SEARCH_THREADS)


def _load(path: Path, meta: dict) -> qe.EdgeShard:
    """The shard at `path`; one saved with other search threads (by an earlier version) is given
    `SEARCH_THREADS`, which Edge checks against the shard and writes back to its `edge_config.json`."""
    try:
        saved = json.loads((path / "edge_config.json").read_text()).get("max_search_threads")
    except (OSError, ValueError):
        saved = None  # (Edge itself says what is wrong with the shard, below)
    if saved == SEARCH_THREADS:
        return qe.EdgeShard.load(str(path))
    return qe.EdgeShard.load(str(path), _edge_config(meta))


class EdgeClient:
    """The collections of one data dir as Edge shards, spoken to like a `QdrantClient`."""

    def __init__(self, path: str | Path, wait_s: float = WAIT_S):
        """Own the data dir's store. While another command holds it, say at once who, since when and how
        far it is, and wait for as long as it makes progress (up to `wait_s` without); a long-lived owner
        (`raystorm web`, `mcp`, `serve`) is named at once instead (retrieval/store_lock.py)."""
        self.root = Path(path)
        self.root.mkdir(parents=True, exist_ok=True)
        self.lock = StoreLock(self.root, wait_s)
        self._shards: dict[str, qe.EdgeShard] = {}

    # -- collections -----------------------------------------------------------------------------

    def _meta_path(self, name: str) -> Path:
        return self.root / f"{name}.json"

    def _shard(self, name: str) -> qe.EdgeShard:
        shard = self._shards.get(name)
        if shard is None:
            if not self.collection_exists(name):
                raise ValueError(f"Collection {name} not found")
            shard = self._shards[name] = _load(self.root / name, json.loads(self._meta_path(name).read_text()))
        return shard

    def collection_exists(self, name: str) -> bool:
        return self._meta_path(name).is_file() and (self.root / name).is_dir()

    def get_collections(self) -> _Names:
        return _Names([_Name(p.stem) for p in sorted(self.root.glob("*.json")) if (self.root / p.stem).is_dir()])

    def create_collection(self, name: str, vectors_config: dict | None = None,
                          sparse_vectors_config: dict | None = None, metadata: dict | None = None) -> bool:
        self._ensure_room(0)
        meta = {"vectors": {k: {"size": v.size} for k, v in (vectors_config or {}).items()},
                "sparse_vectors": {k: {"idf": v.modifier == models.Modifier.IDF}
                                   for k, v in (sparse_vectors_config or {}).items()},
                "metadata": metadata or {}}
        if (self.root / name).exists():
            shutil.rmtree(self.root / name)
        self._shards[name] = qe.EdgeShard.create(str(self.root / name), _edge_config(meta))
        self._meta_path(name).write_text(json.dumps(meta, indent=1))
        return True

    def get_collection(self, name: str) -> _Collection:
        if not self.collection_exists(name):
            raise ValueError(f"Collection {name} not found")
        meta = json.loads(self._meta_path(name).read_text())
        vectors = {k: models.VectorParams(size=v["size"], distance=models.Distance.COSINE)
                   for k, v in meta["vectors"].items()}
        sparse = {k: models.SparseVectorParams(modifier=models.Modifier.IDF if v["idf"] else None)
                  for k, v in meta["sparse_vectors"].items()}
        return _Collection(_Config(_Params(vectors, sparse), meta.get("metadata") or {}))

    def delete_collection(self, name: str) -> bool:
        shard = self._shards.pop(name, None)
        if shard is not None:
            shard.close()
        self._meta_path(name).unlink(missing_ok=True)
        shutil.rmtree(self.root / name, ignore_errors=True)
        return True

    def create_payload_index(self, name: str, key: str, schema=None) -> None:
        self._shard(name).update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))

    # -- points ----------------------------------------------------------------------------------

    def _ensure_room(self, nbytes: int) -> None:
        """`OSError(ENOSPC)` (one line at the command line) before a write the disk has no room for."""
        free = shutil.disk_usage(self.root).free
        if free < nbytes + ROOM_FLOOR:
            raise OSError(errno.ENOSPC, f"No space left on device: the store needs {(nbytes + ROOM_FLOOR) >> 20} MB "
                                        f"free for this write, {free >> 20} MB are", str(self.root))

    def upsert(self, name: str, points: list[models.PointStruct], wait: bool = True) -> None:
        shard = self._shard(name)
        self._ensure_room(sum(len(json.dumps(p.payload or {})) + 8 * sum(
            len(v) if isinstance(v, list) else 2 * len(v.indices) for v in (p.vector or {}).values())
            for p in points) * 3)
        for start in range(0, len(points), _BATCH):
            shard.update(qe.UpdateOperation.upsert_points([
                qe.Point(str(p.id), {k: _vector(v) for k, v in (p.vector or {}).items()}, p.payload or {})
                for p in points[start: start + _BATCH]]))

    def delete(self, name: str, points_selector, wait: bool = True) -> None:
        shard = self._shard(name)
        if isinstance(points_selector, models.PointIdsList):
            ids = [str(i) for i in points_selector.points]
            for start in range(0, len(ids), _BATCH):
                shard.update(qe.UpdateOperation.delete_points(ids[start: start + _BATCH]))
        elif isinstance(points_selector, models.FilterSelector):
            shard.update(qe.UpdateOperation.delete_points_by_filter(edge_filter(points_selector.filter)))
        else:
            raise Untranslated(f"points selector {type(points_selector).__name__}")

    def retrieve(self, name: str, ids, with_payload=True, with_vectors=False) -> list[_Point]:
        records = self._shard(name).retrieve([str(i) for i in ids], with_payload=with_payload,
                                             with_vector=_with_vector(with_vectors))
        return [_Point(str(r.id), r.payload, _vectors_of(r) if with_vectors else None) for r in records]

    def scroll(self, name: str, limit: int = 10, offset=None, with_payload=True, with_vectors=False,
               scroll_filter: models.Filter | None = None) -> tuple[list[_Point], str | None]:
        records, following = self._shard(name).scroll(qe.ScrollRequest(
            offset=str(offset) if offset is not None else None, limit=limit, filter=edge_filter(scroll_filter),
            with_payload=with_payload, with_vector=_with_vector(with_vectors)))
        points = [_Point(str(r.id), r.payload, _vectors_of(r) if with_vectors else None) for r in records]
        return points, (str(following) if following is not None else None)

    def count(self, name: str, count_filter: models.Filter | None = None, exact: bool = True) -> _Count:
        return _Count(self._shard(name).count(qe.CountRequest(exact=True, filter=edge_filter(count_filter))))

    def query_points(self, name: str, query=None, using: str | None = None, prefetch=None, limit: int = 10,
                     query_filter: models.Filter | None = None, with_payload=True,
                     with_vectors=False) -> _Response:
        request = _edge_request(query, using, prefetch, limit, query_filter, with_payload, with_vectors)
        return _response(self._shard(name).query(request), limit, with_vectors)

    def query_batch_points(self, name: str, requests: Sequence[models.QueryRequest]) -> list[_Response]:
        """`query_points` for each request, run by Edge as one batch (as a Qdrant server runs one HTTP call)."""
        if not requests:
            return []
        found = self._shard(name).query_batch(qe.QueryBatchRequest([
            _edge_request(r.query, r.using, r.prefetch, r.limit, r.filter, r.with_payload, r.with_vector)
            for r in requests]))
        return [_response(points, r.limit, r.with_vector) for points, r in zip(found, requests, strict=True)]

    # -- lifetime --------------------------------------------------------------------------------

    def optimize(self, name: str) -> bool:
        """Build the collection's indexes now (HNSW, payload) instead of on the first searches."""
        return self._shard(name).optimize()

    def close(self) -> None:
        for shard in self._shards.values():
            shard.flush()
            shard.close()
        self._shards.clear()
        self.lock.release()
