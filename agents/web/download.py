"""One page over HTTP, safely and politely: the network half of fetching (no cache, no files).

For each hop (the URL, then each redirect, followed here so each is checked): the address is
checked (`guard`) and the connection made to the very address checked; robots.txt is asked
(its Crawl-delay goes to the gate); the domain's gate gives a slot; the response is read under
a time limit, only for an allowed content type and only up to the size cap (a bigger page is
dropped as soon as it passes the cap, or before reading when its Content-Length says so). A hop
answered 429 or 503 is asked again, `retries` times at most, after the wait the site asks for
(Retry-After, up to `retry_max_wait_s`) or the retry policy's backoff, each time through the
gate; meanwhile the gate gives no other page of the site a turn within that Retry-After (or the
first backoff). No cookies are kept between requests and nothing in a page is run. A page's end is a
`Download` with a status and a reason, never an exception.

`Downloader` runs in the process that fetches (a fetcher actor, or the process itself);
`agents.web.fetch.PageFetcher` adds the cache and the snapshots around it; `agents.web.wire`
is how one request goes out and its body comes back.

    downloader = Downloader(FetchSettings(allow_private_hosts=True), LocalDomainGate(DomainLimits()))
    page = await downloader.download("http://127.0.0.1:8000/a.html")
    page.status, page.reason, page.title, page.text
    await downloader.aclose()
"""

from __future__ import annotations

import asyncio
import socket
from typing import Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

import anyio.lowlevel
import httpx
from pydantic import BaseModel, Field

from agents.lm.backoff import retry_after_seconds
from agents.retry import RetryPolicy
from agents.web.extract import ExtractionFailed, extract_text, media_type
from agents.web.guard import BlockedURL, resolve_checked
from agents.web.politeness import DomainGate, DomainLimits, GateBusy
from agents.web.robots import MAX_ROBOTS_BYTES, RobotsFile, RobotsRules, SharedRobots
from agents.web.wire import MAX_ADDRESSES, Reply, first_connected, network_reason, open_client, pinned, read_reply
PAGE_TYPES = ["text/html", "application/xhtml+xml", "text/plain", "application/pdf"]
BUSY = (429, 503)  # the site asks us to come back later: asked again after a wait


class FetchSettings(BaseModel):
    """How pages are fetched; printable (no secrets) and the same on every fetcher."""

    timeout_s: float = Field(15.0, gt=0, description="one request, from connecting to the body's last byte")
    max_bytes: int = Field(5_000_000, ge=1, description="a bigger body is skipped, not read to its end")
    max_redirects: int = Field(5, ge=0)
    content_types: list[str] = Field(default_factory=lambda: list(PAGE_TYPES))
    ttl_s: float = Field(86_400.0, ge=0, description="a snapshot younger than this is reused without a request")
    allow_private_hosts: bool = Field(False, description="allow loopback/private/link-local/metadata addresses")
    user_agent: str = "raystorm/0.1 (+research)"
    limits: DomainLimits = Field(default_factory=DomainLimits, description="per-domain politeness")
    respect_robots: bool = True
    max_wait_s: float = Field(300.0, gt=0, description="longest a request waits for its domain's turn")
    retries: int = Field(2, ge=0, description="more tries for a page answered 429 or 503")
    retry_base_s: float = Field(1.0, ge=0, description="backoff before the first retry when no Retry-After")
    retry_max_wait_s: float = Field(30.0, ge=0, description="caps each wait before a retry, Retry-After included")
    ca_file: str | None = Field(None, description="CA certificates to trust instead of the public ones "
                                                  "(an intranet's own CA, with allow_private_hosts)")


class Validators(BaseModel):
    """What a cached copy was served with, for a conditional request."""

    etag: str | None = None
    last_modified: str | None = None


class Download(BaseModel):
    url: str
    status: Literal["fetched", "not_modified", "skipped", "refused", "failed"]
    reason: str = ""
    final_url: str = ""
    content_type: str = ""
    etag: str | None = None
    last_modified: str | None = None
    title: str = ""
    text: str = ""


