"""What a search is, apart from where it runs: modes, filters, hits, query vectors, `Retriever`.

Light on purpose (no Qdrant client here): the Ray actors that only ask for
passages (writers, experts, hoppers) import this, not the store, and start faster.
`QueryEncoder` embeds a query as the collection's `Corpus` would, so a caller can
embed its own queries and leave the store owner only the searching.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal, NamedTuple, Protocol

from pydantic import BaseModel, Field

from retrieval.config import StoreSettings
from retrieval.documents import Passage
from retrieval.embeddings import DenseEmbedder, SparseEmbedder, shared_dense
from retrieval.graph.model import PassageStatus

SearchMode = Literal["dense", "sparse", "hybrid"]
DEFAULT_MODE: SearchMode = "hybrid"


class SearchFilter(BaseModel):
    """Payload filters: keep only these documents/sources/tags, drop these URLs."""

    doc_ids: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)  # file paths or URLs
    tags: list[str] = Field(default_factory=list)
    exclude_urls: list[str] = Field(default_factory=list)  # e.g. the ground-truth article in evaluation


class SearchHit(BaseModel):
    rank: int
    score: float
    passage: Passage
    status: PassageStatus | None = None  # current / superseded / amended, from the evidence graph (None: no graph)


class QueryVectors(BaseModel):
    """A query's dense and BM25 vectors, as `QueryEncoder.encode` makes them (None: not needed)."""

    dense: list[float] | None = None
    sparse: tuple[list[int], list[float]] | None = None


class QueryEncoder:
    """Embeds queries the way a collection's `Corpus` would: same dense model, same BM25."""

    def __init__(self, dense: DenseEmbedder, sparse: SparseEmbedder):
        self.dense = dense
        self.sparse = sparse

    @classmethod
    def for_store(cls, settings: StoreSettings) -> "QueryEncoder":
        """This process's shared embedders for the store's models (one model load per process)."""
        return cls(shared_dense(settings.dense_model, settings.models_dir), SparseEmbedder(settings.models_dir))

    def warm(self) -> None:
        """Load the query models now (an actor's start-up), not on the first query."""
        self.dense.embed_query("warm")
        self.sparse.embed_query("warm")

    def encode(self, query: str, mode: SearchMode, mmr: bool = False) -> QueryVectors:
        return QueryVectors(dense=self.dense.embed_query(query) if mode in ("dense", "hybrid") or mmr else None,
                            sparse=self.sparse.embed_query(query) if mode in ("sparse", "hybrid") else None)

    def encode_many(self, queries: Sequence[str], mode: SearchMode, mmr: bool = False) -> list[QueryVectors]:
        """`encode` for each query, the dense vectors in one model run (`DenseEmbedder.embed_queries`)."""
        dense = self.dense.embed_queries(queries) if mode in ("dense", "hybrid") or mmr else [None] * len(queries)
        return [QueryVectors(dense=d, sparse=self.sparse.embed_query(q) if mode in ("sparse", "hybrid") else None)
                for q, d in zip(queries, dense)]


class Retriever(Protocol):
    """What agents search through: a local corpus, or a pool of Ray actors."""

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]: ...


class SearchAsk(NamedTuple):
    """One search of several asked together (`search_each`)."""

    query: str
    k: int = 5
    flt: SearchFilter | None = None


async def search_each(retriever: Retriever, asks: Sequence[SearchAsk]) -> list[list[SearchHit]]:
    """Each ask's hits, in order: in one call where the retriever takes several (`search_many`: a pool of
    corpus actors, where each search is otherwise an actor call of its own), else all at once."""
    if not asks:
        return []
    search_many = getattr(retriever, "search_many", None)
    if search_many is not None:
        return await search_many(list(asks))
    return list(await asyncio.gather(*(retriever.search(a.query, k=a.k, flt=a.flt) for a in asks)))
