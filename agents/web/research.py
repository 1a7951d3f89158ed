"""`--source web`: a `Retriever` whose searches go to a search engine, whose results are fetched,
kept as snapshots and ingested into a web collection, and whose hits are that collection's passages.

So a web page is cited like a file: its passages carry the page's URL and the line range of its
snapshot (a Markdown file under the data dir), and every step downstream (the information table,
citations, claims, `wiki check`) treats it as any other source. A page is data: its text goes
through the same steps, injection check included, as corpus text.

    web = WebRetriever(SearchEngineSettings(engine="searxng", url="http://127.0.0.1:8888"),
                       fetcher=PageFetcher(...), library=LocalWebLibrary(ingestor, "web"))
    hits = await web.search("flood insurance waiting period", k=8)
    web.queries  # every query sent to the engine, with what came of it

A search that names documents (`flt.doc_ids`, as the persona step does to read the headings of the
related pages it found) only reads the pages already fetched: no new engine query.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from agents.web.fetch import FetchOutcome
from agents.web.providers import SearchEngineSettings, WebResult, search_web
from agents.web.records import RESULTS_PER_QUERY, WebQuery, WebSource
from agents.web.snapshots import url_key
from retrieval.ingest import Ingestor
from retrieval.query import SearchFilter, SearchHit
from retrieval.search import Corpus

class Fetcher(Protocol):
    """In-process `agents.web.fetch.PageFetcher`, or `actors.fetcher.FetcherPool` on the cluster."""

    async def fetch_many(self, urls: Sequence[str]) -> list[FetchOutcome]: ...


class WebLibrary(Protocol):
    """Where fetched snapshots become searchable passages."""

    async def add(self, paths: Sequence[str]) -> None: ...

    async def search(self, query: str, k: int, flt: SearchFilter | None) -> list[SearchHit]: ...


class LocalWebLibrary:
    """Snapshots ingested into a collection of this process's store, searched as any collection is.

    One worker thread does both, so a search never reads the collection halfway through an ingest."""

    def __init__(self, ingestor: Ingestor, collection: str):
        self.ingestor = ingestor
        self.collection = collection
        self._corpus: Corpus | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="web-library")

    async def add(self, paths: Sequence[str]) -> None:
        if paths:
            await asyncio.get_running_loop().run_in_executor(self._pool, self._ingest, list(paths))

    async def search(self, query: str, k: int, flt: SearchFilter | None) -> list[SearchHit]:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._search, query, k, flt)

    def _ingest(self, paths: list[str]) -> None:
        summary = self.ingestor.ingest_paths(paths, self.collection)  # a snapshot already in: a no-op
        if summary.added or summary.removed or self._corpus is None:
            # a fresh view: the evidence graph grew with the new pages
            self._corpus = Corpus(self.ingestor.settings, self.collection, store=self.ingestor.store,
                                  dense=self.ingestor.dense, sparse=self.ingestor.sparse)

    def _search(self, query: str, k: int, flt: SearchFilter | None) -> list[SearchHit]:
        if self._corpus is None:
            if not self.ingestor.store.exists(self.collection):
                return []
            self._corpus = Corpus(self.ingestor.settings, self.collection, store=self.ingestor.store,
                                  dense=self.ingestor.dense, sparse=self.ingestor.sparse)
        return self._corpus.search(query, k=k, flt=flt)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class WebRetriever:
    """Search engine -> fetched pages -> snapshots -> passages, as a `Retriever`."""

    def __init__(self, engine: SearchEngineSettings, fetcher: Fetcher, library: WebLibrary,
                 results_per_query: int = RESULTS_PER_QUERY, observe: Callable[[WebQuery], None] | None = None):
        """`observe(query)`: told of each query sent, once its pages are in (progress lines)."""
        self.observe = observe
        self.engine = engine
        self.fetcher = fetcher
        self.library = library
        self.results_per_query = results_per_query
        self.queries: list[WebQuery] = []
        self._found: dict[str, list[str]] = {}  # query -> page URLs whose snapshots answer it (asked once a run)

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        if flt is not None and flt.doc_ids:
            return await self.library.search(query, k, flt)
        paths = await self._pages_for(query, flt)
        if not paths:
            return []
        scoped = (flt or SearchFilter()).model_copy(update={"sources": paths})
        return await self.library.search(query, k, scoped)

    async def _pages_for(self, query: str, flt: SearchFilter | None) -> list[str]:
        key = " ".join(query.split()).lower()
        if key in self._found:
            return self._found[key]
        started = time.perf_counter()
        results: list[WebResult] = await search_web(self.engine, query, self.results_per_query)
        excluded = set(flt.exclude_urls) if flt is not None else set()
        record = WebQuery(query=query, engine=self.engine.engine, results=[r.url for r in results])
        wanted = []
        for r in results:
            if r.url in excluded:
                record.skipped[r.url] = "excluded (--exclude-url)"
            elif r.url not in wanted:
                wanted.append(r.url)
        paths = []  # the snapshots' files: a passage's path is its snapshot, its url the page
        for outcome in await self.fetcher.fetch_many(wanted):
            if outcome.snapshot is None:
                record.skipped[outcome.url] = f"{outcome.status}: {outcome.reason}"
            elif outcome.duplicate_of:  # the same text is ingested once, from the URL that had it first
                record.same_text[outcome.url] = outcome.duplicate_of
                paths.append(str((Path(outcome.snapshot.path).parent / f"{url_key(outcome.duplicate_of)}.md").resolve()))
            else:
                paths.append(str(Path(outcome.snapshot.path).resolve()))
        paths = list(dict.fromkeys(paths))
        await self.library.add(paths)
        record.seconds = round(time.perf_counter() - started, 3)
        self.queries.append(record)
        if self.observe is not None:
            self.observe(record)
        self._found[key] = paths
        return paths

    async def version(self) -> str:
        """Stable for a run's checkpoints: the engine, not what it returned (pages change; a rerun resumes)."""
        return f"web:{self.engine.engine}:{self.engine.url or ''}"

    def take_queries(self) -> list[WebQuery]:
        """The queries sent since the last call (one topic's, when topics run one after another)."""
        taken, self.queries = self.queries, []
        return taken

    async def aclose(self) -> None:
        """The fetcher's connections, then the library's worker thread."""
        aclose = getattr(self.fetcher, "aclose", None)
        if aclose is not None:
            await aclose()
        close = getattr(self.library, "close", None)
        if close is not None:
            close()


def local_web_retriever(source: WebSource, ingestor: Ingestor, home: Path,
                        observe: Callable[[WebQuery], None] | None = None) -> WebRetriever:
    """Web research in this process: pages fetched here (per-site limits held in this process), kept as
    snapshots under `home/web`, ingested into `source.collection` of the ingestor's store."""
    from agents.web.fetch import PageFetcher
    from agents.web.politeness import LocalDomainGate
    from agents.web.snapshots import SnapshotStore

    fetcher = PageFetcher(source.fetch, SnapshotStore(home / "web"), LocalDomainGate(source.fetch.limits))
    return WebRetriever(source.engine, fetcher, LocalWebLibrary(ingestor, source.collection),
                        source.results_per_query, observe)
