"""`LLMGateway`: one place for the cluster-wide limits of each LLM endpoint, the usage ledger and the cache.

Models run where the agents are (a writer's calls go out from its own actor);
the gateway only hands out permits. A call needs a lease on its endpoint
(`acquire`, which waits for a free slot under the endpoint's cluster-wide
concurrency and requests-per-minute limits; an actor's calls that wait at once
ask in one message); an actor keeps a lease its call
gave back for a moment, for its next call, and gives back unused ones in one
message (`settle`; `actors.models.GatewayLink`).
A lease whose holder died is reclaimed after `lease_timeout_s`, so a lost node cannot leak slots.

Every call's `UsageRecord` reaches the gateway with the actor and topic it
came from (carried back with the results to the orchestrator, which files them
in one message before it reads the ledger: `file`, `actors.filing`), so the run
has one ledger: calls, tokens and cost per role, per actor, per topic. The completion cache lives with the gateway
(`cache_get`/`cache_put`), one directory for the whole cluster.

`EndpointGate` and `UsageBook` hold the logic and are plain classes.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Sequence

import ray
from pydantic import BaseModel, Field

from actors.filing import Filing
from actors.pool import ActorOptions
from agents.lm.cache import CachedCompletion, CompletionCache
from agents.lm.usage import UsageLedger, UsageRecord, UsageSummary, UsageTotals


class EndpointLimits(BaseModel):
    """The cluster-wide limits of one endpoint."""

    concurrency: int = Field(8, ge=1, description="requests in flight at once, over the whole cluster")
    requests_per_minute: float | None = Field(None, gt=0, description="None: no rate limit")


class GatewaySettings(BaseModel):
    default: EndpointLimits = Field(default_factory=EndpointLimits)
    endpoints: dict[str, EndpointLimits] = Field(default_factory=dict, description="by endpoint label")
    lease_timeout_s: float = Field(900.0, gt=0, description="a lease held longer is taken back")
    cache_dir: str | None = Field(None, description="completion cache directory on the gateway's node")

    def limits(self, endpoint: str) -> EndpointLimits:
        return self.endpoints.get(endpoint, self.default)


class GateStats(BaseModel):
    endpoint: str
    concurrency: int
    in_flight: int = 0
    peak_in_flight: int = 0
    granted: int = 0
    asked: int = 0  # acquire messages (one holder's calls waiting at once ask in one)
    reclaimed: int = 0
    waited_s: float = 0.0


class EndpointGate:
    """Concurrency slots plus an evenly spaced request rate, for one endpoint."""

    def __init__(self, endpoint: str, limits: EndpointLimits, lease_timeout_s: float):
        self.limits = limits
        self.lease_timeout_s = lease_timeout_s
        self.stats = GateStats(endpoint=endpoint, concurrency=limits.concurrency)
        self._held: dict[str, float] = {}  # lease -> when granted
        self._waiters: deque[asyncio.Future] = deque()
        self._reserved = 0  # slots handed to woken waiters that have not resumed yet
        self._next_start = 0.0

    async def acquire(self, lease: str) -> None:
        asked = time.monotonic()
        self._reclaim()
        if self.free() <= 0 or self._waiters:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                while True:
                    try:
                        await asyncio.wait_for(asyncio.shield(waiter), timeout=self.lease_timeout_s / 4)
                        break
                    except asyncio.TimeoutError:
                        self._reclaim()  # holders that died never release: look again
            except BaseException:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._reserved -= 1  # we were handed a slot we will not use
                    self._wake()
                raise
            self._reserved -= 1
        self._grant(lease)
        try:
            if self.limits.requests_per_minute:
                spacing = 60.0 / self.limits.requests_per_minute
                now = time.monotonic()
                start = max(now, self._next_start)
                self._next_start = start + spacing
                if start > now:
                    await asyncio.sleep(start - now)
        except BaseException:
            self.release(lease)
            raise
        self.stats.waited_s += time.monotonic() - asked

    def grab(self, lease: str) -> bool:
        """A slot for `lease` now if one is free, nobody waits and no rate limit spaces the requests."""
        if self.free() <= 0 or self._waiters or self.limits.requests_per_minute:
            return False
        self._grant(lease)
        return True

    def _grant(self, lease: str) -> None:
        self._held[lease] = time.monotonic()
        s = self.stats
        s.granted += 1
        s.in_flight = len(self._held)
        s.peak_in_flight = max(s.peak_in_flight, s.in_flight)

    def release(self, lease: str) -> None:
        if self._held.pop(lease, None) is not None:
            self.stats.in_flight = len(self._held)
            self._wake()

    def free(self) -> int:
        """Slots neither held nor handed to a waiter."""
        return self.limits.concurrency - len(self._held) - self._reserved

    def _wake(self) -> None:
        # a woken waiter's slot is reserved now, so a newcomer cannot take it before the waiter resumes
        while self._waiters and self.free() > 0:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                self._reserved += 1

    def _reclaim(self) -> None:
        cutoff = time.monotonic() - self.lease_timeout_s
        stale = [lease for lease, at in self._held.items() if at < cutoff]
        for lease in stale:
            del self._held[lease]
            self.stats.reclaimed += 1
        if stale:
            self.stats.in_flight = len(self._held)
            self._wake()


class UsageReport(BaseModel):
    """The run's accounting: totals, and calls/tokens/cost by role, model, actor and topic."""

    summary: UsageSummary
    by_actor: dict[str, UsageTotals]
    by_topic: dict[str, UsageTotals]
    gates: list[GateStats] = Field(default_factory=list)


