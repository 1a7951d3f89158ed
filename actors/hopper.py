"""`Hopper` actors: host the multi-hop agents (Chain-of-RAG, DeepSearch, NaiveRAG, the router).

A Hopper is built from shippable settings (`HopperRecipe`: the LLM settings and
the strategies' parameters) and searches through a `Retriever` handed to it —
normally a `PoolRetriever` over the run's `CorpusPool`, whose one actor owns the
embedded store. It holds no research state: each question is answered from
scratch, so a call is safe to repeat on a restarted actor.

`HopperPool` is what drivers use: N Hoppers, at most `concurrency` questions in
flight at once over the whole pool, every wait bounded by a timeout whose error
names the actor.
"""

from __future__ import annotations

import asyncio
import time

import ray
from pydantic import BaseModel, Field

from actors.models import ActorModels, ModelRecipe
from actors.pool import ActorOptions, ActorPool
from agents.lm.models import RoleModels
from agents.lm.nlp import TextToolkit
from agents.lm.settings import LLMSettings
from agents.lm.usage import in_report_place
from agents.multihop.accounting import QuestionLedger, tokens
from agents.multihop.chain import ChainOfRAG, ChainSettings
from agents.multihop.strategies import MultihopSettings, StrategyChoice, ask
from agents.multihop.trace import AgentAnswer
from retrieval.embeddings import embed_threads
from retrieval.errors import UsageError
from retrieval.search import Retriever

QUESTION_TIMEOUT_S = 600.0
HOPPER_OPTIONS = ActorOptions(num_cpus=0, max_restarts=3, max_task_retries=0, max_concurrency=8)


class HopperRecipe(BaseModel):
    """What a Hopper is built from. No secrets: API keys come from the actor's environment."""

    llm: LLMSettings = Field(default_factory=LLMSettings)
    multihop: MultihopSettings = Field(default_factory=MultihopSettings)
    cache_dir: str | None = Field(None, description="completion cache directory (when llm.cache)")


class HopperResult(BaseModel):
    answer: AgentAnswer
    tokens: int = 0  # prompt + completion tokens of this question's model calls
    calls: int = 0
    latency_s: float = 0.0


@ray.remote(**HOPPER_OPTIONS.ray_options())
class Hopper:
    """Thin host: one set of models, one retriever, any number of questions."""

    def __init__(self, recipe: HopperRecipe, retriever: Retriever, gateway: ray.actor.ActorHandle | None = None,
                 run_models: ModelRecipe | None = None, label: str = "Hopper"):
        """`gateway` + `run_models`: a report run's Hopper, whose `research` calls use the run's
        models under its gateway (leases, cache, usage filed per topic), as every actor of a run does."""
        embed_threads(1)
        self.recipe = recipe
        self.retriever = retriever
        self.ledger = QuestionLedger()
        self.models = RoleModels.from_settings(recipe.llm, cache_dir=recipe.cache_dir, ledger=self.ledger,
                                                nlp=TextToolkit())
        self.run_models = (ActorModels(run_models, gateway, holder=label, nlp=run_models.toolkit())
                           if gateway is not None and run_models is not None else None)

    def ready(self) -> str:
        return ray.get_runtime_context().get_node_id()

    async def answer(self, question: str, strategy: StrategyChoice) -> HopperResult:
        started = time.monotonic()
        with self.ledger.question() as records:
            answer = await ask(question, strategy, self.models, self.retriever, self.recipe.multihop)
        return HopperResult(answer=answer, tokens=tokens(records), calls=len(records),
                            latency_s=time.monotonic() - started)


    async def research(self, question: str, settings: ChainSettings, topic: str, section: int | None = None,
                       tool: str | None = None) -> AgentAnswer:
        """One sub-question of a report's `insight_forge`: Chain-of-RAG on the run's models, its
        calls filed under `topic`, `section` and `tool` as if the report agent had made them."""
        if self.run_models is None:
            raise UsageError("this Hopper serves questions only: start it with the run's gateway and models")
        async def answer() -> AgentAnswer:
            with in_report_place(section, tool):
                return await ChainOfRAG(self.run_models.for_topic(topic), self.retriever, settings).answer(question)

        return await self.run_models.carried(answer())


class HopperPool:
    """`size` Hoppers sharing one retriever; at most `concurrency` questions in flight over the pool."""

    def __init__(self, recipe: HopperRecipe, retriever: Retriever, size: int = 2, concurrency: int = 8,
                 timeout_s: float = QUESTION_TIMEOUT_S, options: ActorOptions | None = None):
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        per_actor = max(1, -(-concurrency // max(size, 1)))  # ceil: the pool never queues inside an actor
        options = (options or HOPPER_OPTIONS).model_copy(update={"max_concurrency": per_actor})
        # held here for the pool's lifetime: a restarted Hopper is rebuilt from these very objects
        self._args = (ray.put(recipe), ray.put(retriever))
        self.pool = ActorPool.create(Hopper, size, options, label="Hopper", args=self._args)
        self.timeout_s = timeout_s
        self._slots = asyncio.Semaphore(concurrency)

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        self.pool.wait_ready(timeout_s=timeout_s, stage="multihop")

    async def answer(self, question: str, strategy: StrategyChoice) -> HopperResult:
        """One question on the least busy Hopper; a Hopper that died is replaced by another's answer."""
        async with self._slots:
            return await self.pool.call(Hopper.answer, question, strategy, stage="multihop",
                                        timeout_s=self.timeout_s, idempotent=True)

    def kill(self) -> None:
        self.pool.kill()
