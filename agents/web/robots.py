"""robots.txt: fetched once per site (scheme, host and port) and asked before every request.

Parsed by the standard library's `urllib.robotparser`. What an unreadable robots.txt means
follows RFC 9309: a 4xx (none there) allows everything; a 5xx or 429, a timeout or no
connection disallows the whole site for this run (it may be down or overloaded, so we stay away).
Concurrent pages of one site share one robots.txt request.

    robots = RobotsRules(user_agent="raystorm/0.1 (+research)", fetch=downloader.fetch_robots)
    verdict = await robots.verdict("https://example.org/private/page")  # None, or why not
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import NamedTuple
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

MAX_ROBOTS_BYTES = 500 * 1024  # what RFC 9309 asks a crawler to read at least; the rest is ignored


class RobotsFile(NamedTuple):
    status: int | None  # HTTP status of the final answer; None: no answer (timeout, no connection, refused)
    body: bytes
    problem: str = ""  # why there was no answer


class _Site(NamedTuple):
    parser: RobotFileParser | None  # None: everything allowed
    blocked: str  # non-empty: the whole site is off limits for this run, and why


class RobotsRules:
    """Per-site robots.txt rules for one user agent; `fetch(robots_url)` reads a robots.txt, and what
    it raises (rather than returns) is passed on and not remembered."""

    def __init__(self, user_agent: str, fetch: Callable[[str], Awaitable[RobotsFile]]):
        self.user_agent = user_agent
        self._fetch = fetch
        self._sites: dict[str, asyncio.Future[_Site]] = {}

    async def verdict(self, url: str) -> str | None:
        """None when `url` may be fetched; otherwise the one-line reason it may not."""
        parts = urlsplit(url)
        site = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        future = self._sites.get(site)
        if future is None:
            future = self._sites[site] = asyncio.ensure_future(self._load(site))
        try:
            rules = await asyncio.shield(future)
        except Exception:  # not an answer about robots.txt (no turn at the site): asked again next time
            if self._sites.get(site) is future:
                del self._sites[site]
            raise
        if rules.blocked:
            return rules.blocked
        if rules.parser is not None and not rules.parser.can_fetch(self.user_agent, url):
            return f"robots.txt of {parts.netloc} disallows {parts.path or '/'}"
        return None

    async def _load(self, site: str) -> _Site:
        answer = await self._fetch(f"{site}/robots.txt")
        host = urlsplit(site).netloc
        if answer.status is None:
            return _Site(None, f"robots.txt of {host} could not be read ({answer.problem}): "
                               "the site is skipped for this run")
        if answer.status >= 500 or answer.status == 429:  # down or overloaded (429: as Google reads it)
            return _Site(None, f"robots.txt of {host} answered HTTP {answer.status}: the site is skipped for this run")
        if answer.status >= 400:
            return _Site(None, "")  # no robots.txt: everything allowed
        parser = RobotFileParser()
        parser.parse(answer.body[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace").splitlines())
        return _Site(parser, "")
