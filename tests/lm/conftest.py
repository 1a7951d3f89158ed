"""A tiny step, and an OpenAI-compatible server faked at the HTTP layer."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from pydantic import BaseModel, Field

from agents.lm.steps import Step


class Question(BaseModel):
    question: str
    passages: list[str] = Field(default_factory=list)


class Answer(BaseModel):
    answer: str
    citations: list[int] = Field(default_factory=list, description="1-based passage numbers")


class AnswerStep(Step[Question, Answer]):
    name = "test.answer"
    role = "conv_simulator"
    Input = Question
    Output = Answer
    instructions = "Answer the question from the passages only, citing passage numbers."

    @classmethod
    def extract(cls, inp, nlp):
        best = nlp.mmr_select(inp.question, inp.passages, k=1)
        if not best:
            return Answer(answer="")
        return Answer(answer=nlp.sentences(inp.passages[best[0]])[0], citations=[best[0] + 1])


class FakeOpenAI:
    """Answers /chat/completions from a script of responses; records every request.

    A script item is an `httpx.Response`, an exception to raise, or a callable
    taking the request and returning either.
    """

    def __init__(self, *, model: str = "gpt-4o-mini-2024-07-18"):
        self.script: list = []
        self.requests: list[httpx.Request] = []
        self.model = model

    @property
    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests]

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.script:
            raise AssertionError(f"unexpected request #{len(self.requests)} to {request.url}")
        item = self.script.pop(0)
        if callable(item):
            item = await item(request)
        if isinstance(item, BaseException):
            raise item
        return item

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def completion(self, content: str, *, finish_reason: str = "stop", prompt_tokens: int = 100,
                   completion_tokens: int = 20) -> httpx.Response:
        return httpx.Response(200, json={
            "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": self.model,
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })


@pytest.fixture
def step() -> type[AnswerStep]:
    return AnswerStep


@pytest.fixture
def question() -> Question:
    return Question(question="Who led the trial?", passages=["Maria Okafor led the trial.", "It rained."])


@pytest.fixture
def fake_openai() -> Callable[..., FakeOpenAI]:
    return FakeOpenAI


class SleepRecorder:
    """Stands in for asyncio.sleep so backoff waits are observed, not spent."""

    def __init__(self):
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()
