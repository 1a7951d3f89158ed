"""`PersonaWriter`: hosts persona writers (autogen `WriterAgent`s), each keeping its conversation.

Every persona of every topic has its own writer agent, addressed by a key
(`topic/persona`) on the actor that hosts it; the conversation stays with the
agent after the run, so a persona can be interviewed later (`conversation`).
A conversation runs here (`converse`): the flow's own autogen team, between the
writer agent itself and a `PooledChatAgent` of the expert pool, so one call from
the orchestrator runs the whole interview and only the expert's turns cross to
other processes.
An actor may host one writer (the isolation of one process per persona, when
the cluster has the cores) or several (a laptop, where 24 processes would cost
more than they give); the orchestrator's placement plan decides.

A writer turn is not safe to repeat (the agent's state advances), so Ray does
not retry calls here; when the actor dies, the orchestrator reruns that
persona's conversation on a fresh writer.
"""

from __future__ import annotations

from collections.abc import Sequence

import ray

from actors.chat_proxy import AgentCard, ChatAgentHost, PooledChatAgent
from actors.expert import ExpertSpec
from actors.models import ActorModels, ModelRecipe
from actors.pool import ActorOptions, ActorPool
from agents.report.memory import InterviewAnswer, PersonaMemory, interview
from agents.storm.artifacts import topic_slug
from agents.storm.conversation import converse
from agents.storm.expert import ExpertAgent
from agents.storm.records import Conversation, Persona
from agents.storm.writer import WriterAgent
from retrieval.embeddings import embed_threads


# its calls are not safe to repeat (a turn moves the conversation on): a lost writer is replaced instead
WRITER_OPTIONS = ActorOptions(max_restarts=3, max_task_retries=0)


@ray.remote(**WRITER_OPTIONS.ray_options())
class PersonaWriter:
    def __init__(self, recipe: ModelRecipe, gateway: ray.actor.ActorHandle, label: str):
        embed_threads(1)
        self.label = label
        self.models = ActorModels(recipe, gateway, holder=label, nlp=recipe.toolkit())
        self.host = ChatAgentHost()

    def ready(self) -> str:
        """The node this actor runs on, once it is up."""
        return ray.get_runtime_context().get_node_id()

    async def interview(self, key: str, question: str) -> InterviewAnswer:
        """The persona under `key` answers in character, from the conversation it has had so far."""
        agent = self.host.agent(key)
        memory = PersonaMemory.of(Conversation.of(agent.persona, list(agent.heard)))
        try:
            return await interview(memory, agent.topic, question, self.models.for_topic(agent.topic))
        finally:  # filed here, not carried back: a user's interview after the run has no ledger reader
            await self.models.flush()

    def add_writer(self, key: str, name: str, topic: str, persona: Persona, max_turns: int) -> AgentCard:
        """A fresh writer under `key` (replacing one from an earlier, failed try)."""
        return self.host.add(key, WriterAgent(name, topic, persona, self.models.for_topic(topic), max_turns))

    async def converse(self, key: str, name: str, topic: str, persona: Persona, max_turns: int,
                       experts: ActorPool, expert: ExpertSpec, turn_timeout_s: float) -> Conversation:
        """The persona's conversation with the expert pool, run here by a fresh writer under `key` (replacing
        one from an earlier, failed try). An expert turn's typed error (a lost expert pool, a timeout) is
        raised as itself, not as the team's bare RuntimeError."""
        self.add_writer(key, name, topic, persona, max_turns)
        other = PooledChatAgent(AgentCard.of(ExpertAgent("expert", topic, None, None)), experts, expert,
                                stage="conversations", timeout_s=turn_timeout_s)

        async def talk() -> Conversation:
            try:
                return await converse(topic, persona, self.host.agent(key), other, max_turns)
            except Exception as exc:
                if other.last_error is not None and other.last_error is not exc:
                    raise other.last_error from exc
                raise

        return await self.models.carried(talk())

    def keys(self) -> list[str]:
        """The keys of the writers this actor hosts."""
        return sorted(self.host.agents)

    def release(self, topics: Sequence[str]) -> None:
        """Forget these topics' writers and models (a long-lived service, after their run)."""
        prefixes = tuple(f"{topic_slug(t)}/" for t in topics)
        for key in [k for k in self.host.agents if k.startswith(prefixes)]:
            del self.host.agents[key]
        self.models.release(topics)

    def conversation(self, key: str) -> list[tuple[str, str]]:
        """The writer's (question, answer) turns so far."""
        agent = self.host.agent(key)
        return list(agent.turns)
