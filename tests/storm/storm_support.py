"""Helpers of the STORM tests (the fixtures are in conftest.py): a pipeline runner on the
session's corpus, and a fake OpenAI-compatible server at the HTTP layer."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Callable

import httpx

from agents.lm.extractive import ExtractiveModel
from agents.lm.nlp import TextToolkit
from agents.runtime import LocalRuntime
from agents.storm.flow import ReportOptions, ReportSummary, run_topic
import retrieval.ingest
from retrieval.infotable import AsyncInformationTable, InformationTable
from retrieval.search import AsyncCorpus, Corpus

FLOOD = "Harborline Mutual flood coverage"
EXAMPLE_DIR = Path(retrieval.ingest.__file__).parent / "example_corpus"
COLLECTION = "example"


class Parts:
    """What a report run needs, built on the session's corpus."""

    def __init__(self, corpus: Corpus, retriever: AsyncCorpus, nlp: TextToolkit):
        self.corpus = corpus
        self.retriever = retriever
        self.nlp = nlp

    def table(self, name: str) -> AsyncInformationTable:
        return AsyncInformationTable(InformationTable(self.corpus.store, name, self.corpus.dense, self.corpus.sparse))

    def runtime(self, models) -> LocalRuntime:
        return LocalRuntime(models, self.retriever, self.table, version=self.retriever.version)

    def extractive(self) -> ExtractiveModel:
        return ExtractiveModel(self.nlp)

    def report(self, topic: str, out_dir: Path, models, progress=None, **options) -> ReportSummary:
        """One in-process run of the report flow (its table is dropped afterwards: it is rebuilt from the log)."""
        return asyncio.run(run_topic(topic, self.runtime(models), str(out_dir), ReportOptions(**options),
                                     progress=progress))


# --- a fake OpenAI-compatible server ----------------------------------------------------------


def completion(content: str, finish_reason: str = "stop", model: str = "fake-model") -> httpx.Response:
    return httpx.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})


def schema_name(body: dict) -> str:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    # json_object / text: recognise the step by the schema in the system message
    system = body["messages"][0]["content"]
    return re.sub(r"\W", "_", system[:40])


class FakeLLM:
    """Answers /chat/completions by step (the json_schema name), from `replies`: step → callable(body) → Response.

    Records every request body; a step without a reply is a test failure.
    """

    def __init__(self, replies: dict[str, Callable[[dict], httpx.Response]]):
        self.replies = replies
        self.bodies: list[dict] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        name = schema_name(body)
        if name not in self.replies:
            raise AssertionError(f"no scripted reply for step {name}")
        return self.replies[name](body)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler))

    def calls(self, step: str) -> list[dict]:
        return [b for b in self.bodies if schema_name(b) == step]


def user_message(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")
