"""Fetching pages for research: the cache, the download, the snapshot; one outcome per URL.

`PageFetcher.fetch(url)`:
1. a snapshot younger than `ttl_s` is reused with no request (`cached`);
2. else the page is downloaded (`agents.web.download`), conditionally when an older snapshot
   has an ETag / Last-Modified: a 304 keeps that snapshot with a new fetch time (`revalidated`);
3. a page with text becomes a snapshot (`fetched`), and `duplicate_of` names the URL whose
   snapshot already had the same text;
4. anything else ends as `skipped` (robots.txt, size, content type, no text), `refused`
   (a private address) or `failed` (HTTP error, timeout, too many redirects), with its reason.
A page never raises.

The downloads may run here (a `Downloader` with a local gate) or on fetcher actors
(`actors.fetcher.FetcherPool` passes its own `downloads`); the cache and the snapshot files
stay in this process either way, so the snapshot root only needs to be on this machine.

    store = SnapshotStore(data_dir / "web")
    fetcher = PageFetcher(FetchSettings(), store)
    outcomes = await fetcher.fetch_many(["https://example.org/a", "https://example.org/b"])
    for o in outcomes:
        print(o.status, o.url, o.reason or o.snapshot.path, o.duplicate_of or "")
    await fetcher.aclose()
"""

from __future__ import annotations

import asyncio
from typing import Literal, Protocol

from pydantic import BaseModel

from agents.web.download import Download, Downloader, FetchSettings, Validators, without_fragment
from agents.web.politeness import DomainGate, LocalDomainGate
from agents.web.snapshots import Snapshot, SnapshotStore

__all__ = ["FetchOutcome", "FetchSettings", "PageFetcher", "Downloads"]

FetchStatus = Literal["fetched", "cached", "revalidated", "skipped", "refused", "failed"]


class FetchOutcome(BaseModel):
    url: str
    status: FetchStatus
    reason: str = ""
    snapshot: Snapshot | None = None  # set for fetched, cached and revalidated
    duplicate_of: str | None = None  # another URL whose snapshot has the same text: ingest that one


class Downloads(Protocol):
    """Where downloads run: a `Downloader` here, or a pool of fetcher actors."""

    async def download(self, url: str, validators: Validators | None = None) -> Download: ...

    async def aclose(self) -> None: ...


class PageFetcher:
    """Pages fetched through a cache of snapshots. `gate`: the per-domain limits to share (default: a
    gate of this fetcher's own with `settings.limits`; a given gate keeps its own limits).
    `downloads`: where downloads run instead of here (then no gate is given). `slots`: pages at once."""

    def __init__(self, settings: FetchSettings, store: SnapshotStore, gate: DomainGate | None = None, *,
                 downloads: Downloads | None = None, slots: int = 16):
        if downloads is not None and gate is not None:
            raise ValueError("give a gate or downloads, not both: downloads bring their own gate")
        self.settings = settings
        self.store = store
        self.downloads = downloads or Downloader(settings, gate or LocalDomainGate(settings.limits))
        self.slots = max(slots, 1)
        self._slots: asyncio.Semaphore | None = None

    async def aclose(self) -> None:
        await self.downloads.aclose()

    async def fetch(self, url: str) -> FetchOutcome:
        url = without_fragment(url)
        cached = self.store.get(url)
        if cached is not None and self.store.is_fresh(cached, self.settings.ttl_s):
            return self._kept(url, "cached", cached)
        validators = None
        if cached is not None and (cached.etag or cached.last_modified):
            validators = Validators(etag=cached.etag, last_modified=cached.last_modified)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.slots)
        async with self._slots:
            page = await self.downloads.download(url, validators)
        if page.status == "not_modified":
            if cached is None:  # only a conditional request can get a 304
                return FetchOutcome(url=url, status="failed", reason="HTTP 304 to a request that was not conditional")
            return self._kept(url, "revalidated", self.store.touch(cached, page.etag, page.last_modified))
        if page.status != "fetched":
            return FetchOutcome(url=url, status=page.status, reason=page.reason)
        snapshot = self.store.put(url, final_url=page.final_url, title=page.title, content_type=page.content_type,
                                  etag=page.etag, last_modified=page.last_modified, text=page.text)
        return self._kept(url, "fetched", snapshot)

    def _kept(self, url: str, status: FetchStatus, snapshot: Snapshot) -> FetchOutcome:
        return FetchOutcome(url=url, status=status, snapshot=snapshot, duplicate_of=self.store.duplicate_of(snapshot))

    async def fetch_many(self, urls: list[str]) -> list[FetchOutcome]:
        """Every URL's outcome, in the order given; a URL given twice is fetched once."""
        unique = list(dict.fromkeys(without_fragment(u) for u in urls))
        outcomes = await asyncio.gather(*(self.fetch(u) for u in unique))
        by_url = dict(zip(unique, outcomes))
        return [by_url[without_fragment(u)] for u in urls]
