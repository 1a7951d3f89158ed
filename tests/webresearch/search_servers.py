"""Fake search engines: real HTTP on 127.0.0.1 answering in each provider's documented JSON format.

One server serves every engine under its own prefix (`/searxng/search`, `/bing/v7.0/search`, ...),
so `SearchEngineSettings(engine=..., url=server.url(engine))` reaches it like the real API. A test
may script the next answers of an engine (status, body, delay); every request is logged.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HITS = [("https://example.org/surge", "Storm <strong>surge</strong> explained", "A storm surge is a rise of the sea."),
        ("https://example.org/barrier", "Barriers &amp; gates", "Movable barriers close estuaries."),
        ("https://example.org/dike", "Dikes", "Earthen walls keep the sea out.")]


def documented_reply(engine: str, query: str) -> dict:
    """The engine's response body for HITS, in its documented shape."""
    if engine == "searxng":
        return {"query": query, "number_of_results": 0, "answers": [], "suggestions": [],
                "results": [{"url": u, "title": t, "content": s, "engine": "duckduckgo", "score": 1.0}
                            for u, t, s in HITS]}
    if engine == "tavily":
        return {"query": query, "answer": None, "response_time": 0.4, "images": [],
                "results": [{"title": t, "url": u, "content": s, "score": 0.9, "raw_content": None}
                            for u, t, s in HITS]}
    if engine == "brave":
        return {"type": "search", "query": {"original": query},
                "web": {"type": "search", "results": [{"title": t, "url": u, "description": s, "language": "en"}
                                                      for u, t, s in HITS]}}
    if engine == "serper":
        return {"searchParameters": {"q": query, "type": "search", "engine": "google"},
                "organic": [{"title": t, "link": u, "snippet": s, "position": i + 1}
                            for i, (u, t, s) in enumerate(HITS)]}
    if engine == "bing":
        return {"_type": "SearchResponse", "queryContext": {"originalQuery": query},
                "webPages": {"webSearchUrl": "https://www.bing.com/search?q=x", "totalEstimatedMatches": 3,
                             "value": [{"id": f"https://api.bing.microsoft.com/api/v7/#WebPages.{i}", "name": t,
                                        "url": u, "snippet": s} for i, (u, t, s) in enumerate(HITS)]}}
    if engine == "you":
        return {"hits": [{"url": u, "title": t, "description": s, "snippets": [s]} for u, t, s in HITS],
                "latency": 0.3}
    raise ValueError(engine)


@dataclass
class Answer:
    status: int = 200
    body: bytes | None = None  # None: the documented reply
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Logged:
    engine: str
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    json: dict | None


class SearchServer:
    def __init__(self):
        self.log: list[Logged] = []
        self.scripts: dict[str, list[Answer]] = {}
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, engine: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{engine}"

    def script(self, engine: str, *answers: Answer) -> None:
        with self.lock:
            self.scripts[engine] = list(answers)

    def requests(self, engine: str) -> list[Logged]:
        with self.lock:
            return [r for r in self.log if r.engine == engine]

    def reset(self) -> None:
        with self.lock:
            self.log.clear()
            self.scripts.clear()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002
                pass

            def _answer(self, method: str) -> None:
                parts = urlsplit(self.path)
                engine = parts.path.strip("/").split("/")[0]
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                payload = json.loads(raw) if raw else None
                query = parse_qs(parts.query)
                with server.lock:
                    server.log.append(Logged(engine, method, parts.path, query,
                                             {k.lower(): v for k, v in self.headers.items()}, payload))
                    script = server.scripts.get(engine)
                    answer = script.pop(0) if script else Answer()
                time.sleep(answer.delay_s)
                text = (query.get("q") or query.get("query") or [""])[0] or (payload or {}).get("query") \
                    or (payload or {}).get("q", "")
                body = answer.body if answer.body is not None else json.dumps(documented_reply(engine, text)).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.headers.get("Content-Type", "application/json"))
                for k, v in answer.headers.items():
                    if k != "Content-Type":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):  # noqa: N802
                self._answer("GET")

            def do_POST(self):  # noqa: N802
                self._answer("POST")

        return Handler
