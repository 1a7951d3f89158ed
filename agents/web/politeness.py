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
(its process died) expires after `lease_s`.

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


class DomainLimits(BaseModel):
    max_in_flight: int = Field(2, ge=1, description="requests to one host at once, over all fetchers")
    min_interval_s: float = Field(1.0, ge=0, description="seconds between two request starts to one host")


class DomainGate(Protocol):
    """`acquire` returns when a request to `domain` may start (raises `GateBusy` after `wait_s`);
    `release` when its response has been read."""

    async def acquire(self, domain: str, wait_s: float | None = None) -> None: ...

    async def release(self, domain: str) -> None: ...


class GateBusy(Exception):
    """No slot for a domain within the wait allowed."""


class _Domain:
    def __init__(self) -> None:
        self.leases: deque[float] = deque()  # grant times (monotonic) of the slots held, oldest first
        self.last_start = 0.0  # wall-clock start time of the latest turn given
        self.changed = asyncio.Condition()


class LocalDomainGate:
    """The gate of one process: per host, slots in flight and the start time of the latest turn."""

    def __init__(self, limits: DomainLimits, lease_s: float = 300.0):
        self.limits = limits
        self.lease_s = lease_s
        self._domains: dict[str, _Domain] = {}

    def _domain(self, domain: str) -> _Domain:
        return self._domains.setdefault(domain.lower(), _Domain())

    def _expire(self, state: _Domain) -> None:
        horizon = time.monotonic() - self.lease_s
        while state.leases and state.leases[0] < horizon:
            state.leases.popleft()

    async def reserve(self, domain: str, wait_s: float | None = None, lead_s: float = 0.0) -> float:
        """Take a slot; returns when (`time.time()`) its request may start, at least `lead_s` from now.

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
                timeout = state.leases[0] + self.lease_s - now
                if deadline is not None:
                    timeout = min(timeout, deadline - now)
                try:
                    await asyncio.wait_for(state.changed.wait(), max(timeout, 0.001))
                except asyncio.TimeoutError:
                    pass
            state.leases.append(time.monotonic())
            return self._next_start(state, lead_s)

    def _next_start(self, state: _Domain, lead_s: float) -> float:
        start = time.time() + lead_s
        if self.limits.min_interval_s > 0:
            start = max(start, state.last_start + self.limits.min_interval_s)
        state.last_start = start
        return start

    async def retime(self, domain: str, lead_s: float = 0.0) -> float:
        """A new start time for a slot already held, whose holder missed its time."""
        return self._next_start(self._domain(domain), lead_s)

    async def acquire(self, domain: str, wait_s: float | None = None) -> None:
        start = await self.reserve(domain, wait_s)
        try:
            await wait_turn(start, lambda: self.retime(domain), self.limits.min_interval_s)
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


async def wait_turn(start: float, retime: Callable[[], Awaitable[float]], interval_s: float) -> None:
    """Sleep until `start`; when woken too late to keep the interval, take a new start time."""
    for attempt in range(RETIMES + 1):
        delay = start - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        if interval_s <= 0 or time.time() - start <= LATE_S or attempt == RETIMES:
            return
        start = await retime()
