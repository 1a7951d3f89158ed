"""One autogen team, local or spread over actors, has the same conversation."""

from __future__ import annotations

import asyncio

import pytest
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from cluster_agents import DONE, CountingAgent, HostActor, PoolMember

from actors.chat_proxy import AgentCard, AgentNotHosted, ChatAgentHost, PooledChatAgent, RemoteChatAgent
from actors.pool import ActorOptions, ActorPool


def _transcript(result) -> list[tuple[str, str]]:
    return [(m.source, m.to_text()) for m in result.messages]


async def _converse(writer, expert) -> list[tuple[str, str]]:
    team = RoundRobinGroupChat([writer, expert],
                               termination_condition=TextMentionTermination(DONE) | MaxMessageTermination(20))
    return _transcript(await team.run(task="topic: flood riders"))


def _local() -> list[tuple[str, str]]:
    return asyncio.run(_converse(CountingAgent("writer", stop_after=3), CountingAgent("expert")))


def test_host_runs_agents_in_one_process():
    host = ChatAgentHost()
    card = host.add("w", CountingAgent("writer"))
    assert card.name == "writer"
    with pytest.raises(AgentNotHosted, match="no agent 'x' on this actor"):
        host.agent("x")


def test_remote_and_pooled_agents_hold_the_same_conversation(ray_cluster):
    local = _local()
    assert local[-1][1].endswith(DONE) and len(local) == 6  # task + 3 writer turns + 2 expert turns

    host = HostActor.remote()
    pool = ActorPool.create(PoolMember, size=2, options=ActorOptions(max_task_retries=2), label="Expert")
    pool.wait_ready(timeout_s=120)

    async def remote_run():
        card = await host.add.remote("topic/writer", "writer", 3)
        writer = RemoteChatAgent(card, host, "topic/writer", label="PersonaWriter[topic/writer]",
                                 stage="conversation", timeout_s=60)
        expert = PooledChatAgent(AgentCard.of(CountingAgent("expert")), pool, {"name": "expert"},
                                 stage="conversation", timeout_s=60)
        transcript = await _converse(writer, expert)
        # the writer's state stayed in its actor; the expert's rode along with each turn
        return transcript, await writer.save_state(), await expert.save_state()

    transcript, writer_state, expert_state = asyncio.run(remote_run())
    assert transcript == local
    assert writer_state == {"turns": 3, "seen": 3}  # each turn brings one new message
    assert expert_state == {"turns": 2, "seen": 3}  # the task and the first question came together
