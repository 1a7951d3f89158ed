"""The gate in front of every HTTP face (`raystorm web`, `raystorm mcp --transport http`), as ASGI middleware.

Three checks, before any route runs:
- the Host header names this server (the bound address, localhost, 127.0.0.1, [::1], or a name given with
  `--allowed-host`): a page on another domain that rebinds its name to 127.0.0.1 (DNS rebinding) reaches
  the port but not the app;
- a state-changing request (POST, PUT, PATCH, DELETE) that carries an Origin comes from this server's own
  origin: a form or fetch from another site is refused even when it can reach the port;
- a request body is at most `max_body` bytes: a declared Content-Length over it is refused before a byte
  of the body is read, and a chunked body is counted as it streams and cut off at the bound, so a huge
  body never sits in memory.
Anything refused is one line of text: 403 (host, origin) or 413 (body).
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
DEFAULT_MAX_REQUEST_MB = 1.0


class GateSettings(BaseModel):
    """Who may talk to a face: the host names it answers to, and the largest body it reads."""

    allowed_hosts: list[str] = Field(description="host names (no port) the Host header may carry; '*': any")
    max_body: int = Field(ge=1, description="the largest request body read, in bytes")

    def allows_host(self, host: str) -> bool:
        return "*" in self.allowed_hosts or host.lower() in self.allowed_hosts


def gate_settings(bound: str, extra: Iterable[str], max_request_mb: float) -> GateSettings:
    """The settings of a face bound to `bound`, with `--allowed-host` names `extra`."""
    names = {bound.strip("[]").lower(), *LOOPBACK_NAMES, *(h.strip("[]").lower() for h in extra)}
    names.discard("0.0.0.0")  # "any interface" names no host a client would send
    names.discard("::")
    return GateSettings(allowed_hosts=sorted(names), max_body=int(max_request_mb * 2**20))


def add_gate_arguments(p: argparse.ArgumentParser) -> None:
    """`--allowed-host` and `--max-request-mb`, the same on every HTTP face."""
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a host name this server may be reached by besides the bound address, localhost, "
                        "127.0.0.1 and [::1] (repeatable; e.g. the name of a reverse proxy). Requests with any "
                        "other Host header get 403")
    p.add_argument("--max-request-mb", type=_positive_mb, default=DEFAULT_MAX_REQUEST_MB, metavar="MB",
                   help=f"the largest request body accepted, in MB (default {DEFAULT_MAX_REQUEST_MB:g}); larger "
                        "ones get 413")


def _positive_mb(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of MB, got {text!r}") from None
    if not 0 < value <= 1024:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 1024, got {text}")
    return value


def host_of(header: str) -> str:
    """The host name of a Host header or an origin's netloc, without the port ("[::1]:80" -> "::1")."""
    header = header.strip()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


Send = Callable[[dict], Awaitable[None]]


async def _refuse(send: Send, status: int, line: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": (line + "\n").encode()})


class Gate:
    """ASGI middleware: `Gate(app, settings)` refuses what `settings` does not allow, passes the rest on.
    `settings` may be a function that gives them, for an app built before its command line is known (the
    web app's module, imported by Ray Serve)."""

    def __init__(self, app, settings: GateSettings | Callable[[], GateSettings]):
        self.app = app
        self._settings = settings if callable(settings) else (lambda: settings)

    @property
    def settings(self) -> GateSettings:
        return self._settings()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        if not self.settings.allows_host(host_of(host)):
            await _refuse(send, 403, f"host {host_of(host) or '(none)'!r} is not served here (--allowed-host adds one)")
            return
        origin = headers.get("origin")
        if scope["method"] in UNSAFE_METHODS and origin is not None and urlsplit(origin).netloc.lower() != host.lower():
            await _refuse(send, 403, f"requests from {origin} are not accepted here (only from this server's pages)")
            return
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.settings.max_body):
            await _refuse(send, 413, self._too_large())
            return
        await self._bounded(scope, receive, send)

    def _too_large(self) -> str:
        return f"the request body is over {self.settings.max_body / 2**20:g} MB (--max-request-mb)"

    async def _bounded(self, scope, receive, send) -> None:
        """Run the app, counting the body as it streams in; past the bound, answer 413 and let the app
        see a disconnect (its own reply, if any, is dropped)."""
        seen, refused, started = 0, False, False

        async def counted_receive():
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.settings.max_body:
                    refused = True
                    if not started:
                        await _refuse(send, 413, self._too_large())
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            nonlocal started
            if refused:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not refused:  # the app's own error; after a refusal, only its reaction to the cut body
                raise
