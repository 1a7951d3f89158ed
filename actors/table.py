"""A run's information table as seen from any process: `RemoteTable` (through the store's owner)
or `DirectTable` (its own client to a Qdrant server).

Embedded mode: the Corpus actor owns the store folder, so every table call goes
to it (`RemoteTable`). With `--qdrant-url`, readers and writers may open the
server themselves (`DirectTable`); both have the same async interface. Writes
are idempotent (a snippet's point id is derived from its URL and text hash), so
a retried call, a retried conversation turn or a resumed run never duplicates
a row, and the calls are marked safe to repeat.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, Sequence

from actors.pool import ActorPool
from retrieval.config import StoreSettings
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.infotable import InfoEntry, InformationTable, Snippet, group_by_url
from retrieval.store import PassageStore

TABLE_TIMEOUT_S = 120.0


class AsyncTable(Protocol):
    name: str

    async def add(self, snippets: Sequence[Snippet]) -> int: ...
    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]: ...
    async def snippets(self) -> list[Snippet]: ...
    async def count(self) -> int: ...
    async def url_to_info(self) -> dict[str, InfoEntry]: ...
    async def drop(self) -> None: ...


class RemoteTable:
    """The table `name` hosted by the corpus actors of `pool` (picklable: ship it to any actor)."""

    def __init__(self, pool: ActorPool, name: str, timeout_s: float = TABLE_TIMEOUT_S):
        self.pool = pool
        self.name = name
        self.timeout_s = timeout_s

    async def _call(self, method: str, *args, stage: str):
        return await self.pool.call(method, self.name, *args, stage=stage, timeout_s=self.timeout_s,
                                    idempotent=True)

    async def add(self, snippets: Sequence[Snippet]) -> int:
        return await self._call("table_add", list(snippets), stage="information table")

    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]:
        return await self._call("table_search", list(queries), k, stage="information table")

    async def snippets(self) -> list[Snippet]:
        return await self._call("table_snippets", stage="information table")

    async def count(self) -> int:
        return await self._call("table_count", stage="information table")

    async def url_to_info(self) -> dict[str, InfoEntry]:
        return group_by_url(await self.snippets())

    async def drop(self) -> None:
        await self._call("table_drop", stage="information table")


class DirectTable:
    """The table `name` on a Qdrant server, opened by this process; calls run on one worker thread."""

    def __init__(self, settings: StoreSettings, name: str):
        if not settings.qdrant_url:
            raise ValueError("DirectTable needs a Qdrant server: embedded tables go through the store's owner")
        self.name = name
        self._table = InformationTable(PassageStore(settings), name,
                                       DenseEmbedder(settings.dense_model, settings.models_dir),
                                       SparseEmbedder(settings.models_dir))
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"table-{name}")

    async def _run(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def add(self, snippets: Sequence[Snippet]) -> int:
        return await self._run(self._table.add, list(snippets))

    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]:
        return await self._run(self._table.search, list(queries), k)

    async def snippets(self) -> list[Snippet]:
        return await self._run(self._table.snippets)

    async def count(self) -> int:
        return await self._run(self._table.__len__)

    async def url_to_info(self) -> dict[str, InfoEntry]:
        return group_by_url(await self.snippets())

    async def drop(self) -> None:
        await self._run(self._table.drop)

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self._table.store.close()
