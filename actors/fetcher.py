"""Fetching pages on a pool of Ray actors, polite per domain across the whole cluster.

- `DomainGateActor`: one named, detached actor per Ray namespace (got or created by every pool), hosting
  the `LocalDomainGate` whose per-domain limits every fetcher actor of the cluster asks before
  each request, so "2 in flight, 1 s apart" holds for a site however many actors fetch from it
  (a site's robots.txt Crawl-delay raises its interval there, for every pool). It also hosts the
  `RobotsBoard` where the actors of one pool share their robots.txt reads: a site's robots.txt is
  read once per pool (one run), by whichever actor needs it first, not once per actor.
- `FetcherActor`: an async actor hosting a `Downloader` (the network half of a `PageFetcher`);
  its `max_concurrency` is its number of slots.
- `FetcherPool`: the actors, plus the cache and the snapshot files, which stay in the driver.

The actors send back each page's extracted text (a `Download`) and the driver writes the
snapshot (`SnapshotStore.put`), so `snapshot_root` is a path on the driver's disk only, and
a multi-host cluster needs no shared file system. The cache is read in the driver too: a
fresh snapshot never reaches an actor; an older one goes with its ETag / Last-Modified.

    pool = FetcherPool.create(FetchSettings(), data_dir / "web", actors=3, slots_per_actor=4)
    outcomes = await pool.fetch_many(urls)  # list[FetchOutcome], in the order of `urls`
    pool.kill()
"""

from __future__ import annotations

from pathlib import Path

import uuid

import ray

from actors.calls import call, get
from actors.pool import ActorOptions, ActorPool
from agents.web.download import Download, Downloader, FetchSettings, Validators
from agents.web.fetch import FetchOutcome, PageFetcher
from agents.web.politeness import DomainLimits, GateBusy, LocalDomainGate, wait_turn
from agents.web.robots import RobotsBoard, RobotsFile
from agents.web.snapshots import SnapshotStore
from retrieval.errors import RaystormError

# the gate is detached, so it outlives a code upgrade of the cluster's jobs: its name carries its
# protocol's version (2: Crawl-delay, defer, the robots board), and a newer pool never gets an older gate
GATE_NAME = "raystorm-domain-gate-2"
GATE_CALL_S = 30.0  # a gate call that is not waiting for a slot answers in milliseconds
ANSWER_LEAD_S = 0.05  # an actor call's answer takes a few ms; 50 ms covers a busy machine's


def lease_s(settings: FetchSettings) -> float:
    """How long after its start a slot stays taken when its holder never gives it back (its actor died):
    its request runs `timeout_s` at most; a few times that, with an interval per slot to spare."""
    limits = settings.limits
    return max(60.0, 4 * (settings.timeout_s + limits.max_in_flight * limits.min_interval_s))


@ray.remote
class DomainGateActor:
    """The cluster's per-domain gate. Async: a call waiting for a slot does not block the others."""

    def __init__(self, limits: DomainLimits, lease_s: float):
        self._gate = LocalDomainGate(limits, lease_s=lease_s)
        self._robots = RobotsBoard()

    async def configure(self, limits: DomainLimits, lease_s: float) -> None:
        """The limits of the newest pool apply from now on (one gate per cluster, one set of limits)."""
        self._gate.set_limits(limits)
        self._gate.lease_s = lease_s

    async def reserve(self, domain: str, wait_s: float | None, lead_s: float) -> tuple[float, float] | None:
        """A slot's start time (wall clock) and the domain's interval, or None when no slot freed within
        `wait_s` (nothing held)."""
        try:
            return await self._gate.reserve(domain, wait_s, lead_s), self._gate.interval(domain)
        except GateBusy:
            return None

    async def set_crawl_delay(self, domain: str, seconds: float) -> None:
        await self._gate.set_crawl_delay(domain, seconds)

    async def defer(self, domain: str, seconds: float) -> None:
        await self._gate.defer(domain, seconds)

    async def robots_claim(self, key: str, claim_s: float) -> RobotsFile | None:
        return await self._robots.claim(key, claim_s)

    async def robots_post(self, key: str, answer: RobotsFile | None) -> None:
        await self._robots.post(key, answer)

    async def robots_forget(self, prefix: str) -> None:
        self._robots.forget(prefix)

    async def retime(self, domain: str, lead_s: float) -> float:
        return await self._gate.retime(domain, lead_s)

    async def release(self, domain: str) -> None:
        await self._gate.release(domain)

    async def ready(self) -> str:
        return ray.get_runtime_context().get_node_id()


