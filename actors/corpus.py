"""`Corpus` actors: hybrid search over an ingested collection, as a pool.

Embedded Qdrant is single-process, so in embedded mode the pool has one actor,
which owns the store folder; with a Qdrant server every actor opens its own client.
"""

from __future__ import annotations

import asyncio
import itertools

import ray

from retrieval.config import StoreSettings
from retrieval.errors import RaystormError
from retrieval.search import Corpus, SearchSettings
from retrieval.store import SearchFilter, SearchHit, SearchMode

SEARCH_TIMEOUT_S = 60.0


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=3)
class CorpusActor:
    """Hosts one `retrieval.search.Corpus`; searches are read-only, so retries are safe."""

    def __init__(self, settings: StoreSettings, collection: str, search: SearchSettings | None = None):
        self._corpus = Corpus(settings, collection, search=search)
        self._corpus.check()

    def search(self, query: str, k: int, mode: SearchMode | None, flt: SearchFilter | None,
               mmr: bool) -> list[SearchHit]:
        return self._corpus.search(query, k=k, mode=mode, flt=flt, mmr=mmr)

    def ready(self) -> bool:
        return True


class CorpusPool:
    """A `Retriever` over several `CorpusActor`s, round robin, every call bounded by a timeout."""

    def __init__(self, settings: StoreSettings, collection: str, size: int = 1,
                 search: SearchSettings | None = None, mode: SearchMode | None = None, mmr: bool = False,
                 timeout_s: float = SEARCH_TIMEOUT_S):
        if not settings.qdrant_url:
            size = 1  # one owner for the embedded store folder
        self.collection = collection
        self.mode = mode
        self.mmr = mmr
        self.timeout_s = timeout_s
        self.actors = [CorpusActor.options(name=None).remote(settings, collection, search) for _ in range(size)]
        self._next = itertools.cycle(range(size))

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        try:
            ray.get([a.ready.remote() for a in self.actors], timeout=timeout_s)
        except ray.exceptions.RayActorError as exc:
            raise RaystormError(f"Corpus actor for '{self.collection}' failed to start: {exc.error_msg if hasattr(exc, 'error_msg') else exc}") from exc
        except ray.exceptions.GetTimeoutError as exc:
            raise RaystormError(f"Corpus actor for '{self.collection}' not ready after {timeout_s:.0f} s") from exc

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        actor = self.actors[next(self._next)]
        try:
            return await asyncio.wait_for(actor.search.remote(query, k, self.mode, flt, self.mmr), self.timeout_s)
        except asyncio.TimeoutError as exc:
            raise RaystormError(f"Corpus actor search for '{query[:60]}' timed out after {self.timeout_s:.0f} s "
                                f"(collection '{self.collection}')") from exc
