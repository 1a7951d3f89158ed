"""Helpers of the multi-hop tests: the two-hop corpus, and an LLM server faked at the HTTP layer.

`FakeLLM` answers /chat/completions per step (by the structured-output schema
name); `chat_model(server)` is a real `ChatModel` — autogen's OpenAI client,
structured output, validation, repair — talking to it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

TWO_HOP = Path(__file__).resolve().parents[1] / "data" / "two_hop"
COLLECTION = "twohop"


def two_hop_questions() -> list[dict]:
    return json.loads((TWO_HOP / "questions.json").read_text(encoding="utf-8"))


def ingest_two_hop(data_dir: Path):
    from retrieval.config import StoreSettings
    from retrieval.ingest import Ingestor

    settings = StoreSettings.resolve(str(data_dir))
    ingestor = Ingestor(settings)
    try:  # questions.json is not a document: only the markdown files
        ingestor.ingest_paths(sorted(TWO_HOP.glob("*.md")), COLLECTION)
    finally:
        ingestor.store.close()
    return settings


class TwoHop:
    """The ingested corpus: `settings`, a `corpus` to search here, and a `retriever` for agents."""

    def __init__(self, settings):
        from retrieval.search import AsyncCorpus, Corpus

        self.settings = settings
        self.corpus = Corpus(settings, COLLECTION)
        self.retriever = AsyncCorpus(self.corpus)  # its worker thread serves any event loop

    def single_shot(self, question: str, k: int = 5) -> list[str]:
        """File names of the top-k passages of one search (the baseline)."""
        return [Path(h.passage.path).name for h in self.corpus.search(question, k=k)]

    def close(self) -> None:
        self.retriever.close()


class FakeLLM:
    """Replies to /chat/completions by step: `replies[step_name]` is a list used in turn (the last
    one repeats); a step with no reply is a test failure. Records the step of every request."""

    def __init__(self, replies: dict[str, list[str]]):
        self.replies = {k: list(v) for k, v in replies.items()}
        self.steps: list[str] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        step = body["response_format"]["json_schema"]["name"]
        self.steps.append(step)
        if step not in self.replies:
            raise AssertionError(f"the fake LLM has no reply for step {step}")
        queue = self.replies[step]
        content = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx.Response(200, json={
            "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": "test-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})


def chat_model(server: FakeLLM):
    """A real `ChatModel` (autogen's OpenAI client, structured output, repair) on the fake server."""
    from agents.lm.backoff import RetryPolicy
    from agents.lm.models import chat_model as build
    from agents.lm.settings import LLMSettings, ModelSpec
    from agents.lm.usage import UsageLedger

    spec = ModelSpec(provider="openai_compatible", model="test-model", base_url="http://llm.test/v1")
    settings = LLMSettings(default=spec, retry=RetryPolicy(max_retries=0), cache=False)
    client = httpx.AsyncClient(transport=httpx.MockTransport(server.handle))
    return build(spec, settings, cache=None, ledger=UsageLedger(), http_client=client)


def run(coro):
    return asyncio.run(coro)