async def _gate_call(ref: ray.ObjectRef, method: str, timeout_s: float):
    try:
        return await call(ref, actor=GATE_NAME, method=method, stage="fetch", timeout_s=timeout_s)
    except RaystormError as exc:  # the gate is gone or stuck: this request fails (the next one asks again)
        raise GateBusy(f"the domain gate did not answer ({exc})") from None


class RemoteDomainGate:
    """The `DomainGate` protocol over the gate actor: the turn is given there, waited for here."""

    def __init__(self, handle: ray.actor.ActorHandle):
        self.handle = handle

    async def acquire(self, domain: str, wait_s: float | None = None) -> None:
        # a domain with an interval to keep starts its idle turn a little after giving it, so the answer
        # is here in time (the gate adds no lead to a domain without one)
        turn = await _gate_call(self.handle.reserve.remote(domain, wait_s, ANSWER_LEAD_S), "reserve",
                                (wait_s or 0) + GATE_CALL_S)
        if turn is None:
            raise GateBusy(f"no free slot within {wait_s:g} s")
        start, interval_s = turn
        try:
            await wait_turn(start, lambda: _gate_call(self.handle.retime.remote(domain, ANSWER_LEAD_S), "retime",
                                                      GATE_CALL_S), interval_s)
        except BaseException:
            await self.release(domain)
            raise

    async def release(self, domain: str) -> None:
        try:
            await call(self.handle.release.remote(domain), actor=GATE_NAME, method="release", stage="fetch",
                       timeout_s=GATE_CALL_S)
        except RaystormError:
            pass  # the gate lost the slot with its state, or frees it when its lease ends

    async def set_crawl_delay(self, domain: str, seconds: float) -> None:
        await _gate_call(self.handle.set_crawl_delay.remote(domain, seconds), "set_crawl_delay", GATE_CALL_S)

    async def defer(self, domain: str, seconds: float) -> None:
        await _gate_call(self.handle.defer.remote(domain, seconds), "defer", GATE_CALL_S)


class RemoteRobots:
    """The `SharedRobots` of one pool: its actors' robots.txt reads, shared on the gate actor's board."""

    def __init__(self, handle: ray.actor.ActorHandle, pool_id: str, settings: FetchSettings):
        self.handle = handle
        self.prefix = f"{pool_id} "
        # the reader may be waiting for its turn at the site and following redirects, each to its time limit
        self.claim_s = (settings.max_redirects + 1) * (settings.max_wait_s + settings.timeout_s)

    async def claim(self, robots_url: str) -> RobotsFile | None:
        return await _gate_call(self.handle.robots_claim.remote(self.prefix + robots_url, self.claim_s),
                                "robots_claim", self.claim_s + GATE_CALL_S)

    async def post(self, robots_url: str, answer: RobotsFile | None) -> None:
        await _gate_call(self.handle.robots_post.remote(self.prefix + robots_url, answer), "robots_post",
                         GATE_CALL_S)


@ray.remote
class FetcherActor:
    """Downloads pages for a `FetcherPool`; holds an HTTP client and the robots.txt rules it has parsed
    (read once for the whole pool, `pool_id`)."""

    def __init__(self, settings: FetchSettings, gate: ray.actor.ActorHandle, pool_id: str):
        self._downloader = Downloader(settings, RemoteDomainGate(gate),
                                      shared_robots=RemoteRobots(gate, pool_id, settings))

    async def download(self, url: str, validators: Validators | None) -> Download:
        return await self._downloader.download(url, validators)

    async def ready(self) -> str:
        return ray.get_runtime_context().get_node_id()


