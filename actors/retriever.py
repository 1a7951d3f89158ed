"""Searching the corpus actors from anywhere: `PoolRetriever`, and `LocalEncoder` under it.

Light on purpose (no Qdrant client here), so the actors that only ask for
passages start fast. Each caller embeds its own queries with the store's models
(loaded once per process, on first use) and the corpus actor only searches.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from actors.pool import ActorPool
from retrieval.config import StoreSettings
from retrieval.query import DEFAULT_MODE, QueryEncoder, QueryVectors, SearchAsk, SearchFilter, SearchHit, SearchMode

SEARCH_TIMEOUT_S = 60.0


class LocalEncoder:
    """Embeds queries in the calling process with the store's models, loaded there on first use.

    Picklable: the models stay behind when it is shipped, and load again where it lands."""

    def __init__(self, store: StoreSettings | None):
        self.store = store
        self._encoder: QueryEncoder | None = None

    def __getstate__(self) -> dict:
        return {"store": self.store, "_encoder": None}

    def _ready(self) -> QueryEncoder:
        if self._encoder is None:
            self._encoder = QueryEncoder.for_store(self.store)
        return self._encoder

    def warm(self) -> None:
        """Load the models now (an actor's start-up), not on its first search."""
        if self.store is not None:
            self._ready().warm()

    async def encode(self, query: str, mode: SearchMode, mmr: bool = False) -> QueryVectors | None:
        """The query's vectors; None without store settings (the corpus actor embeds it then)."""
        if self.store is None or not query.strip():
            return None
        return await asyncio.to_thread(self._ready().encode, query, mode, mmr)

    async def encode_many(self, queries: list[str], mode: SearchMode, mmr: bool = False) -> list[QueryVectors | None]:
        """`encode` for each query, in one model run on one worker thread (one hand-off, not one each)."""
        if self.store is None:
            return [None] * len(queries)

        def run() -> list[QueryVectors | None]:
            given = [q for q in queries if q.strip()]
            vectors = iter(self._ready().encode_many(given, mode, mmr))
            return [next(vectors) if q.strip() else None for q in queries]

        return await asyncio.to_thread(run)


class SearchHost(Protocol):
    """What the actors behind a `PoolRetriever` expose (`actors.corpus.CorpusActor`)."""

    def search(self, query: str, k: int, mode: SearchMode | None, flt: SearchFilter | None,
               mmr: bool, vectors: QueryVectors | None = None) -> list[SearchHit]: ...

    def search_many(self, asks: list[SearchAsk], mode: SearchMode | None, mmr: bool,
                    vectors: list[QueryVectors | None]) -> list[list[SearchHit]]: ...


class PoolRetriever:
    """A `Retriever` over corpus actors; picklable, so other actors search through it too.

    With `store` (the collection's settings) each caller embeds its own queries."""

    def __init__(self, pool: ActorPool, collection: str, mode: SearchMode | None = None, mmr: bool = False,
                 timeout_s: float = SEARCH_TIMEOUT_S, store: StoreSettings | None = None):
        self.pool = pool
        self.collection = collection
        self.mode = mode
        self.mmr = mmr
        self.timeout_s = timeout_s
        self.encoder = LocalEncoder(store)

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        vectors = await self.encoder.encode(query, self.mode or DEFAULT_MODE, self.mmr)
        return await self.pool.call(SearchHost.search, query, k, self.mode, flt, self.mmr, vectors, stage="search",
                                    timeout_s=self.timeout_s, idempotent=True)

    async def search_many(self, asks: list[SearchAsk]) -> list[list[SearchHit]]:
        """`search` for each ask (an expert turn's queries, a stage's readings), the queries embedded in one
        model run and searched in one call to a corpus actor (`retrieval.query.search_each`)."""
        vectors = await self.encoder.encode_many([a.query for a in asks], self.mode or DEFAULT_MODE, self.mmr)
        return await self.pool.call(SearchHost.search_many, asks, self.mode, self.mmr, vectors,
                                    stage="search", timeout_s=self.timeout_s, idempotent=True)
