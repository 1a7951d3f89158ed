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
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import ray
from pydantic import BaseModel, ConfigDict, Field

from actors.calls import call, get
from agents.lm.cache import CachedCompletion
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
    """Sends a ledger's new records to the gateway, tagged with the actor and the topic."""

    def __init__(self, ledger: UsageLedger, gateway: ray.actor.ActorHandle, holder: str, topic: str | None):
        self.ledger = ledger
        self._gateway = gateway
        self._holder = holder
        self._topic = topic
        self._sent = 0

    async def flush(self, stage: str, lease: str | None = None) -> None:
        """Files the new records and gives back `lease`, in one call to the gateway. The call is sent
        before anything is awaited: a cancelled caller still gives its lease back."""
        new = self.ledger.records[self._sent:]
        if not new and lease is None:
            return
        self._sent += len(new)
        ref = self._gateway.settle.remote(lease, list(new), self._holder, self._topic)
        await call(ref, actor="LLMGateway", method="settle", stage=stage, timeout_s=GATEWAY_TIMEOUT_S)


class GatedModel:
    """Runs `inner` under a gateway lease on `endpoint` (None: no lease), then files the call's usage."""

    def __init__(self, inner: LanguageModel, gateway: ray.actor.ActorHandle, endpoint: str | None,
                 filer: UsageFiler, holder: str):
        self.inner = inner
        self.name = inner.name
        self.endpoint = endpoint
        self.ledger = filer.ledger
        self._gateway = gateway
        self._filer = filer
        self._holder = holder

    async def run(self, step: type[Step], inp: BaseModel) -> BaseModel:
        lease = None
        if self.endpoint is not None:
            lease = await call(self._gateway.acquire.remote(self.endpoint, self._holder), actor="LLMGateway",
                               method="acquire", stage=step.role, timeout_s=LEASE_TIMEOUT_S)
        try:
            return await self.inner.run(step, inp)
        finally:
            await self._filer.flush(step.role, lease)

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
        """The recipe `raystorm report` implies: the extractive toolkit embeds with the store's dense model."""
        return cls(toolkit_model=store.dense_model, models_dir=str(store.models_dir), **fields)

    def toolkit(self) -> TextToolkit:
        """The extractive model's toolkit, as the in-process run builds it."""
        if self.toolkit_model is None:
            return TextToolkit()
        embedder = shared_dense(self.toolkit_model, Path(self.models_dir) if self.models_dir else None)
        return TextToolkit(embed=embedder.embed)


def _default_http() -> httpx.AsyncClient:
    """The client `openai.AsyncOpenAI` would build for itself (its timeouts, limits and redirects)."""
    from openai import DefaultAsyncHttpxClient

    return DefaultAsyncHttpxClient()


class ActorModels:
    """One actor's models: a `RoleModels` per topic, all gated by one gateway."""

    def __init__(self, recipe: ModelRecipe, gateway: ray.actor.ActorHandle, holder: str,
                 nlp: TextToolkit | None = None):
        self.recipe = recipe
        self.gateway = gateway
        self.holder = holder
        self.nlp = nlp
        self._by_topic: dict[str, RoleModels] = {}
        self._http: httpx.AsyncClient | None = None
        if recipe.llm.uses_llm:
            # the chat client's modules take about a second to import: with the actor, not in its first call,
            # where they would hold up every other call this actor has in flight
            import autogen_ext.models.openai  # noqa: F401

    def for_topic(self, topic: str) -> RoleModels:
        if topic not in self._by_topic:
            self._by_topic[topic] = self._build(topic)
        return self._by_topic[topic]

    def _build(self, topic: str) -> RoleModels:
        settings = self.recipe.llm
        ledger = UsageLedger()
        filer = UsageFiler(ledger, self.gateway, self.holder, topic)
        cache = GatewayCache(self.gateway) if settings.cache and self.recipe.gateway_cache else None
        if self._http is None and settings.uses_llm:
            # one HTTP client (connection pool, TLS context) for every topic's chat models on this actor
            self._http = self.recipe.http_client_factory() if self.recipe.http_client_factory else _default_http()
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
                built[spec] = GatedModel(base, self.gateway, endpoint, filer, self.holder)
            return built[spec]

        default = model_for(settings.default)
        roles = {role: model_for(spec) for role, spec in settings.roles.items()}
        return RoleModels(default, roles, notice=None if settings.uses_llm else NO_LLM_NOTICE)

    def release(self, topics: Sequence[str]) -> None:
        """Forget these topics' models. Not closed: what they hold open is this actor's one HTTP client,
        which the next topics' models share."""
        for topic in topics:
            self._by_topic.pop(topic, None)

    async def close(self) -> None:
        for models in self._by_topic.values():
            await models.close()
        if self._http is not None:
            await self._http.aclose()
