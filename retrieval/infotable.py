"""The information table of one report run: every source the conversations found.

STORM collects each answer's search results into a table keyed by URL, merging
the snippets of one URL, and later retrieves from it per section. Here the table
is a Qdrant collection (`infotable-<run id>`, in the same store as the corpus, so
embedded mode shares the one client), with the same dense + BM25 vectors as
passages. A point id is derived from the source (URL and file) and the snippet's sha256, so adding
the same snippet twice (a retried turn, a resumed run) writes it once.

A snippet found in the corpus already has its vectors there: with `source` (the
corpus collection) the table copies them instead of embedding the text again,
when the stored passage reads exactly as the snippet does.
"""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from qdrant_client import models

from retrieval.documents import Passage
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.errors import RaystormError
from retrieval.query import QueryVectors
from retrieval.snippets import InfoEntry, Snippet, group_by_url, table_name  # noqa: F401  (re-exported)
from retrieval.store import SPARSE_VECTOR, PassageStore

SCHEMA = "raystorm.infotable/1"


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


class InformationTable:
    """Snippets deduplicated per source (URL and file), searchable like the corpus. Not thread-safe: one caller at a time."""

    def __init__(self, store: PassageStore, collection: str, dense: DenseEmbedder, sparse: SparseEmbedder,
                 fusion_k: int = 60, source: str | None = None):
        self.store = store
        self.collection = collection
        self.dense = dense
        self.sparse = sparse
        self.fusion_k = fusion_k
        self.source = source

    def _ensure(self) -> None:
        client = self.store.client
        if client.collection_exists(self.collection):
            return
        client.create_collection(
            self.collection,
            vectors_config={self.dense.vector_name: models.VectorParams(size=self.dense.dimension,
                                                                        distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={"dense_model": self.dense.model_name, "schema": SCHEMA},
        )

    def add(self, snippets: Sequence[Snippet]) -> int:
        """Store `snippets`; returns how many were new. Idempotent."""
        unique = {s.point_id: s for s in snippets}  # (a point id hashes the text: computed once per snippet)
        if not unique:
            return 0
        self._ensure()
        known = {str(p.id) for p in self.store.client.retrieve(self.collection, ids=list(unique))}
        todo = {point: s for point, s in unique.items() if point not in known}
        if todo:
            vectors = self._stored_vectors(todo)
            fresh = [(point, s) for point, s in todo.items() if point not in vectors]
            texts = [s.embedding_text() for _, s in fresh]
            for (point, _), d, (indices, values) in zip(fresh, self.dense.embed(texts), self.sparse.embed(texts),
                                                        strict=True):
                vectors[point] = {self.dense.vector_name: d,
                                  SPARSE_VECTOR: models.SparseVector(indices=indices, values=values)}
            points = [models.PointStruct(id=point, vector=vectors[point], payload=s.model_dump(mode="json"))
                      for point, s in todo.items()]
            self.store.client.upsert(self.collection, points=points, wait=True)
        return len(todo)

    def _stored_vectors(self, snippets: dict[str, Snippet]) -> dict[str, dict]:
        """Point id -> vectors, for the snippets (by point id) whose passage in `source` embeds the same text."""
        client = self.store.client
        ids = [s.passage_id for s in snippets.values() if _is_uuid(s.passage_id)]
        if not self.source or not ids or not client.collection_exists(self.source):
            return {}
        stored = {str(p.id): p for p in client.retrieve(self.source, ids=list(dict.fromkeys(ids)), with_vectors=True,
                                                       with_payload=["text", "title", "heading_path"])}
        out: dict[str, dict] = {}
        for point, s in snippets.items():
            p = stored.get(s.passage_id)
            vector = p.vector if p is not None and isinstance(p.vector, dict) else {}
            if self.dense.vector_name not in vector or SPARSE_VECTOR not in vector:
                continue  # not from there, or embedded by another model
            reads = Passage.model_construct(text=p.payload.get("text"), title=p.payload.get("title"),
                                            heading_path=p.payload.get("heading_path") or [])
            if reads.embedding_text() == s.embedding_text():
                out[point] = {self.dense.vector_name: vector[self.dense.vector_name],
                              SPARSE_VECTOR: vector[SPARSE_VECTOR]}
        return out

    def __len__(self) -> int:
        if not self.store.client.collection_exists(self.collection):
            return 0
        return self.store.client.count(self.collection, exact=True).count

    def search(self, queries: Sequence[str], k: int,
               vectors: Sequence[QueryVectors] | None = None) -> list[Snippet]:
        """Up to `k` snippets for `queries` together: hybrid search per query, fused by reciprocal rank.

        `vectors`: each query's vectors (dense and BM25), already embedded by the caller."""
        return self.search_many([(queries, k)], None if vectors is None else [vectors])[0]

    def search_many(self, groups: Sequence[tuple[Sequence[str], int]],
                    vectors: Sequence[Sequence[QueryVectors] | None] | None = None) -> list[list[Snippet]]:
        """`search` for each (queries, k) group (`vectors`: each group's, or None), every query of every
        group in one batch request to the store."""
        asks: list[tuple[int, str, int, QueryVectors | None]] = []  # (group, query, k, its vectors)
        for g, (queries, k) in enumerate(groups):
            given = vectors[g] if vectors is not None else None
            if given is not None and len(given) != len(queries):
                raise RaystormError(f"{len(given)} query vectors for {len(queries)} queries")
            if k < 1:
                raise RaystormError(f"k must be at least 1, got {k}")
            asks += [(g, q, k, v) for q, v in zip(queries, given or [None] * len(queries)) if q.strip()]
        out: list[list[Snippet]] = [[] for _ in groups]
        if not asks or not self.store.client.collection_exists(self.collection):
            return out  # (an empty table finds nothing below: no exact count needed first)
        # the queries the caller did not embed: in one model run, not one each
        lacking = list(dict.fromkeys(q for _, q, _, v in asks if v is None or v.dense is None))
        dense = dict(zip(lacking, self.dense.embed_queries(lacking)))
        requests = [self._request(q, k, QueryVectors(dense=dense[q], sparse=v and v.sparse) if q in dense else v)
                    for _, q, k, v in asks]
        responses = self.store.client.query_batch_points(self.collection, requests)
        fused: list[dict[str, float]] = [{} for _ in groups]
        found: dict[str, Snippet] = {}
        for (g, _, _, _), response in zip(asks, responses, strict=True):
            for rank, p in enumerate(response.points, start=1):
                pid = str(p.id)
                fused[g][pid] = fused[g].get(pid, 0.0) + 1.0 / (self.fusion_k + rank)
                if pid not in found:
                    found[pid] = Snippet.model_validate(p.payload)
        for g, (_, k) in enumerate(groups):
            order = sorted(fused[g], key=lambda pid: (-fused[g][pid], pid))
            out[g] = [found[pid] for pid in order[:k]]
        return out

    def _request(self, query: str, k: int, given: QueryVectors | None = None) -> models.QueryRequest:
        dense = given.dense if given and given.dense is not None else self.dense.embed_query(query)
        sparse = given.sparse if given and given.sparse is not None else self.sparse.embed_query(query)
        if not sparse[0]:  # only stopwords: BM25 has nothing to match
            return models.QueryRequest(query=dense, using=self.dense.vector_name, limit=k, with_payload=True)
        return models.QueryRequest(
            prefetch=[models.Prefetch(query=dense, using=self.dense.vector_name, limit=max(4 * k, 40)),
                      models.Prefetch(query=models.SparseVector(indices=sparse[0], values=sparse[1]),
                                      using=SPARSE_VECTOR, limit=max(4 * k, 40))],
            query=models.FusionQuery(fusion=models.Fusion.RRF), limit=k, with_payload=True)

    def snippets(self) -> list[Snippet]:
        """Every snippet, in a stable order (by URL, file, then place in the source)."""
        if not self.store.client.collection_exists(self.collection):
            return []
        out: list[Snippet] = []
        offset = None
        while True:
            points, offset = self.store.client.scroll(self.collection, limit=512, offset=offset,
                                                      with_payload=True, with_vectors=False)
            out += [Snippet.model_validate(p.payload) for p in points]
            if offset is None:
                break
        return sorted(out, key=lambda s: (s.url, s.path, s.record or 0, s.line_start, s.line_end, s.passage_id))

    def url_to_info(self) -> dict[str, InfoEntry]:
        """The table as STORM's url_to_info: URL → title and merged snippets."""
        return group_by_url(self.snippets())

    def drop(self) -> None:
        if self.store.client.collection_exists(self.collection):
            self.store.client.delete_collection(self.collection)


class AsyncInformationTable:
    """An `InformationTable` behind one worker thread: awaitable, one store call at a time."""

    def __init__(self, table: InformationTable):
        self.table = table
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="infotable")

    async def _call(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def add(self, snippets: Sequence[Snippet]) -> int:
        return await self._call(self.table.add, list(snippets))

    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]:
        return await self._call(self.table.search, list(queries), k)

    async def search_many(self, groups: Sequence[tuple[Sequence[str], int]]) -> list[list[Snippet]]:
        return await self._call(self.table.search_many, list(groups))

    async def url_to_info(self) -> dict[str, InfoEntry]:
        return await self._call(self.table.url_to_info)

    async def drop(self) -> None:
        await self._call(self.table.drop)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