class UsageBook:
    """Every call's record with where it came from; merging the same record twice counts it once."""

    def __init__(self) -> None:
        self.ledger = UsageLedger()
        self._origin: dict[str, tuple[str, str | None]] = {}  # call_id -> (actor, topic)

    def add(self, records: list[UsageRecord], actor: str, topic: str | None) -> None:
        for r in records:
            if r.call_id not in self._origin:
                self._origin[r.call_id] = (actor, topic)
                self.ledger.record(r if r.actor else r.model_copy(update={"actor": actor}))

    def ledger_for(self, topic: str | None = None) -> UsageLedger:
        if topic is None:
            return UsageLedger(records=list(self.ledger.records))
        return UsageLedger(records=[r for r in self.ledger.records if self._origin[r.call_id][1] == topic])

    def forget(self, topics: Sequence[str]) -> None:
        """Drop these topics' records (a long-lived service, once their run wrote them down)."""
        gone = set(topics)
        keep = [r for r in self.ledger.records if self._origin[r.call_id][1] not in gone]
        self._origin = {r.call_id: self._origin[r.call_id] for r in keep}
        self.ledger = UsageLedger(records=keep)

    def report(self, gates: list[GateStats]) -> UsageReport:
        by_actor: dict[str, UsageTotals] = {}
        by_topic: dict[str, UsageTotals] = {}
        for r in self.ledger.records:
            actor, topic = self._origin[r.call_id]
            by_actor.setdefault(actor, UsageTotals()).add(r)
            by_topic.setdefault(topic or "(none)", UsageTotals()).add(r)
        return UsageReport(summary=self.ledger.summary(), by_actor=by_actor, by_topic=by_topic, gates=gates)


GATEWAY_OPTIONS = ActorOptions(max_restarts=3, max_concurrency=100_000)  # every model call of the run waits on it


@ray.remote(**GATEWAY_OPTIONS.ray_options())
class LLMGateway:
    """Thin host of one `EndpointGate` per endpoint, the run's `UsageBook` and the completion cache.

    Pinned by its creator to the driver's node (its ledger is the run's account).
    """

    def __init__(self, settings: GatewaySettings):
        self.settings = settings
        self._gates: dict[str, EndpointGate] = {}
        self._leases: dict[str, str] = {}  # lease -> endpoint
        self._ids = itertools.count()
        self._book = UsageBook()
        self._cache = CompletionCache(settings.cache_dir) if settings.cache_dir else None

    def ready(self) -> str:
        """The node this actor runs on, once it is up."""
        return ray.get_runtime_context().get_node_id()

    def _gate(self, endpoint: str) -> EndpointGate:
        if endpoint not in self._gates:
            self._gates[endpoint] = EndpointGate(endpoint, self.settings.limits(endpoint),
                                                 self.settings.lease_timeout_s)
        return self._gates[endpoint]

    async def acquire(self, endpoint: str, holder: str, wanted: int = 1) -> tuple[list[str], bool]:
        """Leases on `endpoint` for up to `wanted` calls of one holder waiting at once: the first waits
        for a slot as any request does, the others come with it while slots are free, nobody waits and
        no rate limit spaces the requests (else the holder asks again). And whether its holder may keep
        them for its next calls: only while at least half the endpoint's slots are free (nobody waits,
        so nobody is passed over) and without a requests-per-minute limit."""
        gate = self._gate(endpoint)
        gate.stats.asked += 1
        leases = [f"{holder}#{next(self._ids)}"]
        await gate.acquire(leases[0])
        self._leases[leases[0]] = endpoint
        while len(leases) < wanted and gate.grab(lease := f"{holder}#{next(self._ids)}"):
            self._leases[lease] = endpoint
            leases.append(lease)
        return leases, not gate.limits.requests_per_minute and 2 * gate.free() >= gate.limits.concurrency

    def settle(self, leases: list[str]) -> None:
        """Give back `leases` (one actor's, in one message)."""
        for lease in leases:
            endpoint = self._leases.pop(lease, None)
            if endpoint is not None:
                self._gate(endpoint).release(lease)

    def file(self, filings: list[Filing]) -> None:
        """File usage records, (actor, topic, records) at a time: an orchestrator's outbox, or an actor's
        own records when its method failed (`actors.filing`)."""
        for actor, topic, records in filings:
            self._book.add(records, actor, topic)

    def ledger(self, topic: str | None = None) -> UsageLedger:
        return self._book.ledger_for(topic)

    def forget(self, topics: list[str]) -> None:
        self._book.forget(topics)

    def report(self) -> UsageReport:
        return self._book.report([g.stats for g in self._gates.values()])

    def cache_get(self, key: str) -> CachedCompletion | None:
        return self._cache.get(key) if self._cache is not None else None

    def cache_put(self, entry: CachedCompletion) -> None:
        if self._cache is not None:  # (an empty cache is falsy: it has a __len__)
            self._cache.put(entry)
