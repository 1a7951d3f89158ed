"""`ExpertActor`: the expert pool. Answers writers' questions, and runs the topic-level stages.

A turn builds the topic's `ExpertAgent` afresh (it keeps no state between turns),
so any member of the pool can answer any question, and a turn whose actor died
is safely reissued on another (`max_task_retries`, and the pool's own retry).

The pool also runs the stages that need what an expert has (the models, the
corpus, the run's table) and no state of their own: personas, outline, each
section, lead and polish. `run_stage` calls the flow's own stage function with
its typed arguments and this actor's `StageContext` (models, retriever, table),
so the distributed run computes exactly what the in-process run computes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ray
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage
from pydantic import BaseModel, Field

from actors.chat_proxy import stateless_turn
from actors.models import ActorModels, ModelRecipe
from actors.pool import ActorOptions, ActorPool
from actors.retriever import PoolRetriever
from actors.table import RemoteTable
from agents.stage import A, StageContext, StageFn, T
from agents.storm.expert import ExpertAgent
from retrieval.embeddings import embed_threads


class ExpertSpec(BaseModel):
    """Which expert to build for a turn."""

    name: str = "expert"
    topic: str
    search_k: int = Field(ge=1, description="passages per search query")
    exclude_urls: list[str] = Field(default_factory=list)


EXPERT_OPTIONS = ActorOptions(max_restarts=3, max_task_retries=3)  # stateless: every call is safe to repeat


@ray.remote(**EXPERT_OPTIONS.ray_options())
class ExpertActor:
    def __init__(self, recipe: ModelRecipe, gateway: ray.actor.ActorHandle, retriever: PoolRetriever,
                 store_pool: ActorPool, label: str):
        embed_threads(1)
        # the stage functions `run_stage` is handed arrive pickled by reference: their modules load here,
        # with the actor, not inside a run's first stage call (~0.3 s of CPU and of that call's wait)
        import agents.report.stage  # noqa: F401
        import agents.storm.stages  # noqa: F401

        self.label = label
        self.models = ActorModels(recipe, gateway, holder=label, nlp=recipe.toolkit())
        self.retriever = retriever
        self.store_pool = store_pool
        retriever.encoder.warm()  # up means ready to answer: the embedding models are loaded

    def ready(self) -> str:
        """The node this actor runs on, once it is up."""
        return ray.get_runtime_context().get_node_id()

    async def turn(self, spec: ExpertSpec, state: Mapping[str, Any] | None,
                   messages: Sequence[BaseChatMessage]) -> tuple[Response, Mapping[str, Any]]:
        agent = ExpertAgent(spec.name, spec.topic, self.models.for_topic(spec.topic), self.retriever,
                            search_k=spec.search_k, exclude_urls=spec.exclude_urls)
        return await self.models.carried(stateless_turn(agent, state, messages))

    def release(self, topics: Sequence[str]) -> None:
        """Forget these topics' models (a long-lived service, after their run)."""
        self.models.release(topics)

    async def run_stage(self, fn: StageFn[A, T], args: A, table: str | None) -> T:
        """`fn(args, ctx)` with this actor's models (for `args.topic`), retriever and the table `table`."""
        remote = RemoteTable(self.store_pool, table, encoder=self.retriever.encoder) if table else None
        ctx = StageContext(self.models.for_topic(args.topic), self.retriever, remote)
        return await self.models.carried(fn(args, ctx))
