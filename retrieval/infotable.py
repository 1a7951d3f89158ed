"""The information table of one report run: every source the conversations found.

STORM collects each answer's search results into a table keyed by URL, merging
the snippets of one URL, and later retrieves from it per section. Here the table
is a Qdrant collection (`infotable-<run id>`, in the same store as the corpus, so
embedded mode shares the one client), with the same dense + BM25 vectors as
passages. A point id is derived from the URL and the snippet's sha256, so adding
the same snippet twice (a retried turn, a resumed run) writes it once.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from pydantic import BaseModel, Field
from qdrant_client import models

from retrieval.documents import Passage, sha256_text
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.errors import RaystormError
from retrieval.store import SPARSE_VECTOR, PassageStore

_ID_NAMESPACE = uuid.UUID("2d0a4f1e-8b7c-4c39-a7f5-3f0e9c1d6b42")
SCHEMA = "raystorm.infotable/1"


class Snippet(BaseModel):
    """One piece of a source, with its exact place: what a citation points at."""

    url: str  # the passage's URL, or its path when it has none
    title: str
    text: str
    path: str
    line_start: int
    line_end: int
    passage_id: str
    heading_path: list[str] = Field(default_factory=list)
    record: int | None = None

    @classmethod
    def from_passage(cls, p: Passage) -> "Snippet":
        return cls(url=p.source, title=p.title, text=p.text, path=p.path, line_start=p.line_start,
                   line_end=p.line_end, passage_id=p.passage_id, heading_path=p.heading_path, record=p.record)

    @property
    def point_id(self) -> str:
        return str(uuid.uuid5(_ID_NAMESPACE, f"{self.url}\n{sha256_text(self.text)}"))

    def embedding_text(self) -> str:
        context = " > ".join([self.title, *self.heading_path])
        return f"{context}\n{self.text}"


class InfoEntry(BaseModel):
    """All snippets of one URL (STORM's url_to_info value)."""

    url: str
    title: str
    description: str = ""
    snippets: list[Snippet]


def table_name(run_id: str) -> str:
    """The collection of a run's table; `run_id` is any stable text (e.g. topic slug + hash)."""
    safe = re.sub(r"[^a-z0-9-]+", "-", run_id.lower()).strip("-")
    if not safe:
        raise RaystormError(f"run id {run_id!r} has no letters or digits to name a table with")
    return f"infotable-{safe}"


class InformationTable:
    """Snippets deduplicated by URL, searchable like the corpus. Not thread-safe: one caller at a time."""

    def __init__(self, store: PassageStore, collection: str, dense: DenseEmbedder, sparse: SparseEmbedder,
                 fusion_k: int = 60):
        self.store = store
        self.collection = collection
        self.dense = dense
        self.sparse = sparse
        self.fusion_k = fusion_k

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
        unique = list({s.point_id: s for s in snippets}.values())
        if not unique:
            return 0
        self._ensure()
        known = {str(p.id) for p in self.store.client.retrieve(self.collection, ids=[s.point_id for s in unique])}
        todo = [s for s in unique if s.point_id not in known]
        if todo:
            texts = [s.embedding_text() for s in todo]
            points = [
                models.PointStruct(
                    id=s.point_id,
                    vector={self.dense.vector_name: d, SPARSE_VECTOR: models.SparseVector(indices=sp[0], values=sp[1])},
                    payload=s.model_dump(mode="json"),
                )
                for s, d, sp in zip(todo, self.dense.embed(texts), self.sparse.embed(texts), strict=True)
            ]
            self.store.client.upsert(self.collection, points=points, wait=True)
        return len(todo)

    def __len__(self) -> int:
        if not self.store.client.collection_exists(self.collection):
            return 0
        return self.store.client.count(self.collection, exact=True).count

    def search(self, queries: Sequence[str], k: int) -> list[Snippet]:
        """Up to `k` snippets for `queries` together: hybrid search per query, fused by reciprocal rank."""
        queries = [q for q in queries if q.strip()]
        if k < 1:
            raise RaystormError(f"k must be at least 1, got {k}")
        if not queries or len(self) == 0:
            return []
        fused: dict[str, float] = {}
        found: dict[str, Snippet] = {}
        for query in queries:
            for rank, (pid, snippet) in enumerate(self._search_one(query, k), start=1):
                fused[pid] = fused.get(pid, 0.0) + 1.0 / (self.fusion_k + rank)
                found[pid] = snippet
        order = sorted(fused, key=lambda pid: (-fused[pid], pid))
        return [found[pid] for pid in order[:k]]

    def _search_one(self, query: str, k: int) -> list[tuple[str, Snippet]]:
        dense = self.dense.embed_query(query)
        sparse = self.sparse.embed_query(query)
        client = self.store.client
        if sparse[0]:
            response = client.query_points(
                self.collection,
                prefetch=[models.Prefetch(query=dense, using=self.dense.vector_name, limit=max(4 * k, 40)),
                          models.Prefetch(query=models.SparseVector(indices=sparse[0], values=sparse[1]),
                                          using=SPARSE_VECTOR, limit=max(4 * k, 40))],
                query=models.FusionQuery(fusion=models.Fusion.RRF), limit=k)
        else:  # only stopwords: BM25 has nothing to match
            response = client.query_points(self.collection, query=dense, using=self.dense.vector_name, limit=k)
        return [(str(p.id), Snippet.model_validate(p.payload)) for p in response.points]

    def snippets(self) -> list[Snippet]:
        """Every snippet, in a stable order (by URL, then place in the source)."""
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
        return sorted(out, key=lambda s: (s.url, s.record or 0, s.line_start, s.line_end, s.passage_id))

    def url_to_info(self) -> dict[str, InfoEntry]:
        """The table as STORM's url_to_info: URL → title and merged snippets."""
        return group_by_url(self.snippets())

    def drop(self) -> None:
        if self.store.client.collection_exists(self.collection):
            self.store.client.delete_collection(self.collection)


def group_by_url(snippets: Sequence[Snippet]) -> dict[str, InfoEntry]:
    """Snippets merged per URL, first-seen order of URLs, no snippet twice."""
    out: dict[str, InfoEntry] = {}
    for s in snippets:
        entry = out.setdefault(s.url, InfoEntry(url=s.url, title=s.title, snippets=[],
                                                description=" > ".join(s.heading_path)))
        if all(x.point_id != s.point_id for x in entry.snippets):
            entry.snippets.append(s)
    return out


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

    async def url_to_info(self) -> dict[str, InfoEntry]:
        return await self._call(self.table.url_to_info)

    async def drop(self) -> None:
        await self._call(self.table.drop)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
