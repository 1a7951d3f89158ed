"""robots.txt: fetched once per site (scheme, host and port) and asked before every request.

Allow/Disallow are parsed by the standard library's `urllib.robotparser`. What an unreadable
robots.txt means follows RFC 9309: a 4xx (none there) allows everything; a 5xx or 429, a timeout
or no connection disallows the whole site for this run (it may be down or overloaded, so we stay
away). Concurrent pages of one site share one robots.txt request.

`Crawl-delay` (not in RFC 9309, but widely written; seconds, fractions allowed) is read from the
group for our user agent, else from `*`, and handed to `on_crawl_delay(host, seconds)` once per
site (0 when the file asks none), which gives it to the domain gate.

Several fetchers (the actors of one pool) share one read per site through a `RobotsBoard`: the
first to ask reads the file and posts it there, the others wait for that answer.

    robots = RobotsRules(user_agent="raystorm/0.1 (+research)", fetch=downloader.fetch_robots)
    verdict = await robots.verdict("https://example.org/private/page")  # None, or why not
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol
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

    def __init__(self, user_agent: str, fetch: Callable[[str], Awaitable[RobotsFile]],
                 on_crawl_delay: Callable[[str, float], Awaitable[None]] | None = None):
        self.user_agent = user_agent
        self._fetch = fetch
        self._on_crawl_delay = on_crawl_delay
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
        lines = [] if answer.status >= 400 else answer.body[:MAX_ROBOTS_BYTES].decode(
            "utf-8", errors="replace").splitlines()
        if self._on_crawl_delay is not None:  # before any page of the site is requested
            await self._on_crawl_delay(urlsplit(site).hostname or "", crawl_delay(lines, self.user_agent))
        if answer.status >= 400:
            return _Site(None, "")  # no robots.txt: everything allowed
        parser = RobotFileParser()
        parser.parse(lines)
        return _Site(parser, "")


def crawl_delay(lines: list[str], user_agent: str) -> float:
    """The Crawl-delay of the group naming our product token (as `urllib.robotparser` matches one),
    else of the `*` group; 0 when neither has one. (`urllib.robotparser` reads whole seconds only.)"""
    token = user_agent.split("/")[0].lower()
    delays: dict[str, float] = {}  # "ours" / "*"
    agents: list[str] = []
    in_rules = False  # a user-agent line after rules starts a new group
    for raw in lines:
        field, _, value = raw.split("#", 1)[0].partition(":")
        field, value = field.strip().lower(), value.strip()
        if field == "user-agent":
            agents = [value.lower()] if in_rules else [*agents, value.lower()]
            in_rules = False
        elif field:
            in_rules = True
            if field == "crawl-delay":
                try:
                    seconds = float(value)
                except ValueError:
                    continue
                for agent in agents:
                    key = "*" if agent == "*" else "ours" if agent and agent in token else ""
                    if key and seconds >= 0:
                        delays.setdefault(key, seconds)
    return delays.get("ours", delays.get("*", 0.0))


class SharedRobots(Protocol):
    """Where the fetchers of one pool share their robots.txt reads (a `RobotsBoard`, reached remotely):
    `claim` gives the answer, or None to have the caller read it and `post` it."""

    async def claim(self, robots_url: str) -> RobotsFile | None: ...

    async def post(self, robots_url: str, answer: RobotsFile | None) -> None: ...


class RobotsBoard:
    """robots.txt answers shared by the fetchers of one pool, hosted where all of them reach it (the
    cluster's gate actor). `claim(key)` gives the answer when there is one; otherwise the caller is
    to read the file and `post` it (None: it got no answer, the next caller reads it). Others asking
    meanwhile wait for that post, or `claim_s` at most (the reader may have died), then read it.

    An answer is kept until its pool `forget`s it, and never longer than `max_age_s` (RFC 9309: a
    cached robots.txt is not used for more than a day), so a pool that never ends costs no memory
    for good."""

    def __init__(self, max_age_s: float = 86_400.0) -> None:
        self.max_age_s = max_age_s
        self._answers: dict[str, tuple[RobotsFile, float]] = {}  # key -> the answer, when (monotonic) posted
        self._claimed: dict[str, float] = {}  # key -> when (monotonic) a reader took it
        self._changed = asyncio.Condition()

    async def claim(self, key: str, claim_s: float) -> RobotsFile | None:
        async with self._changed:
            self._drop_old()
            while key not in self._answers:
                now = time.monotonic()
                taken = self._claimed.get(key)
                if taken is None or now - taken >= claim_s:
                    self._claimed[key] = now
                    return None
                try:
                    await asyncio.wait_for(self._changed.wait(), taken + claim_s - now)
                except asyncio.TimeoutError:
                    pass
            return self._answers[key][0]

    async def post(self, key: str, answer: RobotsFile | None) -> None:
        async with self._changed:
            self._drop_old()
            self._claimed.pop(key, None)
            if answer is not None:
                self._answers[key] = (answer, time.monotonic())
            self._changed.notify_all()

    def _drop_old(self) -> None:
        now = time.monotonic()
        for key in [k for k, (_, posted) in self._answers.items() if now - posted >= self.max_age_s]:
            del self._answers[key]

    def forget(self, prefix: str) -> None:
        """Drop the answers whose key starts with `prefix` (a pool's, when it ends)."""
        for key in [k for k in self._answers if k.startswith(prefix)]:
            del self._answers[key]
