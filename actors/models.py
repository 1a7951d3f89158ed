"""The language models an actor runs: built from shippable settings, gated by the `LLMGateway`.

An actor gets a `ModelRecipe` (the run's `LLMSettings` plus benchmark knobs)
and a gateway handle, and builds one `RoleModels` per topic with
`ActorModels.for_topic`, so each topic's calls land in the gateway's ledger
under that topic and the actor's name. Every call to a remote endpoint first
takes a lease from the gateway (the cluster-wide concurrency and rate limit of
that endpoint); completions are cached by the gateway.

`LatencyModel` is the benchmark knob `--inject-latency-ms`: it waits a fixed
time per call before running the wrapped model, standing in for a remote LLM
in front of the extractive one. Off (0) by default.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import ray
from pydantic import BaseModel, ConfigDict, Field

from actors.calls import call, get
from actors.filing import OUTBOX, Filed, Filing, gateway_key
from agents.lm.cache import CachedCompletion
from agents.lm.direct_client import HttpSession, default_http_client
from agents.lm.extractive import NO_LLM_NOTICE, ExtractiveModel
from agents.lm.models import RoleModels, chat_model
from agents.lm.nlp import TextToolkit
from agents.lm.settings import LLMSettings, ModelSpec
from agents.lm.steps import LanguageModel, Step
from agents.lm.usage import UsageLedger
from retrieval.config import StoreSettings
from retrieval.embeddings import shared_dense

INJECTED_ENDPOINT = "injected-latency"
GATEWAY_TIMEOUT_S = 60.0
LEASE_TIMEOUT_S = 1800.0  # a lease may wait behind a long queue of calls to a slow endpoint
LEASE_LINGER_S = 0.5  # a lease given back waits at least this long for the same actor's next call,
LINGER_PER_CALL = 2.5  # and up to this many times as long as the actor's recent calls took
LEASE_REUSE_S = 10.0  # and is reused for at most this long after its grant
_NEVER_REUSED = float("-inf")  # the grant time of a lease the gateway said not to keep


class LatencyModel:
    """Any `LanguageModel`, `latency_s` slower per call: a stand-in for a remote LLM in benchmarks."""

    def __init__(self, inner: LanguageModel, latency_s: float):
        if latency_s < 0:
            raise ValueError(f"injected latency must be >= 0, got {latency_s}")
        self.inner = inner
        self.latency_s = latency_s
        self.name = inner.name
        self.endpoint = getattr(inner, "endpoint", None) or INJECTED_ENDPOINT
        self.ledger = getattr(inner, "ledger", None)

    async def run(self, step: type[Step], inp: BaseModel) -> BaseModel:
        await asyncio.sleep(self.latency_s)
        return await self.inner.run(step, inp)

    async def close(self) -> None:
        if hasattr(self.inner, "close"):
            await self.inner.close()


class GatewayCache:
    """The `CompletionCache` interface over the gateway (called from worker threads by `ChatModel`)."""

    def __init__(self, gateway: ray.actor.ActorHandle):
        self.gateway = gateway

    def get(self, key: str) -> CachedCompletion | None:
        return get(self.gateway.cache_get.remote(key), actor="LLMGateway", method="cache_get", stage="llm",
                   timeout_s=GATEWAY_TIMEOUT_S)

    def put(self, entry: CachedCompletion) -> None:
        get(self.gateway.cache_put.remote(entry), actor="LLMGateway", method="cache_put", stage="llm",
            timeout_s=GATEWAY_TIMEOUT_S)


class UsageFiler:
    """A topic's ledger, whose new records its actor's `GatewayLink` carries back or files with the gateway."""

    def __init__(self, ledger: UsageLedger, link: "GatewayLink", topic: str | None):
        self.ledger = ledger
        self.topic = topic
        self.sent = 0
        link.filers.append(self)


class GatewayLink:
    """One actor's traffic with the gateway: leases reused between its calls, usage carried back or filed.

    A lease the gateway marks reusable (granted while at least half the endpoint's slots were free,
    and no rate limit) stays with the actor for a while after its call (`LEASE_LINGER_S`, or
    `LINGER_PER_CALL` times its recent calls' duration if longer: in a conversation a writer's next
    call comes once the expert's turn, two calls, has come back), and the actor's next call on that
    endpoint takes it without asking the gateway; leases no call took by then go back together, in
    one message (not awaited) per half a wait at most. A lease is never reused past `LEASE_REUSE_S`
    from its grant, which bounds how long a busy actor can keep slots from others once the endpoint
    fills up. The gateway's limit holds as before: a lease is one request in flight or one waiting a
    moment to be reused. The records of every call go back with the result of the actor method that made them
    (`carry`, `actors.filing`), or, when that method fails, are filed by `flush` before it raises.
    """

    def __init__(self, gateway: ray.actor.ActorHandle, holder: str):
        self.gateway = gateway
        self.holder = holder
        self.key = gateway_key(gateway)
        self.filers: list[UsageFiler] = []
        self._held: dict[str, float] = {}  # lease of a call in flight -> when granted
        # endpoint -> unused leases: (lease, when granted, until when it waits), oldest first
        self._free: dict[str, list[tuple[str, float, float]]] = {}
        self._returning: asyncio.TimerHandle | None = None
        self._returning_on: asyncio.AbstractEventLoop | None = None
        self._flushing: asyncio.Future | None = None
        self._call_s = 0.0  # this actor's recent call duration (moving average)
        self._wanting: dict[str, deque[asyncio.Future]] = {}  # endpoint -> calls waiting for a lease
        self._asking: dict[str, asyncio.Task] = {}  # endpoint -> the task asking the gateway for them

    async def take(self, endpoint: str, stage: str) -> str:
        now = time.monotonic()
        free = self._free.get(endpoint, [])
        while free:
            lease, granted, _ = free.pop()  # the last one given back: the others run out first
            if now - granted < LEASE_REUSE_S:
                self._held[lease] = granted
                return lease
            self._give_back([lease])  # (a lease is given back as it turns too old to reuse)
        waiter = asyncio.get_running_loop().create_future()
        self._wanting.setdefault(endpoint, deque()).append(waiter)
        if endpoint not in self._asking:
            self._asking[endpoint] = asyncio.ensure_future(self._ask(endpoint, stage))
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a lease as this call was cancelled
                self._park(endpoint, waiter.result())
            raise

    async def _ask(self, endpoint: str, stage: str) -> None:
        """Leases for this actor's calls waiting on `endpoint`: all those waiting at once in one message,
        then again for those the gateway had no slot for yet (or that came meanwhile)."""
        queue = self._wanting[endpoint]
        try:
            await asyncio.sleep(0)  # calls that start in this same moment ask together
            while wanted := sum(not w.done() for w in queue):
                leases, reusable = await call(self.gateway.acquire.remote(endpoint, self.holder, wanted),
                                              actor="LLMGateway", method="acquire", stage=stage,
                                              timeout_s=LEASE_TIMEOUT_S)
                granted = time.monotonic() if reusable else _NEVER_REUSED
                for lease in leases:
                    self._held[lease] = granted
                    while queue and queue[0].done():  # (a call cancelled while it waited)
                        queue.popleft()
                    if queue:
                        queue.popleft().set_result(lease)
                    else:
                        self._park(endpoint, lease)
        except Exception as exc:  # (the gateway lost or too slow: each waiting call fails with it)
            for w in queue:
                if not w.done():
                    w.set_exception(exc)
            queue.clear()
        except BaseException:
            for w in queue:
                w.cancel()
            queue.clear()
            raise
        finally:
            del self._asking[endpoint]

    def _park(self, endpoint: str, lease: str) -> None:
        """A lease no call holds now (its call is over, or was cancelled): kept a moment for this actor's
        next call, or given back if it is not to be kept or too old to reuse."""
        granted = self._held.pop(lease, _NEVER_REUSED)
        if time.monotonic() - granted >= LEASE_REUSE_S:
            self._give_back([lease])
        else:
            self._wait_for_next(endpoint, lease, granted)

    def linger_s(self) -> float:
        """How long an idle lease waits for this actor's next call."""
        return min(max(LEASE_LINGER_S, LINGER_PER_CALL * self._call_s), LEASE_REUSE_S / 2)

    def give(self, endpoint: str, lease: str, took_s: float = 0.0) -> None:
        """`lease` is free again after a call of `took_s`: kept a moment for this actor's next call, then
        given back."""
        self._call_s = took_s if not self._call_s else 0.8 * self._call_s + 0.2 * took_s
        self._park(endpoint, lease)

    def _wait_for_next(self, endpoint: str, lease: str, granted: float) -> None:
        linger = self.linger_s()
        self._free.setdefault(endpoint, []).append((lease, granted, time.monotonic() + linger))
        loop = asyncio.get_running_loop()
        if self._returning is None or self._returning_on is not loop:  # (a test may run several loops)
            self._returning, self._returning_on = loop.call_later(linger, self._return_idle), loop

    def _return_idle(self) -> None:
        """Give back, in one message, the unused leases whose wait is over; look again when the next one's is."""
        self._returning = None
        now = time.monotonic()
        over: list[str] = []
        for endpoint, leases in self._free.items():
            over += [lease for lease, _, until in leases if until <= now]
            self._free[endpoint] = [entry for entry in leases if entry[2] > now]
        self._give_back(over)
        waiting = [until for leases in self._free.values() for _, _, until in leases]
        if waiting:  # at most two messages per wait: leases whose wait ends close together go back together
            loop = asyncio.get_running_loop()
            later = max(min(waiting) - now, self.linger_s() / 2)
            self._returning, self._returning_on = loop.call_later(later, self._return_idle), loop

    def _give_back(self, leases: list[str]) -> None:
        if leases:  # not awaited: the gateway frees them when the message lands (a dead actor's, on timeout)
            self.gateway.settle.remote(leases)

    def unfiled(self) -> list[Filing]:
        """The records neither filed nor carried yet (this actor's, and those its calls' results brought
        back), from now on counted as sent."""
        filings: list[Filing] = []
        for filer in self.filers:
            new = filer.ledger.records[filer.sent:]
            if new:
                filer.sent += len(new)
                filings.append((self.holder, filer.topic, list(new)))
        return filings + OUTBOX.take(self.key)

    def carry(self, value):
        """`value` with the records not yet filed (`Filed`), for its caller to take back; `value` itself
        when there are none."""
        filings = self.unfiled()
        return Filed(value, self.key, filings) if filings else value

    async def flush(self, stage: str = "llm") -> None:
        """File every record not yet filed, in one call to the gateway (waiting for one already under way)."""
        while self._flushing is not None:
            await asyncio.shield(self._flushing)
        filings = self.unfiled()
        if not filings:
            return
        self._flushing = asyncio.get_running_loop().create_future()
        try:
            await call(self.gateway.file.remote(filings), actor="LLMGateway", method="file", stage=stage,
                       timeout_s=GATEWAY_TIMEOUT_S)
        finally:
            self._flushing.set_result(None)
            self._flushing = None

    def forget(self, topics: Sequence[str]) -> None:
        gone = set(topics)
        self.filers = [f for f in self.filers if f.topic not in gone]


class GatedModel:
    """Runs `inner` under a gateway lease on `endpoint` (None: no lease); its usage is filed by `link`."""

    def __init__(self, inner: LanguageModel, endpoint: str | None, filer: UsageFiler, link: GatewayLink):
        self.inner = inner
        self.name = inner.name
        self.endpoint = endpoint
        self.ledger = filer.ledger
        self._link = link

    async def run(self, step: type[Step], inp: BaseModel) -> BaseModel:
        if self.endpoint is None:
            return await self.inner.run(step, inp)
        lease = await self._link.take(self.endpoint, step.role)
        started = time.monotonic()
        try:
            return await self.inner.run(step, inp)
        finally:
            self._link.give(self.endpoint, lease, time.monotonic() - started)

    async def close(self) -> None:
        if hasattr(self.inner, "close"):
            await self.inner.close()


class ModelRecipe(BaseModel):
    """What an actor needs to build the run's models. No secrets: keys come from the actor's environment."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    llm: LLMSettings = Field(default_factory=LLMSettings)
    inject_latency_s: float = Field(0.0, ge=0, description="benchmark knob: a wait per model call")
    http_client_factory: Callable[[], httpx.AsyncClient] | None = Field(
        None, description="builds the HTTP client of chat models (proxies; tests mock the endpoint here)")
    gateway_cache: bool = Field(False, description="replay completions from the gateway's cache (set by the "
                                                    "orchestrator when the gateway has one and llm.cache)")
    toolkit_model: str | None = Field(
        None, description="dense model the extractive toolkit embeds with (None: lexical similarity only)")
    models_dir: str | None = Field(None, description="where that model's files are (a node-local folder)")

    @classmethod
    def for_store(cls, store: StoreSettings, **fields) -> "ModelRecipe":
        """The recipe `raystorm report` implies: the extractive toolkit embeds with the store's dense model,
        from the files of each actor's own host (its install and cache: the store's folder is the driver's)."""
        return cls(toolkit_model=store.dense_model, **fields)

    def toolkit(self) -> TextToolkit:
        """The extractive model's toolkit, as the in-process run builds it."""
        if self.toolkit_model is None:
            return TextToolkit()
        embedder = shared_dense(self.toolkit_model, Path(self.models_dir) if self.models_dir else None)
        return TextToolkit(embed=embedder.embed)


def _default_http(settings: LLMSettings) -> HttpSession | httpx.AsyncClient:
    """One HTTP client for all of an actor's chat models: an aiohttp session for raystorm's own chat client,
    an httpx client (the limits and redirects the openai SDK sets) for autogen's."""
    return HttpSession() if settings.client == "direct" else default_http_client()


class ActorModels:
    """One actor's models: a `RoleModels` per topic, all gated by one gateway."""

    def __init__(self, recipe: ModelRecipe, gateway: ray.actor.ActorHandle, holder: str,
                 nlp: TextToolkit | None = None):
        self.recipe = recipe
        self.gateway = gateway
        self.holder = holder
        self.nlp = nlp
        self._by_topic: dict[str, RoleModels] = {}
        self.link = GatewayLink(gateway, holder)
        self._http: HttpSession | httpx.AsyncClient | None = None
        if recipe.llm.uses_llm:
            if recipe.llm.client == "autogen":
                # autogen's chat client takes about a second to import, and its HTTP client's TLS context a
                # tenth of one: with the actor, not in its first call, where they would hold up every other
                # call this actor has in flight
                import autogen_ext.models.openai  # noqa: F401

            # one HTTP client (connection pool, TLS context) for every topic's chat models on this actor
            self._http = recipe.http_client_factory() if recipe.http_client_factory else _default_http(recipe.llm)

    def for_topic(self, topic: str) -> RoleModels:
        if topic not in self._by_topic:
            self._by_topic[topic] = self._build(topic)
        return self._by_topic[topic]

    def _build(self, topic: str) -> RoleModels:
        settings = self.recipe.llm
        ledger = UsageLedger()
        filer = UsageFiler(ledger, self.link, topic)
        cache = GatewayCache(self.gateway) if settings.cache and self.recipe.gateway_cache else None
        built: dict[ModelSpec, LanguageModel] = {}

        def model_for(spec: ModelSpec) -> LanguageModel:
            if spec not in built:  # roles naming one model share it, as in RoleModels.from_settings
                base: LanguageModel
                endpoint: str | None = None
                if spec.provider == "extractive":
                    base = ExtractiveModel(self.nlp, ledger)
                else:
                    base = chat_model(spec, settings, cache=cache, ledger=ledger, http_client=self._http)
                    endpoint = base.endpoint
                if self.recipe.inject_latency_s:
                    base = LatencyModel(base, self.recipe.inject_latency_s)
                    endpoint = endpoint or INJECTED_ENDPOINT
                built[spec] = GatedModel(base, endpoint, filer, self.link)
            return built[spec]

        default = model_for(settings.default)
        roles = {role: model_for(spec) for role, spec in settings.roles.items()}
        return RoleModels(default, roles, notice=None if settings.uses_llm else NO_LLM_NOTICE)

    def release(self, topics: Sequence[str]) -> None:
        """Forget these topics' models. Not closed: what they hold open is this actor's one HTTP client,
        which the next topics' models share."""
        for topic in topics:
            self._by_topic.pop(topic, None)
        self.link.forget(topics)

    async def carried(self, work: Awaitable[Any]) -> Any:
        """`work`'s value with the usage of every call made so far, for the caller (what each actor method
        that runs models returns; `actors.filing`); if `work` fails, the usage is filed with the gateway
        before the error goes on: no result carries it back then."""
        try:
            value = await work
        except BaseException:
            await self.flush()
            raise
        return self.link.carry(value)

    async def flush(self) -> None:
        """File the usage of every call made so far with the gateway."""
        await self.link.flush()

    async def close(self) -> None:
        for models in self._by_topic.values():
            await models.close()
        if self._http is not None:
            await self._http.aclose()
