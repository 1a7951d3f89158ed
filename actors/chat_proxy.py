"""autogen chat agents whose work happens in a Ray actor, so one team spans the cluster.

A `RoundRobinGroupChat` only ever calls an agent's `on_messages` / `on_reset`
(and `save_state` / `load_state`). The proxies here implement exactly those by
forwarding to an actor, so the same team runs whether its agents are local
objects or live on other nodes. What crosses the process boundary are autogen's
own pydantic messages and its `Response`; nothing is re-encoded.

- `RemoteChatAgent`: a *stateful* agent pinned to one actor, which keeps its
  state there. The actor side is a `ChatAgentHost`. (A persona's writer runs its
  whole conversation on its own actor instead: `PersonaWriter.converse`.)
- `PooledChatAgent`: a stateless-per-call agent on any actor of a pool (the
  topic expert). The agent's saved state travels with each turn: the pool member
  loads it, answers, and returns the new state, so any member can take the next
  turn, and a turn retried on another actor after a crash gives the same reply.

An autogen team turns an agent's exception into a bare `RuntimeError(str(exc))`;
each proxy keeps the typed error it raised last in `last_error`, so the caller
of the team can tell a lost actor (worth a retry) from anything else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage
from autogen_core import CancellationToken
from pydantic import BaseModel

from actors.calls import call
from actors.pool import ActorPool
from retrieval.errors import RaystormError

DEFAULT_TURN_TIMEOUT_S = 300.0


class AgentCard(BaseModel):
    """What a proxy needs to stand in for an agent it does not hold."""

    name: str
    description: str
    produced_message_types: list[type[BaseChatMessage]]

    @classmethod
    def of(cls, agent: BaseChatAgent) -> "AgentCard":
        return cls(name=agent.name, description=agent.description,
                   produced_message_types=list(agent.produced_message_types))


class AgentNotHosted(RaystormError):
    """The actor has no agent under this key: it restarted (and lost its agents), or never had it."""

    def __init__(self, key: str, hosted: list[str]):
        super().__init__(f"no agent '{key}' on this actor (hosting: {', '.join(hosted) or 'none'}); if the "
                         "actor restarted, its agents are gone: start the conversation again")
        self.key = key
        self.hosted = hosted


class ChatAgentHost:
    """The actor side: agents by key, each driven through its own autogen API.

    Actors hold one of these and expose its methods; it has no Ray in it, so it
    is tested (and usable) in one process.
    """

    def __init__(self) -> None:
        self.agents: dict[str, BaseChatAgent] = {}

    def add(self, key: str, agent: BaseChatAgent) -> AgentCard:
        self.agents[key] = agent
        return AgentCard.of(agent)

    def agent(self, key: str) -> BaseChatAgent:
        try:
            return self.agents[key]
        except KeyError:
            raise AgentNotHosted(key, sorted(self.agents)) from None

    async def on_messages(self, key: str, messages: Sequence[BaseChatMessage]) -> Response:
        return await self.agent(key).on_messages(list(messages), CancellationToken())

    async def on_reset(self, key: str) -> None:
        await self.agent(key).on_reset(CancellationToken())

    async def save_state(self, key: str) -> Mapping[str, Any]:
        return await self.agent(key).save_state()

    async def load_state(self, key: str, state: Mapping[str, Any]) -> None:
        await self.agent(key).load_state(state)


async def stateless_turn(agent: BaseChatAgent, state: Mapping[str, Any] | None,
                         messages: Sequence[BaseChatMessage]) -> tuple[Response, Mapping[str, Any]]:
    """One turn of a freshly built agent: load `state`, answer `messages`, return the reply and the new state."""
    if state:
        await agent.load_state(state)
    response = await agent.on_messages(list(messages), CancellationToken())
    return response, await agent.save_state()


async def _linked(ref: Any, token: CancellationToken, **bound: Any) -> Any:
    """`call(ref)`, cancelled when the team cancels the token."""
    task = asyncio.ensure_future(call(ref, **bound))
    token.link_future(task)
    return await task


class RemoteChatAgent(BaseChatAgent):
    """Stands in for the agent `key` hosted by `actor` (whose methods mirror `ChatAgentHost`)."""

    def __init__(self, card: AgentCard, actor: Any, key: str, *, label: str, stage: str,
                 timeout_s: float = DEFAULT_TURN_TIMEOUT_S):
        super().__init__(card.name, card.description)
        self._produced = list(card.produced_message_types)
        self._actor = actor
        self._key = key
        self._bound = dict(actor=label, stage=stage, timeout_s=timeout_s)
        self.last_error: Exception | None = None

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return self._produced

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        ref = self._actor.on_messages.remote(self._key, list(messages))
        try:
            return await _linked(ref, cancellation_token, method="on_messages", **self._bound)
        except Exception as exc:
            self.last_error = exc
            raise

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        await _linked(self._actor.on_reset.remote(self._key), cancellation_token, method="on_reset", **self._bound)

    async def save_state(self) -> Mapping[str, Any]:
        return await call(self._actor.save_state.remote(self._key), method="save_state", **self._bound)

    async def load_state(self, state: Mapping[str, Any]) -> None:
        await call(self._actor.load_state.remote(self._key, state), method="load_state", **self._bound)


class TurnHost(Protocol):
    """What the actors behind a `PooledChatAgent` expose (e.g. `actors.expert.ExpertActor`)."""

    async def turn(self, spec: Any, state: Mapping[str, Any] | None,
                   messages: Sequence[BaseChatMessage]) -> tuple[Response, Mapping[str, Any]]: ...


class PooledChatAgent(BaseChatAgent):
    """Stands in for an agent that any actor of `pool` can build from `spec`; its state rides along.

    The pool's actors expose `turn(spec, state, messages) -> (Response, state)`,
    typically `stateless_turn(build(spec), state, messages)`.
    """

    def __init__(self, card: AgentCard, pool: ActorPool, spec: Any, *, stage: str,
                 timeout_s: float = DEFAULT_TURN_TIMEOUT_S):
        super().__init__(card.name, card.description)
        self._produced = list(card.produced_message_types)
        self._pool = pool
        self._spec = spec
        self._stage = stage
        self._timeout_s = timeout_s
        self._state: Mapping[str, Any] | None = None
        self.last_error: Exception | None = None

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return self._produced

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        task = asyncio.ensure_future(self._pool.call(
            TurnHost.turn, self._spec, self._state, list(messages), stage=self._stage, timeout_s=self._timeout_s,
            idempotent=True))
        cancellation_token.link_future(task)
        try:
            response, self._state = await task
        except Exception as exc:
            self.last_error = exc
            raise
        return response

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        self._state = None

    async def save_state(self) -> Mapping[str, Any]:
        return dict(self._state or {})

    async def load_state(self, state: Mapping[str, Any]) -> None:
        self._state = dict(state) or None
