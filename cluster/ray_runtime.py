"""`RayRuntime`: a report's flow (`agents.storm.flow.run_topic`) on a `ResearchCluster`.

- a stage: the stage function and its arguments go to an expert actor
  (`ExpertActor.run_stage`), which supplies its models, retriever and, when named,
  a `RemoteTable`;
- a conversation: one call to a PersonaWriter actor, which runs the flow's own
  `converse` team between the persona's writer and a `PooledChatAgent` (the
  expert pool); a conversation whose writer is lost starts again on a fresh writer;
- the table: on the Corpus actors; usage: the gateway's ledger for the topic.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from actors.calls import ActorUnavailable, call
from actors.chat_proxy import AgentNotHosted
from actors.corpus import CorpusActor
from actors.expert import ExpertActor, ExpertSpec
from actors.filing import OUTBOX
from actors.gateway import LLMGateway
from actors.report_agent import ReportAgentActor
from actors.table import RemoteTable
from actors.writer import PersonaWriter
from agents.lm.usage import UsageLedger
from agents.report.records import ReactSection
from agents.report.stage import ReactArgs
from agents.retry import ACTOR_RESTART
from agents.runtime import ConversationSpec
from agents.stage import A, StageFn, T
from agents.storm.artifacts import topic_slug
from agents.storm.conversation import writer_name
from agents.storm.records import Conversation, Persona
from cluster.distributed_actors import ResearchCluster
from retrieval.errors import UsageError

GATEWAY_TIMEOUT_S = 60.0


class RayRuntime:
    """The `agents.runtime.Runtime` of a distributed run: every call goes to the cluster's actors."""

    def __init__(self, run: ResearchCluster):
        self.run = run

    async def stage(self, stage: str, fn: StageFn[A, T], args: A, *, table: str | None = None) -> T:
        return await self.run.experts.call(ExpertActor.run_stage, fn, args, table, stage=stage,
                                           timeout_s=self.run.plan.stage_timeout_s, idempotent=True)

    def table(self, name: str) -> RemoteTable:
        return RemoteTable(self.run.corpus.pool, name)

    def release_table(self, name: str) -> None:
        """Nothing is held here: the table lives on the Corpus actors."""

    async def usage(self, topic: str) -> UsageLedger:
        # the records the actors' results brought back are filed first (`actors.filing`)
        await OUTBOX.flush(self.run.gateway, stage="llm_call_history")
        return await call(self.run.gateway.ledger.remote(topic), actor="LLMGateway",
                          method=LLMGateway.ledger.__name__, stage="llm_call_history", timeout_s=GATEWAY_TIMEOUT_S)

    async def corpus_version(self) -> str:
        parts = []
        if self.run.source != "web":
            parts.append(await self.run.corpus.pool.call(CorpusActor.version, stage="checkpoints",
                                                         timeout_s=GATEWAY_TIMEOUT_S, idempotent=True))
        if self.run.web is not None:  # the engine searched (not what it returned: a rerun resumes)
            parts.append(await call(self.run.web.version.remote(), actor="WebResearch", method="version",
                                    stage="checkpoints", timeout_s=GATEWAY_TIMEOUT_S))
        return "+".join(parts)

    async def report_section(self, args: ReactArgs) -> ReactSection:
        if self.run.report_agents is None:
            raise UsageError("this cluster session has no report agents: start it with ClusterPlan(report_agents=N)")
        return await self.run.report_agents.call(ReportAgentActor.write_section, args, stage="article",
                                                 timeout_s=self.run.plan.stage_timeout_s, idempotent=True)

    async def converse(self, topic: str, persona: Persona, spec: ConversationSpec,
                       note: Callable[[str], None]) -> Conversation:
        """The persona's interview: its writer on a PersonaWriter actor, the expert on the pool."""
        run = self.run
        slot = run.next_writer_slot()
        key = f"{topic_slug(topic)}/{writer_name(persona)}"
        expert_spec = ExpertSpec(topic=topic, search_k=spec.search_k, exclude_urls=spec.exclude_urls)
        turn_s = run.plan.turn_timeout_s
        attempts = run.plan.conversation_attempts
        clock = asyncio.get_running_loop().time
        patience_until = None  # set by the first loss
        attempt = 0
        while True:
            index = (slot + attempt) % len(run.writers)
            actor, label = run.writers.handles[index], run.writers.name(index)
            run.note_writer(topic, persona.name, index, key)
            try:
                # every message of the conversation is bounded by a turn's timeout there: here, all of them
                return await call(actor.converse.remote(key, writer_name(persona), topic, persona, spec.turns,
                                                        run.experts, expert_spec, turn_s),
                                  actor=label, method=PersonaWriter.converse.__name__, stage="conversations",
                                  timeout_s=turn_s * (2 + 2 * spec.turns))
            except (ActorUnavailable, AgentNotHosted) as exc:
                # the writer's actor died (or died and came back without its agents): a fresh writer
                # runs the conversation again; expert turns and searches are reissued where they are.
                # Past the tries, a writer Ray is still restarting is waited for (every writer may
                # have been on the lost nodes), up to the plan's restart_wait_s.
                if patience_until is None:
                    patience_until = clock() + run.plan.restart_wait_s
                restarting = isinstance(exc, ActorUnavailable) and exc.restarting
                if attempt + 1 >= attempts and not (restarting and clock() < patience_until):
                    raise
                note(f"{persona.name}: {label} was lost, starting the conversation again")
                await ACTOR_RESTART.wait(min(attempt, ACTOR_RESTART.max_retries))  # time for Ray to restart it
                attempt += 1
