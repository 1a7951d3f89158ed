"""Web research on the cluster: one `WebResearchActor` per run, on the node that holds the data dir.

It sends each query to the search engine, has the pages downloaded by fetcher actors spread over
the cluster (`actors.fetcher.FetcherPool`, sharing the cluster's per-site limits), writes their
snapshots on its own disk, and has them ingested and searched by the store's owner: in embedded
mode the `Corpus` actor on the same node (one process owns the store folder), with a Qdrant
server this actor itself. Experts, hoppers and report agents search through a `WebActorRetriever`,
alone (`--source web`) or fused with the collection (`--source hybrid`).

    actor = start_web_research(store, source, home, corpus_handle, driver_node)
    retriever = WebActorRetriever(actor, store)
    hits = await retriever.search("storm surge barriers", k=8)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import ray

from actors.calls import call
from actors.pool import ActorOptions
from actors.retriever import LocalEncoder
from agents.web.records import WebQuery, WebSource
from retrieval.config import StoreSettings
from retrieval.query import SearchFilter, SearchHit

WEB_SEARCH_TIMEOUT_S = 900.0  # one query: the engine, then its pages each waiting their site's turn
WEB_OPTIONS = ActorOptions(max_restarts=3, max_task_retries=0, max_concurrency=64)


class CorpusActorLibrary:
    """The `WebLibrary` of embedded mode: the store's owner ingests and searches the snapshots."""

    def __init__(self, corpus: ray.actor.ActorHandle, collection: str, timeout_s: float = WEB_SEARCH_TIMEOUT_S):
        self.corpus = corpus
        self.collection = collection
        self.timeout_s = timeout_s

    async def add(self, paths: Sequence[str]) -> None:
        if paths:
            await call(self.corpus.ingest_paths.remote(list(paths), self.collection), actor="Corpus",
                       method="ingest_paths", stage="web", timeout_s=self.timeout_s)

    async def search(self, query: str, k: int, flt: SearchFilter | None) -> list[SearchHit]:
        return await call(self.corpus.search_in.remote(self.collection, query, k, flt), actor="Corpus",
                          method="search_in", stage="web", timeout_s=self.timeout_s)


@ray.remote(**WEB_OPTIONS.ray_options())
class WebResearchActor:
    """Hosts the run's `agents.web.research.WebRetriever`; its fetcher actors are its own."""

    def __init__(self, store: StoreSettings, source: WebSource, home: str, corpus: ray.actor.ActorHandle | None,
                 fetchers: int, slots_per_fetcher: int):
        from actors.fetcher import FetcherPool
        from agents.web.research import LocalWebLibrary, WebRetriever

        self.fetchers = FetcherPool.create(source.fetch, Path(home) / "web", actors=fetchers,
                                           slots_per_actor=slots_per_fetcher)
        if corpus is not None:
            library = CorpusActorLibrary(corpus, source.collection)
        else:  # a Qdrant server: any process may write to it
            from retrieval.ingest import Ingestor

            library = LocalWebLibrary(Ingestor(store), source.collection)
        self.web = WebRetriever(source.engine, self.fetchers, library, source.results_per_query)

    async def search(self, query: str, k: int, flt: SearchFilter | None) -> list[SearchHit]:
        return await self.web.search(query, k, flt)

    async def version(self) -> str:
        return await self.web.version()

    async def take_queries(self) -> list[WebQuery]:
        return self.web.take_queries()

    def ready(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def close(self) -> None:
        """End the fetcher actors and drop their shared robots.txt answers from the cluster's gate."""
        self.fetchers.kill()


def start_web_research(store: StoreSettings, source: WebSource, home: str, corpus: ray.actor.ActorHandle | None,
                       node: str, fetchers: int = 2, slots_per_fetcher: int = 4) -> ray.actor.ActorHandle:
    """The run's web research actor, on `node` (whose disk holds the data dir)."""
    options = WEB_OPTIONS.model_copy(update={"pin_node": node})
    return WebResearchActor.options(**options.ray_options()).remote(store, source, home, corpus, fetchers,
                                                                    slots_per_fetcher)


class WebActorRetriever:
    """A `Retriever` over the run's `WebResearchActor`; picklable, so experts search through it.

    `encoder`: the store's query models, for the run's tables (as `PoolRetriever.encoder`)."""

    def __init__(self, actor: ray.actor.ActorHandle, store: StoreSettings | None,
                 timeout_s: float = WEB_SEARCH_TIMEOUT_S):
        self.actor = actor
        self.timeout_s = timeout_s
        self.encoder = LocalEncoder(store)

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        return await call(self.actor.search.remote(query, k, flt), actor="WebResearch", method="search",
                          stage="search", timeout_s=self.timeout_s)

    async def version(self) -> str:
        return await call(self.actor.version.remote(), actor="WebResearch", method="version", stage="checkpoints",
                          timeout_s=60.0)
