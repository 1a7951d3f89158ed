"""A stand-in for a remote LLM: an OpenAI-compatible chat-completions server on loopback.

It answers `POST /v1/chat/completions` (and `GET /v1/models`) the way a provider does, with
replies built from the request itself (`llm_fill.py`): a request with a JSON schema
(`response_format` json_schema or json_object, or the schema raystorm puts in its system
message in text mode) gets a value of that schema filled from the passages in the prompt, so
every raystorm step gets a valid reply that cites real passages; a request offering `tools` gets a
function call (`llm_fill.tool_call`). A plain-text prompt goes to
`PLAIN_TEXT_ANSWERERS` in order (each takes the messages, returns a reply or None), then to a
fallback: the first sentence of the prompt's passages.

Like a provider it takes time (`--latency fixed:1000` or `lognormal:median=1000,sigma=0.5`, in
ms), refuses requests beyond `--max-concurrency` with 429, fails a share of requests
(`--fail-rate 0.1`, mixed by `--fail-mix 429=1,500=1,timeout=1,truncated=1,junk=1`: a timeout
stalls `--stall-s` then drops the connection, truncated is half the reply with finish_reason
"length", junk is prose with no JSON), and counts tokens in `usage` (4 characters a token).
Every request is a line of `--log` (JSONL): start, end, status, outcome, concurrency at start.

    python -m tests.support.llm_endpoint --port 0 --latency fixed:1000 --max-concurrency 32
    # prints: http://127.0.0.1:PORT/v1   (then: raystorm report ... --llm standin --llm-base-url URL)

    from tests.support.llm_endpoint import start_endpoint
    with start_endpoint(latency="fixed:20", max_concurrency=4) as ep:
        ep.url, ep.log_path, ep.requests()
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.llm_fill import Prompt, fill, schema_in_system, tool_call

# Answerers of plain-text prompts (no schema anywhere): messages -> reply, or None to pass.
PLAIN_TEXT_ANSWERERS: list[Callable[[list[dict]], str | None]] = []
FAILURES = ("429", "500", "timeout", "truncated", "junk")
MODEL = "standin"
JUNK = "I'm sorry, but I can't help with that request right now. Please try again later."


@dataclass(frozen=True)
class Latency:
    """Milliseconds a reply takes: fixed, or lognormal around a median."""

    kind: str = "fixed"
    median_ms: float = 0.0
    sigma: float = 0.0

    @classmethod
    def parse(cls, spec: str) -> "Latency":
        kind, _, rest = spec.partition(":")
        try:
            if kind == "fixed":
                ms = float(rest)
                if ms >= 0:
                    return cls("fixed", ms)
            if kind == "lognormal":
                values = dict(part.split("=", 1) for part in rest.split(","))
                median, sigma = float(values["median"]), float(values.get("sigma", 0.5))
                if median >= 0 and sigma >= 0:
                    return cls("lognormal", median, sigma)
        except (ValueError, KeyError):
            pass
        raise ValueError(f"latency {spec!r}: expected fixed:MS or lognormal:median=MS,sigma=S")

    def draw(self, rng: random.Random) -> float:
        if self.kind == "fixed" or self.sigma == 0:
            return self.median_ms / 1000.0
        return self.median_ms * math.exp(rng.gauss(0.0, self.sigma)) / 1000.0


def parse_mix(spec: str) -> dict[str, float]:
    """`429=1,500=1,timeout=1,truncated=1,junk=1` -> weights; unknown kinds are refused."""
    mix: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        kind, _, weight = part.partition("=")
        if kind not in FAILURES:
            raise ValueError(f"fail mix {spec!r}: {kind!r} is not one of {', '.join(FAILURES)}")
        try:
            mix[kind] = float(weight or 1)
        except ValueError:
            raise ValueError(f"fail mix {spec!r}: weight of {kind!r} is not a number") from None
        if mix[kind] < 0:
            raise ValueError(f"fail mix {spec!r}: weight of {kind!r} is negative")
    if not mix or sum(mix.values()) <= 0:
        raise ValueError(f"fail mix {spec!r}: give at least one kind with a positive weight")
    return mix


@dataclass
class EndpointConfig:
    latency: Latency = field(default_factory=Latency)
    fail_rate: float = 0.0
    fail_mix: dict[str, float] = field(default_factory=lambda: {k: 1.0 for k in FAILURES})
    max_concurrency: int = 0  # 0: no cap
    stall_s: float = 30.0
    seed: int = 0

    def __post_init__(self):
        if not 0 <= self.fail_rate <= 1:
            raise ValueError(f"fail rate must be within 0..1, got {self.fail_rate}")
        if self.max_concurrency < 0:
            raise ValueError(f"max concurrency must be >= 0, got {self.max_concurrency}")


class _State:
    """What the handler threads share: the in-flight count, the random source, the log."""

    def __init__(self, config: EndpointConfig, log_path: Path, bodies_path: Path | None = None):
        self.config = config
        self.log_path = log_path
        # every request body, a JSONL line each with its id (`--record-bodies`): what reached the model
        self.bodies = bodies_path.open("a", encoding="utf-8") if bodies_path is not None else None
        self.lock = threading.Lock()
        self.in_flight = 0
        self.replying = 0  # requests whose reply is being sent and whose log line is not written yet
        self.ids = 0
        self.rng = random.Random(config.seed)
        self.log = log_path.open("a", encoding="utf-8")

    def admit(self) -> tuple[int, int, bool]:
        """(request id, concurrency at start including this one, admitted under the cap)."""
        with self.lock:
            self.ids += 1
            cap = self.config.max_concurrency
            if cap and self.in_flight >= cap:
                return self.ids, self.in_flight + 1, False
            self.in_flight += 1
            return self.ids, self.in_flight, True

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def draw(self) -> tuple[float, str | None]:
        """(seconds to take, failure kind or None)."""
        with self.lock:
            delay = self.config.latency.draw(self.rng)
            if self.rng.random() >= self.config.fail_rate:
                return delay, None
            kinds, weights = zip(*self.config.fail_mix.items())
            return delay, self.rng.choices(kinds, weights)[0]

    def record(self, entry: dict) -> None:
        with self.lock:
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()


def reply_text(body: dict) -> tuple[str, str]:
    """(the reply, how it was made: "schema", "plain:<answerer>" or "fallback") for a request body."""
    messages = body.get("messages") or []
    prompt = Prompt.of(messages)
    fmt = body.get("response_format") or {}
    schema = None
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
    elif fmt.get("type") == "json_object":
        schema = fmt.get("schema") or schema_in_system(prompt.system) or {"type": "object", "properties": {}}
    if schema is None and not fmt:
        for answer in PLAIN_TEXT_ANSWERERS:
            text = answer(messages)
            if text is not None:
                return text, f"plain:{getattr(answer, '__name__', 'answerer')}"
        schema = schema_in_system(prompt.system)
    if schema is not None:
        return json.dumps(fill(schema, prompt), ensure_ascii=False), "schema"
    first = prompt.sentences()
    return (first[0][1] if first else f"The documents say little about {prompt.topic}."), "fallback"


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out as separate writes: with Nagle's algorithm on, a kept-alive connection waits
    # for the client's delayed ACK (~40 ms a reply) before the body, which no provider's HTTPS adds
    disable_nagle_algorithm = True
    state: _State  # set on the subclass made per server

    def log_message(self, format, *args):  # the JSONL log says it all
        pass

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        if self._counting and not self._replying:
            with self.state.lock:
                self.state.replying += 1
            self._replying = True
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._counting = False  # (not logged)
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "standin"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self):
        self._counting, self._replying = True, False
        try:
            self._post()
        finally:  # logged now (each path logs after its reply)
            if self._replying:
                with self.state.lock:
                    self.state.replying -= 1

    def _post(self):
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "the body is not JSON", "type": "invalid_request_error"}})
            return
        state = self.state
        started = time.time()
        rid, concurrency, admitted = state.admit()
        if state.bodies is not None:
            with state.lock:
                state.bodies.write(json.dumps({"id": rid, "body": body}) + "\n")
                state.bodies.flush()
        entry = {"id": rid, "start": started, "concurrency": concurrency, "model": body.get("model"),
                 "schema": ((body.get("response_format") or {}).get("json_schema") or {}).get("name")}
        if not admitted:
            self._send(429, {"error": {"message": f"rate limited: more than {state.config.max_concurrency} "
                                                  "requests in flight", "type": "rate_limit_error"}},
                       {"retry-after-ms": "100"})
            state.record({**entry, "end": time.time(), "status": 429, "outcome": "over_cap"})
            return
        try:
            delay, failure = state.draw()
            if failure == "timeout":
                state.leave()  # a stalled request no longer holds a slot: its client gave up
                admitted = False
                # logged now, as it will end: the client gives up first and may read the log before then
                state.record({**entry, "end": started + state.config.stall_s, "status": 0, "outcome": "timeout"})
                time.sleep(state.config.stall_s)
                self.close_connection = True
                return
            time.sleep(delay)
            status, outcome = 200, failure or "ok"
            if failure in ("429", "500"):
                status = int(failure)
                self._send(status, {"error": {"message": f"injected failure {failure}", "type": "server_error"}})
                state.record({**entry, "end": time.time(), "status": status, "outcome": "injected"})
                return
            message: dict = {"role": "assistant"}
            if body.get("tools") and body.get("tool_choice") != "none" and failure is None:
                name, arguments = tool_call(body["tools"], body.get("messages") or [])
                text, how, finish = f"Next: {name}.", "tool", "tool_calls"
                message["tool_calls"] = [{"id": f"call_{rid}", "type": "function",
                                          "function": {"name": name, "arguments": json.dumps(arguments)}}]
            else:
                text, how = reply_text(body)
                finish = "stop"
            if failure == "truncated":
                text, finish = text[: max(1, len(text) // 2)], "length"
            elif failure == "junk":
                text = JUNK
            prompt_tokens = tokens(json.dumps(body.get("messages") or []))
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": tokens(text),
                     "total_tokens": prompt_tokens + tokens(text)}
            self._send(200, {"id": f"chatcmpl-{rid}", "object": "chat.completion", "created": int(started),
                             "model": body.get("model") or MODEL, "usage": usage,
                             "choices": [{"index": 0, "finish_reason": finish,
                                          "message": {**message, "content": text}}]})
            state.record({**entry, "end": time.time(), "status": status, "outcome": outcome, "reply": how,
                          **{k: usage[k] for k in ("prompt_tokens", "completion_tokens")}})
        except (BrokenPipeError, ConnectionResetError):  # the client gave up on us
            state.record({**entry, "end": time.time(), "status": 0, "outcome": "client_gone"})
        finally:
            if admitted:
                state.leave()


class EndpointHandle:
    """A running endpoint: `url` (ends in /v1), `log_path`, `requests()`, `stop()`; a context manager."""

    def __init__(self, server: ThreadingHTTPServer, state: _State, thread: threading.Thread):
        self._server, self._state, self._thread = server, state, thread
        host, port = server.server_address[:2]
        self.url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}/v1"
        self.log_path = state.log_path
        self.config = state.config

    def requests(self) -> list[dict]:
        """The log so far, one dict per finished request. A request whose reply is on its way is logged
        just after it: waited for (at most a second), so a client that has its reply finds it here."""
        deadline = time.monotonic() + 1.0
        while self._state.replying and time.monotonic() < deadline:
            time.sleep(0.002)
        return read_log(self.log_path)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._state.log.close()
        if self._state.bodies is not None:
            self._state.bodies.close()

    def __enter__(self) -> "EndpointHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def read_log(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def peak_concurrency(entries: list[dict]) -> int:
    """Most requests in service at once, from start/end times (rejected ones not counted)."""
    events = sorted([(e["start"], 1) for e in entries if e["outcome"] != "over_cap"]
                    + [(e["end"], -1) for e in entries if e["outcome"] != "over_cap"], key=lambda x: (x[0], x[1]))
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def start_endpoint(*, latency: str | Latency = "fixed:0", fail_rate: float = 0.0, fail_mix: str | None = None,
                   max_concurrency: int = 0, stall_s: float = 30.0, seed: int = 0, host: str = "127.0.0.1",
                   port: int = 0, log_path: str | Path | None = None,
                   bodies_path: str | Path | None = None) -> EndpointHandle:
    """Start the endpoint on a background thread; `port` 0 picks a free one; `bodies_path`: a JSONL
    file that gets every request body (`{"id", "body"}`)."""
    config = EndpointConfig(latency=Latency.parse(latency) if isinstance(latency, str) else latency,
                            fail_rate=fail_rate, max_concurrency=max_concurrency, stall_s=stall_s, seed=seed,
                            **({"fail_mix": parse_mix(fail_mix)} if fail_mix else {}))
    if log_path is None:
        log_path = Path(tempfile.mkdtemp(prefix="llm-endpoint-")) / "requests.jsonl"
    state = _State(config, Path(log_path), Path(bodies_path) if bodies_path is not None else None)
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    server.request_queue_size = 1024  # many actors connect at once
    thread = threading.Thread(target=server.serve_forever, name="llm-endpoint", daemon=True)
    thread.start()
    return EndpointHandle(server, state, thread)


def main() -> None:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1", help="bind address (0.0.0.0 to serve a cluster)")
    p.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    p.add_argument("--latency", default="fixed:0", help="fixed:MS or lognormal:median=MS,sigma=S")
    p.add_argument("--fail-rate", type=float, default=0.0, help="share of requests that fail (0..1)")
    p.add_argument("--fail-mix", default=None, help=f"weights, e.g. {'=1,'.join(FAILURES)}=1 (the default)")
    p.add_argument("--max-concurrency", type=int, default=0, help="429 beyond this many in flight (0: no cap)")
    p.add_argument("--stall-s", type=float, default=30.0, help="how long a timeout failure stalls")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log", default=None, help="the JSONL request log (default: a temp file, printed)")
    p.add_argument("--record-bodies", default=None, metavar="FILE", help="write every request body to FILE (JSONL)")
    args = p.parse_args()
    try:
        handle = start_endpoint(latency=args.latency, fail_rate=args.fail_rate, fail_mix=args.fail_mix,
                                max_concurrency=args.max_concurrency, stall_s=args.stall_s, seed=args.seed,
                                host=args.host, port=args.port, log_path=args.log,
                                bodies_path=args.record_bodies)
    except ValueError as exc:
        p.error(str(exc))
    print(handle.url, flush=True)
    print(f"log: {handle.log_path}", file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        handle.stop()


if __name__ == "__main__":
    main()
