"""`ReportAgentActor`: hosts the ReACT report agent (`--writer react`) on the cluster.

It holds the agent's models (gated by the run's `LLMGateway`) and a retriever over
the corpus actors, writes one section per call (`agents.report.stage.react_section`),
sends `insight_forge`'s sub-questions to the run's Hopper actors (in parallel, each
call filed under this section and tool), and keeps, per topic, the sections it wrote with their tool calls and logs, e.g. to
be read back during a session. The flow checkpoints each section on the driver, so
a section whose actor died is simply written again (the call is safe to repeat).
"""

from __future__ import annotations

import asyncio

import ray

from actors.hopper import QUESTION_TIMEOUT_S, Hopper
from actors.models import ActorModels, ModelRecipe
from actors.pool import ActorOptions, ActorPool
from actors.retriever import PoolRetriever
from agents.lm.usage import report_place
from agents.multihop.chain import ChainSettings
from agents.multihop.trace import AgentAnswer
from agents.report.records import ReactSection
from agents.report.stage import ReactArgs, react_section
from agents.stage import StageContext
from retrieval.embeddings import embed_threads

REPORT_AGENT_OPTIONS = ActorOptions(max_restarts=3, max_task_retries=3)


@ray.remote(**REPORT_AGENT_OPTIONS.ray_options())
class ReportAgentActor:
    def __init__(self, recipe: ModelRecipe, gateway: ray.actor.ActorHandle, retriever: PoolRetriever,
                 hoppers: list[ray.actor.ActorHandle], label: str):
        embed_threads(1)
        self.label = label
        self.models = ActorModels(recipe, gateway, holder=label, nlp=recipe.toolkit())
        self.retriever = retriever
        self.hoppers = ActorPool(hoppers, "Hopper")
        self.written: dict[str, dict[int, ReactSection]] = {}
        retriever.encoder.warm()

    def ready(self) -> str:
        return ray.get_runtime_context().get_node_id()

    async def write_section(self, args: ReactArgs) -> ReactSection:
        async def ask_many(questions: list[str], settings: ChainSettings) -> list[AgentAnswer]:
            # insight_forge's sub-questions, at once on the Hoppers; their calls count for this section and tool
            section, tool = report_place()
            return list(await asyncio.gather(*(
                self.hoppers.call(Hopper.research, q, settings, args.topic, section, tool, stage="insight_forge",
                                  timeout_s=QUESTION_TIMEOUT_S, idempotent=True) for q in questions)))

        async def write() -> ReactSection:
            section = await react_section(args, StageContext(self.models.for_topic(args.topic), self.retriever,
                                                             ask_many=ask_many))
            self.written.setdefault(args.topic, {})[section.index] = section
            return section

        return await self.models.carried(write())

    def sections(self, topic: str) -> list[ReactSection]:
        """The sections of `topic` this actor wrote, in outline order."""
        return [s for _, s in sorted(self.written.get(topic, {}).items())]
