"""`raystorm web -c NAME [--runs DIR] [--address ADDR] [--host 127.0.0.1] [--port 8000] [--allowed-host NAME]`."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from cluster.commands.common import add_store_arguments, collection_name, info, run_async
from cluster.web.guard import LOOPBACK_NAMES, add_gate_arguments, gate_settings

TOKEN_ENV = "RAYSTORM_WEB_TOKEN"


def register(sub: argparse._SubParsersAction) -> None:
    from agents.lm.arguments import add_llm_arguments
    from cluster.commands.sources import add_source_arguments

    p = sub.add_parser(
        "web", help="pages and an HTTP API over a collection",
        description="Serve a collection to people and scripts: reports with each [n] opening its source lines, "
                    "ask with the hops streamed, interviews, the evidence graph, and starting reports; an HTTP "
                    "API described at /openapi.json (GET /api/health, POST /api/ask, /api/search, "
                    "/api/reports, ...). It runs in this process (nothing else is started, nothing listens "
                    "beyond --host), or as a Ray Serve application on a cluster (--address). It owns the "
                    "collection's store while it runs, so every request shares it. Requests must name this "
                    "server in their Host header (DNS rebinding), come from its own pages when they change "
                    "something, and carry at most --max-request-mb.",
        epilog="e.g.  raystorm web -c example            then open http://127.0.0.1:8000\n"
               "      curl -s localhost:8000/api/ask -H 'content-type: application/json' \\\n"
               "           -d '{\"collection\": \"example\", \"question\": \"What is the flood waiting period?\"}'",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--collection", "-c", required=True, type=collection_name, help="the ingested collection")
    p.add_argument("--runs", metavar="DIR", help="where reports are written and read (default: DATA_DIR/runs)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other needs a token)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--token", default=None, help=f"a token every request must carry (default: ${TOKEN_ENV}); "
                   "required unless bound to a loopback address. Open the pages once with ?token=TOKEN")
    p.add_argument("--address", default=None, help="a Ray cluster to run on, as a Ray Serve application "
                   "(default: this process)")
    add_gate_arguments(p)
    add_source_arguments(p, server=True)
    add_llm_arguments(p)
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cluster.runtime import resolve_address
    from cluster.session import session_of
    from retrieval.errors import UsageError

    token = args.token or os.environ.get(TOKEN_ENV) or None
    if args.host not in LOOPBACK_NAMES and not token:
        raise UsageError(f"--host {args.host} serves beyond this machine: give a token (--token or ${TOKEN_ENV})")
    gate = gate_settings(args.host, args.allowed_host, args.max_request_mb)
    session = session_of(args)  # the runs folder, the collection name: checked here, before anything starts
    if resolve_address(args.address):
        return _on_cluster(args, token, gate)
    return run_async(_here(session, args, token, gate))


async def _here(session, args: argparse.Namespace, token: str | None, gate) -> int:
    from cluster.web.app import create_app
    from cluster.web.http import serve_http

    started = time.monotonic()
    session.open()
    try:
        app = create_app(lambda: session, lambda: token, lambda: gate)
        url = f"http://{_url_host(args.host)}:{args.port}"
        info(f"raystorm web: collection '{args.collection}' at {url} (ready in {time.monotonic() - started:.1f} s); "
             "Ctrl-C stops it")
        session.store.note(f"serving {url}: its API answers search and ask (/docs)")  # for a command that waits
        await serve_http(app, args.host, args.port)
        return 0
    finally:
        await session.close()  # (closes the store too: the next owner may take it)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _on_cluster(args: argparse.Namespace, token: str | None, gate) -> int:
    from ray import serve

    from cluster.runtime import connect, resolve_address
    from cluster.web.serve import WebApp

    connect(args.address)
    options = {k: v for k, v in vars(args).items() if k != "func"}
    # SIGTERM as Ctrl-C, from here on (a stop may come while the app is still deploying): the app comes off
    # the cluster (finally, below) instead of outliving the command
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        serve.start(http_options={"host": args.host, "port": args.port}, logging_config={"log_level": "WARNING"})
        started = time.monotonic()
        serve.run(WebApp.bind(options, token, gate.model_dump()), name="raystorm-web", route_prefix="/")
        info(f"raystorm web: collection '{args.collection}' at http://{_url_host(args.host)}:{args.port} on the "
             f"cluster at {resolve_address(args.address)} (ready in {time.monotonic() - started:.1f} s); Ctrl-C "
             "stops it")
        while True:
            time.sleep(3600)
    finally:
        serve.shutdown()
