"""Fixtures: the bundled corpus copied to a temp dir and ingested into embedded Qdrant (real embedders),
and a loopback OpenAI-compatible server that counts the requests it gets."""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from retrieval.config import StoreSettings
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.ingest import Ingestor
from retrieval.store import PassageStore

EXAMPLE = Path(__file__).resolve().parents[2] / "retrieval" / "example_corpus"


@pytest.fixture(scope="session")
def embedders(tmp_path_factory):
    models = tmp_path_factory.mktemp("models")
    return DenseEmbedder(models_dir=models), SparseEmbedder(models)


@pytest.fixture
def ingested(tmp_path, embedders):
    """(data dir, corpus folder): the example corpus ingested as 'hb' into a fresh embedded store."""
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    shutil.copytree(EXAMPLE, corpus)
    settings = StoreSettings.resolve(data_dir=str(data), qdrant_url=None)
    store = PassageStore(settings)
    Ingestor(settings, store=store, dense=embedders[0], sparse=embedders[1]).ingest_paths([corpus], "hb")
    store.close()
    return data, corpus


class CountingLLM:
    """A loopback chat-completions endpoint: every request is counted; replies restate source [1]."""

    def __init__(self):
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                owner.requests += 1
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                user = body.get("messages", [{}])[-1].get("content", "")
                first = next((ln for ln in str(user).splitlines()[3:] if ln.strip() and not ln.startswith("[")), "")
                reply = {"statements": [f"{first.strip()} [1]"]}
                data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                       "role": "assistant", "content": json.dumps(reply)}}],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def counting_llm():
    llm = CountingLLM()
    yield llm
    llm.close()
