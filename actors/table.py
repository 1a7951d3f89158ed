"""A run's information table as seen from any process: `RemoteTable`, the pipeline's `TableStore`.

The table lives in the corpus store, so its calls go to the Corpus actors: in
embedded mode the one actor that owns the store folder; with `--qdrant-url` any
of the pool's actors, each with its own client to the server. Writes are
idempotent (a snippet's point id is derived from its URL and text hash), so a
retried call, a retried conversation turn or a resumed run never duplicates a
row, and every call is marked safe to repeat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, Sequence

from actors.pool import ActorPool
from actors.retriever import LocalEncoder
from retrieval.query import QueryVectors
from retrieval.snippets import InfoEntry, Snippet, group_by_url

TABLE_TIMEOUT_S = 120.0


class TableHost(Protocol):
    """What the actors behind a `RemoteTable` expose (`actors.corpus.CorpusActor`)."""

    def table_add(self, name: str, snippets: list[Snippet]) -> int: ...

    def table_search(self, name: str, queries: list[str], k: int,
                     vectors: list[QueryVectors] | None = None) -> list[Snippet]: ...

    def table_search_many(self, name: str, groups: list[tuple[list[str], int]],
                          vectors: list[list[QueryVectors]] | None = None) -> list[list[Snippet]]: ...

    def table_snippets(self, name: str) -> list[Snippet]: ...

    def table_count(self, name: str) -> int: ...

    def table_drop(self, name: str) -> None: ...


class RemoteTable:
    """The table `name` hosted by the corpus actors of `pool` (picklable: ship it to any actor).

    `encoder`: embeds search queries here (else the corpus actor does)."""

    def __init__(self, pool: ActorPool, name: str, timeout_s: float = TABLE_TIMEOUT_S,
                 encoder: LocalEncoder | None = None):
        self.pool = pool
        self.name = name
        self.timeout_s = timeout_s
        self.encoder = encoder or LocalEncoder(None)

    async def _call(self, method: Callable[..., Any], *args, stage: str):
        return await self.pool.call(method, self.name, *args, stage=stage, timeout_s=self.timeout_s,
                                    idempotent=True)

    async def add(self, snippets: Sequence[Snippet]) -> int:
        return await self._call(TableHost.table_add, list(snippets), stage="information table")

    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]:
        queries = [q for q in queries if q.strip()]  # the table skips blank ones too
        encoded = await self.encoder.encode_many(queries, "hybrid")
        vectors = None if any(v is None for v in encoded) else encoded
        return await self._call(TableHost.table_search, queries, k, vectors, stage="information table")

    async def search_many(self, groups: Sequence[tuple[Sequence[str], int]]) -> list[list[Snippet]]:
        """`search(queries, k)` for each group, every query embedded in one model run, in one call."""
        groups = [([q for q in queries if q.strip()], k) for queries, k in groups]
        encoded = await self.encoder.encode_many([q for queries, _ in groups for q in queries], "hybrid")
        vectors = None
        if all(v is not None for v in encoded):
            at = iter(encoded)
            vectors = [[next(at) for _ in queries] for queries, _ in groups]
        return await self._call(TableHost.table_search_many, groups, vectors, stage="information table")

    async def snippets(self) -> list[Snippet]:
        return await self._call(TableHost.table_snippets, stage="information table")

    async def count(self) -> int:
        return await self._call(TableHost.table_count, stage="information table")

    async def url_to_info(self) -> dict[str, InfoEntry]:
        return group_by_url(await self.snippets())

    async def drop(self) -> None:
        await self._call(TableHost.table_drop, stage="information table")
