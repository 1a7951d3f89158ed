"""Trivial autogen chat agents and actors hosting them, for the proxy tests (importable by Ray workers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ray
from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, TextMessage
from autogen_core import CancellationToken
from pydantic import BaseModel

from actors.chat_proxy import AgentCard, ChatAgentHost, stateless_turn
from agents.lm.steps import Step

DONE = "Thank you so much for your help!"


class CountingAgent(BaseChatAgent):
    """Replies with its turn count, how many messages it has seen, and the last one; stateful."""

    def __init__(self, name: str, stop_after: int | None = None):
        super().__init__(name, f"counts turns ({name})")
        self.stop_after = stop_after
        self.turns = 0
        self.seen = 0

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TextMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        self.turns += 1
        self.seen += len(messages)
        last = messages[-1].to_text() if messages else "-"
        text = f"{self.name} turn {self.turns} (seen {self.seen}) re: {last[:40]}"
        if self.stop_after and self.turns >= self.stop_after:
            text += f" {DONE}"
        return Response(chat_message=TextMessage(content=text, source=self.name))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        self.turns = self.seen = 0

    async def save_state(self) -> Mapping[str, Any]:
        return {"turns": self.turns, "seen": self.seen}

    async def load_state(self, state: Mapping[str, Any]) -> None:
        self.turns, self.seen = state["turns"], state["seen"]


@ray.remote(num_cpus=0, max_restarts=1)
class HostActor:
    def __init__(self) -> None:
        self.host = ChatAgentHost()

    def add(self, key: str, name: str, stop_after: int | None) -> AgentCard:
        return self.host.add(key, CountingAgent(name, stop_after))

    async def on_messages(self, key, messages):
        return await self.host.on_messages(key, messages)

    async def on_reset(self, key):
        await self.host.on_reset(key)

    async def save_state(self, key):
        return await self.host.save_state(key)

    async def load_state(self, key, state):
        await self.host.load_state(key, state)


@ray.remote(num_cpus=0, max_restarts=2, max_task_retries=2)
class PoolMember:
    """Builds the agent a spec names for every turn; its state comes with the call."""

    def ready(self) -> bool:
        return True

    async def turn(self, spec: dict, state, messages):
        return await stateless_turn(CountingAgent(spec["name"], spec.get("stop_after")), state, messages)

    def pid(self) -> int:
        import os

        return os.getpid()


class KeywordOnlyError(Exception):
    """An error that pickles but cannot be rebuilt from its args (like many libraries' errors)."""

    def __init__(self, *, code: int):
        super().__init__(f"failed with code {code}")


@ray.remote(num_cpus=0, max_restarts=1, max_task_retries=0)
class Misbehaving:
    """Slow, failing or dying on request: for the bounded-call tests."""

    def ready(self) -> bool:
        return True

    async def sleep(self, seconds: float) -> str:
        import asyncio

        await asyncio.sleep(seconds)
        return "woke"

    def fail(self, user_error: bool) -> None:
        from retrieval.errors import RaystormError

        if user_error:
            raise RaystormError("collection 'x' not found: run `raystorm ingest`")
        raise ValueError("bad value")

    def die(self) -> None:
        import os

        os._exit(1)

    def fail_unpicklable(self) -> None:
        raise KeywordOnlyError(code=7)

    def not_hosted(self) -> None:
        from actors.chat_proxy import AgentNotHosted

        raise AgentNotHosted("topic/writer_x", [])

    def endpoint_down(self) -> None:
        from agents.lm.errors import EndpointUnavailableError

        raise EndpointUnavailableError(endpoint="http://llm:8000/v1", model="m", reason="HTTP 503", attempts=4)

    def pid(self) -> int:
        import os

        return os.getpid()


class Note(BaseModel):
    text: str


class ShoutStep(Step[Note, Note]):
    """A trivial step with an offline implementation, for the gateway tests."""

    name = "test.shout"
    role = "article"
    Input = Note
    Output = Note
    instructions = "Repeat the text in capitals."

    @classmethod
    def extract(cls, inp, nlp):
        return Note(text=inp.text.upper())


REFINE_HEADINGS = "Source document headings: "


def refined_headings(listed: str) -> list[str]:
    return [h.strip() for h in listed.split(";") if h.strip() and h.strip() != "(none)"][:3]


def flaky_llm_client(fail_every: int) -> "httpx.AsyncClient":
    """An OpenAI-compatible endpoint, at the HTTP layer, for the outline steps: of each request (by its
    body), it fails (HTTP 503) the first and every `fail_every`-th after, so every call needs a retry
    however calls from several topics interleave, and answers the others like a plain model would: the
    draft is the usual sections of such an article, the refined outline the first source-document
    headings the request lists."""
    import itertools
    import json

    import httpx

    from agents.lm.nlp import TextToolkit
    from agents.storm.records import Outline, OutlineSection
    from agents.storm.steps_outline import DraftOutline, DraftOutlineInput

    counter = itertools.count(1)
    seen: dict[bytes, int] = {}  # times each request body was received
    nlp = TextToolkit()

    def answer(body: dict) -> str:
        step = body["response_format"]["json_schema"]["name"]
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        lines = user.splitlines()
        if step == "storm_outline_draft":
            out = DraftOutline.extract(DraftOutlineInput(topic=lines[0].removeprefix("Topic: ").strip()), nlp)
        elif step == "storm_outline_refine":
            listed = next(x for x in lines if x.startswith(REFINE_HEADINGS)).removeprefix(REFINE_HEADINGS)
            out = Outline(sections=[OutlineSection(heading=h) for h in refined_headings(listed)])
        else:
            raise AssertionError(f"this endpoint only serves the outline steps, not {step}")
        return out.model_dump_json()

    async def handle(request: httpx.Request) -> httpx.Response:
        n = next(counter)
        seen[request.content] = times = seen.get(request.content, 0) + 1
        if fail_every == 1 or times % fail_every == 1:
            return httpx.Response(503, json={"error": {"message": "overloaded, try again"}})
        body = json.loads(request.content)
        return httpx.Response(200, json={
            "id": f"cmpl-{n}", "object": "chat.completion", "created": 1_700_000_000, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer(body)}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
        })

    return httpx.AsyncClient(transport=httpx.MockTransport(handle))
