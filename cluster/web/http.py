"""Serving an HTTP face from the command's own process (uvicorn) until it is stopped.

`raystorm mcp --transport http` always, and `raystorm web` on this machine (no --address), serve this way:
one process, one listener on the address given, nothing else started. A local Ray would add a dozen
daemons whose gRPC servers listen on every interface whatever node address they are given (measured:
`ray.init(_node_ip_address="127.0.0.1")` still leaves GCS, raylet, workers and agents on `*`), and a face
with one replica gains nothing from it. On SIGTERM or Ctrl-C the server stops taking requests, finishes
those under way (a few seconds at most), and returns, so the caller closes its store before the process
ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal

GRACEFUL_S = 5  # how long requests under way may take to finish once a stop is asked


async def serve_http(app, host: str, port: int) -> None:
    """Serve the ASGI `app` (its gate already in front: `cluster.web.guard.Gate`) at host:port until SIGTERM
    or the task is cancelled (Ctrl-C); a port that cannot be bound ends the command (uvicorn says why)."""
    import uvicorn

    class Server(uvicorn.Server):
        def capture_signals(self):  # the command's own handlers stop it (below, and run_async's Ctrl-C)
            return contextlib.nullcontext()

    server = Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                   timeout_graceful_shutdown=GRACEFUL_S))
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: setattr(server, "should_exit", True))
    try:
        await server.serve()
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