def domain_gate(settings: FetchSettings) -> ray.actor.ActorHandle:
    """The cluster's gate actor (created on first use), set to `settings.limits`."""
    options = ActorOptions(max_restarts=-1, max_concurrency=1000)
    # detached: the gate outlives the pool and the driver that made it, so every pool of every run on
    # the cluster finds the same one (a gate owned by one pool would die with that pool's handles)
    handle = DomainGateActor.options(**options.ray_options(name=GATE_NAME, lifetime="detached")).remote(
        settings.limits, lease_s(settings))
    get(handle.configure.remote(settings.limits, lease_s(settings)), actor=GATE_NAME, method="configure",
        stage="startup", timeout_s=120.0)
    return handle


class FetcherPool:
    """Fetcher actors sharing the cluster's domain gate; the snapshots are written here."""

    def __init__(self, pool: ActorPool, settings: FetchSettings, store: SnapshotStore, slots: int,
                 gate: ray.actor.ActorHandle | None = None, pool_id: str = ""):
        self.pool = pool
        self.gate = gate
        self.pool_id = pool_id
        self.settings = settings
        self.store = store
        self.slots = slots

    @classmethod
    def create(cls, settings: FetchSettings, snapshot_root: Path | str, actors: int = 2, slots_per_actor: int = 4,
               options: ActorOptions | None = None) -> "FetcherPool":
        """`actors` fetcher actors of `slots_per_actor` pages at once each, ready when this returns."""
        gate = domain_gate(settings)
        pool_id = uuid.uuid4().hex
        options = (options or ActorOptions()).model_copy(update={"max_concurrency": slots_per_actor})
        pool = ActorPool.create(FetcherActor, size=actors, options=options, label="Fetcher",
                                args=(settings, gate, pool_id))
        pool.wait_ready()
        return cls(pool, settings, SnapshotStore(snapshot_root), slots=max(actors, 1) * slots_per_actor,
                   gate=gate, pool_id=pool_id)

    def _call_timeout_s(self) -> float:
        # robots.txt and every hop may each wait for their domain's turn and then run to their time limit,
        # and a hop answered 429/503 goes again after a wait
        s = self.settings
        tries = (s.max_redirects + 2) * (s.retries + 1)
        return tries * (s.max_wait_s + s.timeout_s) + s.retries * s.retry_max_wait_s + GATE_CALL_S

    async def download(self, url: str, validators: Validators | None = None) -> Download:
        """One page on the least busy actor (the `Downloads` protocol of `PageFetcher`)."""
        try:
            return await self.pool.call(FetcherActor.download, url, validators, stage="fetch",
                                        timeout_s=self._call_timeout_s(), idempotent=True)
        except RaystormError as exc:  # an actor lost for good: this page fails, the others go on
            return Download(url=url, status="failed", reason=str(exc))

    async def aclose(self) -> None:
        """Nothing to close here: the actors live until `kill`."""

    async def fetch_many(self, urls: list[str]) -> list[FetchOutcome]:
        fetcher = PageFetcher(self.settings, self.store, downloads=self, slots=self.slots)
        return await fetcher.fetch_many(urls)

    async def fetch(self, url: str) -> FetchOutcome:
        return (await self.fetch_many([url]))[0]

    def kill(self) -> None:
        """End the fetcher actors (the gate stays: other pools of the cluster may use it; it forgets this
        pool's robots.txt reads)."""
        self.pool.kill()
        if self.gate is not None:
            self.gate.robots_forget.remote(f"{self.pool_id} ")  # nothing to wait for


__all__ = ["DomainGateActor", "FetcherActor", "FetcherPool", "RemoteDomainGate", "RemoteRobots", "domain_gate"]
