"""`raystorm web -c NAME [--runs DIR] [--address ADDR] [--host 127.0.0.1] [--port 8000]`."""

from __future__ import annotations

import argparse
import os
import time

from cluster.commands.common import add_store_arguments, collection_name, info

TOKEN_ENV = "RAYSTORM_WEB_TOKEN"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(sub: argparse._SubParsersAction) -> None:
    from agents.lm.arguments import add_llm_arguments

    p = sub.add_parser(
        "web", help="pages and an HTTP API over a collection (Ray Serve)",
        description="Serve a collection to people and scripts: reports with each [n] opening its source lines, "
                    "ask with the hops streamed, interviews, the evidence graph, and starting reports; an HTTP "
                    "API described at /openapi.json (GET /api/health, POST /api/ask, /api/search, "
                    "/api/reports, ...). A Ray Serve application, on local Ray or a cluster (--address). It "
                    "owns the collection's store while it runs, so every request shares it.",
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
    p.add_argument("--address", default=None, help="a Ray cluster to run on (default: local Ray)")
    add_llm_arguments(p)
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cluster.session import session_of
    from retrieval.errors import UsageError

    token = args.token or os.environ.get(TOKEN_ENV) or None
    if args.host not in LOOPBACK and not token:
        raise UsageError(f"--host {args.host} serves beyond this machine: give a token (--token or ${TOKEN_ENV})")
    session_of(args)  # the runs folder, the collection name: checked here, before Ray starts
    from ray import serve

    from cluster.runtime import connect
    from cluster.web.serve import WebApp

    connect(args.address)
    options = {k: v for k, v in vars(args).items() if k != "func"}
    serve.start(http_options={"host": args.host, "port": args.port}, logging_config={"log_level": "WARNING"})
    started = time.monotonic()
    serve.run(WebApp.bind(options, token), name="raystorm-web", route_prefix="/")
    info(f"raystorm web: collection '{args.collection}' at http://{args.host}:{args.port} "
         f"(ready in {time.monotonic() - started:.1f} s); Ctrl-C stops it")
    try:
        while True:
            time.sleep(3600)
    finally:
        serve.shutdown()

