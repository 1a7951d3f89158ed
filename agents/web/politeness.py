"""Per-domain politeness: at most N requests in flight and a minimum interval between starts.

Every fetcher asks a `DomainGate` before each request to a host and tells it when the
response is read. In one process that is a `LocalDomainGate`; on a cluster every fetcher
actor forwards to one named gate actor (`actors.fetcher.DomainGateActor`) hosting a
`LocalDomainGate`, so the limits hold for the cluster as a whole, not per actor.

A turn is a slot plus a start time (`reserve`): the gate spaces the start times, and the
fetcher sleeps until its own, so how late the gate's answer reaches it does not matter. A
fetcher that wakes late (its process was busy or paused) would start too close to the next
one: it asks for a new time instead (`retime`), a few times at most (`wait_turn`). Start
times are wall-clock (`time.time()`), shared by the processes of one machine; across hosts,
clock skew adds to the interval or takes from it. A slot whose holder never releases it
(its process died) expires `lease_s` after its start time.

A site's robots.txt may ask for a `Crawl-delay`: `set_crawl_delay` raises that host's interval to
it (never lowers it below `DomainLimits.min_interval_s`; at most `MAX_CRAWL_DELAY_S`, so one
site cannot stall a run). The latest robots.txt read for a host sets it, 0 included. A site
that answers 429 or 503 asks us to wait: `defer` gives no turn that starts sooner (turns given
already keep theirs, so at most the slots in flight reach the site meanwhile).

    gate = LocalDomainGate(DomainLimits(max_in_flight=2, min_interval_s=1.0))
    await gate.acquire("example.org")
    try:
        ...  # one request to example.org
    finally:
        await gate.release("example.org")
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from pydantic import BaseModel, Field

LATE_S = 0.01  # a start this much behind its time may crowd the next one: ask for a new time
RETIMES = 3  # then go anyway: a process this busy cannot keep time better
MAX_CRAWL_DELAY_S = 60.0  # a longer Crawl-delay (or `defer`) is read as this: a run waits minutes, not hours


class DomainLimits(BaseModel):
    max_in_flight: int = Field(2, ge=1, description="requests to one host at once, over all fetchers")
    min_interval_s: float = Field(1.0, ge=0, description="seconds between two request starts to one host")


class DomainGate(Protocol):
    """`acquire` returns when a request to `domain` may start (raises `GateBusy` after `wait_s`);
    `release` when its response has been read."""

    async def acquire(self, domain: str, wait_s: float | None = None) -> None: ...

    async def release(self, domain: str) -> None: ...

    async def set_crawl_delay(self, domain: str, seconds: float) -> None: ...

    async def defer(self, domain: str, seconds: float) -> None: ...


class GateBusy(Exception):
    """No slot for a domain within the wait allowed."""


class _Domain:
    def __init__(self) -> None:
        self.leases: deque[float] = deque()  # start times (wall clock) of the slots held, oldest first
        self.last_start = 0.0  # wall-clock start time of the latest turn given
        self.crawl_delay_s = 0.0  # what the host's robots.txt asked for (capped)
        self.not_before = 0.0  # wall-clock time before which no turn starts (the site asked us to wait)
        self.changed = asyncio.Condition()


class LocalDomainGate:
    """The gate of one process: per host, slots in flight and the start time of the latest turn."""

    def __init__(self, limits: DomainLimits, lease_s: float = 300.0):
        self.limits = limits
        self.lease_s = lease_s
        self._domains: dict[str, _Domain] = {}

    def _domain(self, domain: str) -> _Domain:
        return self._domains.setdefault(domain.lower(), _Domain())

    def _interval(self, state: _Domain) -> float:
        return max(self.limits.min_interval_s, state.crawl_delay_s)

    def interval(self, domain: str) -> float:
        """Seconds between two request starts to `domain`: the limits' interval or its Crawl-delay."""
        return self._interval(self._domain(domain))

    def _expire(self, state: _Domain) -> None:
        # counted from the start, so however long a slot waits for it (intervals, Crawl-delay, `defer`)
        horizon = time.time() - self.lease_s
        while state.leases and state.leases[0] < horizon:
            state.leases.popleft()

    async def reserve(self, domain: str, wait_s: float | None = None, lead_s: float = 0.0) -> float:
        """Take a slot; returns when (`time.time()`) its request may start: at least `lead_s` from now
        when the domain has an interval to keep (with none, at once).

        Raises `GateBusy` if no slot frees within `wait_s` (then nothing is held)."""
        state = self._domain(domain)
        deadline = None if wait_s is None else time.monotonic() + wait_s
        async with state.changed:
            while True:
                self._expire(state)
                if len(state.leases) < self.limits.max_in_flight:
                    break
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    raise GateBusy(f"no free slot at {domain} within {wait_s:g} s")
                # woken by a release, or when the oldest lease expires, or at the deadline
                timeout = state.leases[0] + self.lease_s - time.time()
                if deadline is not None:
                    timeout = min(timeout, deadline - now)
                try:
                    await asyncio.wait_for(state.changed.wait(), max(timeout, 0.001))
                except asyncio.TimeoutError:
                    pass
            start = self._next_start(state, lead_s)
            state.leases.append(start)
            return start

    def _next_start(self, state: _Domain, lead_s: float) -> float:
        interval = self._interval(state)
        start = time.time()
        if interval > 0:
            start = max(start + lead_s, state.last_start + interval)
        start = max(start, state.not_before)
        state.last_start = start
        return start

    async def retime(self, domain: str, lead_s: float = 0.0) -> float:
        """A new start time for a slot already held, whose holder missed its time."""
        return self._next_start(self._domain(domain), lead_s)

    async def acquire(self, domain: str, wait_s: float | None = None) -> None:
        start = await self.reserve(domain, wait_s)
        try:
            await wait_turn(start, lambda: self.retime(domain), self.interval(domain))
        except BaseException:  # cancelled while waiting for its turn: the slot goes back
            await self.release(domain)
            raise

    async def release(self, domain: str) -> None:
        state = self._domain(domain)
        async with state.changed:
            if state.leases:
                state.leases.popleft()
            state.changed.notify_all()

    def set_limits(self, limits: DomainLimits) -> None:
        """New limits for requests from now on (slots already held stay held)."""
        self.limits = limits

    async def set_crawl_delay(self, domain: str, seconds: float) -> None:
        """`domain`'s robots.txt asks for `seconds` between requests (0: asks nothing); capped at
        `MAX_CRAWL_DELAY_S`, and never below the limits' own interval."""
        self._domain(domain).crawl_delay_s = min(max(seconds, 0.0), MAX_CRAWL_DELAY_S)

    async def defer(self, domain: str, seconds: float) -> None:
        """No turn given from now on starts within `seconds` (capped at `MAX_CRAWL_DELAY_S`)."""
        state = self._domain(domain)
        state.not_before = max(state.not_before, time.time() + min(max(seconds, 0.0), MAX_CRAWL_DELAY_S))


async def wait_turn(start: float, retime: Callable[[], Awaitable[float]], interval_s: float) -> None:
    """Sleep until `start`; when woken too late to keep the interval, take a new start time."""
    for attempt in range(RETIMES + 1):
        delay = start - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        if interval_s <= 0 or time.time() - start <= LATE_S or attempt == RETIMES:
            return
        start = await retime()
