"""The passage store: one Qdrant collection per corpus, dense + BM25 vectors.

Qdrant's own engine embedded on disk by default (Qdrant Edge, `retrieval.edge`: one
owner per data dir); a Qdrant server or cluster when a URL is given. Either way the
engine does all the searching: HNSW, BM25 with IDF, payload filters and the hybrid
fusion (RRF). A data dir written by qdrant-client's local mode (raystorm before the
Edge engine) is refused until `raystorm collections migrate` has copied it.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from pydantic import BaseModel
from qdrant_client import QdrantClient, models

from retrieval.config import StoreSettings, check_collection_name  # noqa: F401  (re-exported)
from retrieval.documents import Passage
from retrieval.errors import CollectionNotFound, EmptyCollection, RaystormError
from retrieval.query import SearchFilter, SearchHit, SearchMode  # noqa: F401  (re-exported)

SPARSE_VECTOR = "bm25"
_PAYLOAD_KEYS = ("doc_id", "path", "url", "tags", "title")


def qdrant_filter(flt: SearchFilter) -> models.Filter | None:
    """The Qdrant filter for `flt` (None: it keeps everything)."""
    must, must_not = [], []
    if flt.doc_ids:
        must.append(models.FieldCondition(key="doc_id", match=models.MatchAny(any=flt.doc_ids)))
    if flt.sources:
        must.append(models.Filter(should=[
            models.FieldCondition(key="path", match=models.MatchAny(any=flt.sources)),
            models.FieldCondition(key="url", match=models.MatchAny(any=flt.sources))]))
    if flt.tags:
        must.append(models.FieldCondition(key="tags", match=models.MatchAny(any=flt.tags)))
    if flt.exclude_urls:
        must_not.append(models.FieldCondition(key="url", match=models.MatchAny(any=flt.exclude_urls)))
    return models.Filter(must=must or None, must_not=must_not or None) if (must or must_not) else None


class CollectionInfo(BaseModel):
    name: str
    passages: int
    dense_model: str | None = None
    dense_vector: str | None = None


class PassageStore:
    """Typed access to the Qdrant collections holding passages."""

    def __init__(self, settings: StoreSettings, client: QdrantClient | None = None):
        self.settings = settings
        self._client = client

    @property
    def client(self) -> QdrantClient:
        """qdrant-client for a server; for the embedded store, `EdgeClient`, which speaks the same API."""
        if self._client is None:
            if self.settings.qdrant_url:
                self._client = QdrantClient(url=self.settings.qdrant_url, api_key=self.settings.qdrant_api_key)
            else:
                from retrieval.edge import EdgeClient, StoreInUse
                from retrieval.migrate import refuse_local_mode

                refuse_local_mode(self.settings)
                try:
                    self._client = EdgeClient(self.settings.edge_path)
                except StoreInUse as exc:
                    raise RaystormError(
                        f"the embedded Qdrant store at {self.settings.edge_path} is {exc}; wait for it "
                        f"(a `raystorm serve` service holds it until "
                        f"`raystorm serve -c NAME --address ADDR --stop`, `raystorm web` and `raystorm mcp` "
                        f"while they run), or use a Qdrant server with --qdrant-url") from exc
        return self._client

    def note(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        """Tell commands waiting for this embedded store how far its holder is (a server store: nothing
        waits, so nothing to tell)."""
        lock = getattr(self.client, "lock", None)
        if lock is not None:
            lock.note(stage, done, total)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- collections ---------------------------------------------------------------------------

    def collections(self) -> list[CollectionInfo]:
        names = sorted(c.name for c in self.client.get_collections().collections)
        return [self.info(n) for n in names]

    def exists(self, name: str) -> bool:
        return self.client.collection_exists(check_collection_name(name))

    def info(self, name: str) -> CollectionInfo:
        if not self.exists(name):
            raise CollectionNotFound(name)
        details = self.client.get_collection(name)
        vectors = details.config.params.vectors
        dense = next(iter(vectors), None) if isinstance(vectors, dict) else None
        meta = details.config.metadata or {}
        return CollectionInfo(name=name, passages=self.client.count(name, exact=True).count,
                              dense_model=meta.get("dense_model"), dense_vector=dense)

    def require(self, name: str, dense_vector: str | None = None) -> CollectionInfo:
        """The collection, non-empty and embedded with the expected model, or a clear error."""
        info = self.info(name)
        if info.passages == 0:
            raise EmptyCollection(name)
        if dense_vector and info.dense_vector != dense_vector:
            raise RaystormError(f"collection '{name}' was embedded with '{info.dense_model}', not the "
                                f"configured model: pass --dense-model {info.dense_model}")
        return info

    def ensure(self, name: str, dense_vector: str, dense_model: str, dimension: int) -> None:
        if self.exists(name):
            self.require_model(name, dense_vector)
            return
        self.client.create_collection(
            name,
            vectors_config={dense_vector: models.VectorParams(size=dimension, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={"dense_model": dense_model, "schema": "raystorm.passages/1"},
        )
        for key in _PAYLOAD_KEYS:  # the fields searches filter by
            self.client.create_payload_index(name, key, models.PayloadSchemaType.KEYWORD)

    def require_model(self, name: str, dense_vector: str) -> None:
        info = self.info(name)
        if info.dense_vector != dense_vector:
            raise RaystormError(f"collection '{name}' was embedded with '{info.dense_model}': ingest with "
                                f"--dense-model {info.dense_model}, or into a new collection")

    def drop(self, name: str) -> None:
        self.client.delete_collection(name)

    # -- points --------------------------------------------------------------------------------

    def ids_by_path(self, name: str) -> dict[str, set[str]]:
        """Every stored passage id, grouped by the file it came from."""
        return self.scan(name)[0]

    def scan(self, name: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """In one pass: passage ids by file, and the URLs each file's passages claim."""
        ids: dict[str, set[str]] = {}
        urls: dict[str, set[str]] = {}
        offset = None
        while True:
            points, offset = self.client.scroll(name, limit=1024, offset=offset, with_payload=["path", "url"],
                                                with_vectors=False)
            for p in points:
                ids.setdefault(p.payload["path"], set()).add(str(p.id))
                if p.payload.get("url"):
                    urls.setdefault(p.payload["path"], set()).add(p.payload["url"])
            if offset is None:
                return ids, urls

    def upsert(self, name: str, dense_vector: str, passages: Sequence[Passage],
               dense: Sequence[Sequence[float]], sparse: Sequence[tuple[list[int], list[float]]]) -> None:
        points = [
            models.PointStruct(
                id=p.passage_id,
                vector={dense_vector: list(d), SPARSE_VECTOR: models.SparseVector(indices=s[0], values=s[1])},
                payload=p.model_dump(mode="json"),
            )
            for p, d, s in zip(passages, dense, sparse, strict=True)
        ]
        if points:
            self.client.upsert(name, points=points, wait=True)

    def delete(self, name: str, ids: Iterable[str]) -> None:
        ids = list(ids)
        if ids:
            self.client.delete(name, points_selector=models.PointIdsList(points=ids), wait=True)

    def get(self, name: str, ids: Sequence[str]) -> list[Passage]:
        points = self.client.retrieve(name, ids=list(ids), with_payload=True)
        by_id = {str(p.id): Passage.model_validate(p.payload) for p in points}
        return [by_id[i] for i in ids if i in by_id]

    # -- search --------------------------------------------------------------------------------

    def query(self, name: str, mode: SearchMode, limit: int, dense_vector: str,
              dense: Sequence[float] | None, sparse: tuple[list[int], list[float]] | None,
              flt: SearchFilter | None = None, with_vectors: bool = False,
              fusion_k: int = 60, fusion_weights: tuple[float, float] = (1.0, 1.0),
              prefetch_limit: int | None = None) -> list[tuple[models.ScoredPoint, Passage]]:
        if mode not in ("dense", "sparse", "hybrid"):
            raise RaystormError(f"unknown search mode '{mode}': use dense, sparse or hybrid")
        query_filter = qdrant_filter(flt) if flt else None
        vectors = [dense_vector] if with_vectors else False
        depth = prefetch_limit or max(limit * 4, 40)  # how deep each half of a hybrid search goes
        if mode == "dense":
            points = self.client.query_points(name, query=list(dense), using=dense_vector, limit=limit,
                                              query_filter=query_filter, with_vectors=vectors).points
        else:
            sparse_vec = models.SparseVector(indices=sparse[0], values=sparse[1]) if sparse else None
            if mode == "sparse":
                points = self.client.query_points(name, query=sparse_vec, using=SPARSE_VECTOR, limit=limit,
                                                  query_filter=query_filter, with_vectors=vectors).points
            else:
                points = self.client.query_points(
                    name, prefetch=[
                        models.Prefetch(query=list(dense), using=dense_vector, limit=depth, filter=query_filter),
                        models.Prefetch(query=sparse_vec, using=SPARSE_VECTOR, limit=depth, filter=query_filter)],
                    query=models.RrfQuery(rrf=models.Rrf(k=fusion_k, weights=list(fusion_weights))),
                    limit=limit, with_vectors=vectors).points
        return [(p, Passage.model_validate(p.payload)) for p in points]