class _Stop(Exception):
    """A page's end before its text: `status` and the one-line `reason`."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def without_fragment(url: str) -> str:
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


class Downloader:
    """Downloads pages under `settings`, asking `gate` before each request. One event loop.
    `shared_robots`: where this downloader's robots.txt reads are shared with other fetchers (the
    actors of a pool); without it, each site's robots.txt is read here once."""

    def __init__(self, settings: FetchSettings, gate: DomainGate, shared_robots: SharedRobots | None = None):
        self.settings = settings
        self.gate = gate
        self.shared_robots = shared_robots
        self.robots = RobotsRules(settings.user_agent, self._robots_file, on_crawl_delay=gate.set_crawl_delay)
        self.retry = RetryPolicy(max_retries=settings.retries, base_delay_s=settings.retry_base_s,
                                 max_delay_s=settings.retry_max_wait_s)
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            s = self.settings
            self._client = open_client(s.user_agent, s.content_types, s.timeout_s, s.ca_file)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _request(self, url: str, headers: dict[str, str], types: list[str], max_bytes: int,
                       addresses: list[str] | None = None) -> Reply:
        """One GET: checked (unless `addresses` were checked already), gated, timed; the body read only
        for a 2xx of an allowed type, up to the cap.
        Raises BlockedURL, socket.gaierror, GateBusy, TimeoutError, httpx.HTTPError."""
        addresses = addresses or await resolve_checked(url, self.settings.allow_private_hosts)
        domain = (urlsplit(url).hostname or "").lower()
        # everything ready before the slot is taken, so the request starts when the gate says
        if self._client is None:
            # httpx loads its async backend (anyio) on its first request: tens of ms, spent here instead
            await anyio.lowlevel.checkpoint()
        client = self.client()
        requests = []
        for address in addresses[:MAX_ADDRESSES]:
            target, host, extensions = pinned(url, address)
            requests.append(client.build_request("GET", target, headers={**headers, **host}, extensions=extensions))
        await self.gate.acquire(domain, wait_s=self.settings.max_wait_s)
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                response = await first_connected(client, requests)
                try:
                    reply = await read_reply(response, types, max_bytes)
                finally:
                    await response.aclose()
            if reply.status in BUSY:  # before the slot goes back, so no turn given after it starts sooner
                await self.gate.defer(domain, self._site_wait(reply))
            return reply
        finally:
            await self.gate.release(domain)

    def _site_wait(self, reply: Reply) -> float:
        """How long the whole site asked us to stay away: its Retry-After (capped), else the first backoff."""
        asked = retry_after_seconds(reply.headers)
        return self.retry.delay(0, asked) if asked is not None else self.retry.base_delay_s

    async def _robots_file(self, robots_url: str) -> RobotsFile:
        """The site's robots.txt: read here, or by whichever fetcher sharing `shared_robots` asked first."""
        if self.shared_robots is None:
            return await self.fetch_robots(robots_url)
        answer = await self.shared_robots.claim(robots_url)
        if answer is not None:
            return answer
        try:
            answer = await self.fetch_robots(robots_url)
        except BaseException:  # no answer (no turn at the site): the next fetcher that asks reads it
            await self.shared_robots.post(robots_url, None)
            raise
        await self.shared_robots.post(robots_url, answer)
        return answer

    async def fetch_robots(self, robots_url: str) -> RobotsFile:
        """The site's robots.txt, following redirects as a page does. Raises only `GateBusy` (no turn at
        the site: no answer about its robots.txt either)."""
        url = robots_url
        try:
            for _ in range(self.settings.max_redirects + 1):
                reply = await self._request(url, {}, [], MAX_ROBOTS_BYTES * 4)
                location = reply.headers.get("location")
                if 300 <= reply.status < 400 and location:
                    url = without_fragment(urljoin(url, location))
                    continue
                if reply.skipped:  # over 2 MB: not a robots.txt; read as none
                    return RobotsFile(404, b"")
                return RobotsFile(reply.status, (reply.body or b"")[:MAX_ROBOTS_BYTES])  # the rest is never read
            return RobotsFile(None, b"", f"more than {self.settings.max_redirects} redirects")
        except BlockedURL as exc:
            return RobotsFile(None, b"", str(exc))
        except TimeoutError:
            return RobotsFile(None, b"", f"no answer within {self.settings.timeout_s:g} s")
        except (httpx.HTTPError, OSError) as exc:
            return RobotsFile(None, b"", network_reason(exc))

    async def download(self, url: str, validators: Validators | None = None) -> Download:
        """Fetch and extract `url` (fragment dropped). `validators`: send a conditional request."""
        url = without_fragment(url)
        try:
            return await self._download(url, validators)
        except _Stop as stop:
            return Download(url=url, status=stop.status, reason=stop.reason)

    async def _download(self, url: str, validators: Validators | None) -> Download:
        conditional: dict[str, str] = {}
        if validators and validators.etag:
            conditional["If-None-Match"] = validators.etag
        if validators and validators.last_modified:
            conditional["If-Modified-Since"] = validators.last_modified
        current = url
        for _ in range(self.settings.max_redirects + 1):
            reply, tries = await self._answered(current, conditional)
            location = reply.headers.get("location")
            if 300 <= reply.status < 400 and reply.status != 304:
                if not location:
                    raise _Stop("failed", f"HTTP {reply.status} redirect without a Location")
                current = without_fragment(urljoin(current, location))
                continue
            break
        else:
            raise _Stop("failed", f"more than {self.settings.max_redirects} redirects (last: {current})")
        etag, modified = reply.headers.get("etag"), reply.headers.get("last-modified")
        if reply.status == 304:
            return Download(url=url, status="not_modified", final_url=current, etag=etag, last_modified=modified)
        if reply.status >= 400:
            raise _Stop("failed", f"HTTP {reply.status}" + (f" at {current}" if current != url else "")
                        + (f" ({tries} tries)" if tries > 1 else ""))
        if reply.skipped:
            raise _Stop("skipped", reply.skipped)
        content_type = reply.headers.get("content-type", "")
        try:
            page = await asyncio.to_thread(extract_text, reply.body or b"", content_type, current)
        except ExtractionFailed as exc:
            raise _Stop("failed", str(exc)) from None
        except Exception as exc:  # a parser's error on a hostile or broken page ends that page only
            raise _Stop("failed", f"could not extract text ({type(exc).__name__}: {exc})") from None
        if not page.text.strip():
            raise _Stop("skipped", "no text found on the page")
        return Download(url=url, status="fetched", final_url=current, content_type=media_type(content_type),
                        etag=etag, last_modified=modified, title=page.title, text=page.text)

    async def _answered(self, url: str, conditional: dict[str, str]) -> tuple[Reply, int]:
        """`_hop`, asked again while the site answers 429 or 503 and retries are left; the last reply
        and how many requests it took."""
        for retry in range(self.retry.max_retries + 1):
            reply = await self._hop(url, conditional)
            if reply.status not in BUSY or retry == self.retry.max_retries:
                return reply, retry + 1
            await self.retry.wait(retry, retry_after_seconds(reply.headers))
        raise AssertionError("unreachable")

    async def _hop(self, url: str, conditional: dict[str, str]) -> Reply:
        """One request of a page's chain, its failures as `_Stop`."""
        host = urlsplit(url).netloc
        try:
            addresses = await resolve_checked(url, self.settings.allow_private_hosts)  # refused before robots.txt
            if self.settings.respect_robots:
                verdict = await self.robots.verdict(url)
                if verdict:
                    raise _Stop("skipped", verdict)
            return await self._request(url, conditional, self.settings.content_types, self.settings.max_bytes,
                                       addresses)
        except BlockedURL as exc:
            raise _Stop("refused", exc.reason) from None
        except socket.gaierror:
            raise _Stop("failed", f"could not resolve {urlsplit(url).hostname}") from None
        except GateBusy as exc:
            raise _Stop("failed", f"no turn at {host}: {exc}") from None
        except (TimeoutError, httpx.TimeoutException):
            raise _Stop("failed", f"timed out: no complete answer from {host} within "
                                  f"{self.settings.timeout_s:g} s") from None
        except (httpx.HTTPError, OSError) as exc:
            raise _Stop("failed", network_reason(exc)) from None
