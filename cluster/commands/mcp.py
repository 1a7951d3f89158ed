"""`raystorm mcp -c NAME [--runs DIR] [--wiki DIR] [--transport stdio|http]`: raystorm as MCP tools."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from cluster.commands.common import add_store_arguments, collection_name, info, run_async
from cluster.web.guard import LOOPBACK_NAMES, Gate, add_gate_arguments, gate_settings

TOKEN_ENV = "RAYSTORM_MCP_TOKEN"


def register(sub: argparse._SubParsersAction) -> None:
    from agents.lm.arguments import add_llm_arguments
    from cluster.commands.sources import add_source_arguments

    p = sub.add_parser(
        "mcp", help="serve a collection to AI agents as MCP tools (search, ask, graph, wiki, reports)",
        description="A Model Context Protocol server over one collection: tools search, ask, graph_locate, "
                    "graph_expand, wiki_page, claims_check, report_start, report_status, report_result, "
                    "interview; finished reports and wiki pages as resources (raystorm://report/RUN_ID, "
                    "raystorm://wiki/PAGE). It holds the collection's store while it runs. Only the runs "
                    "folder and the --wiki folders are readable through it.",
        epilog="e.g. register with an MCP client as the command:  raystorm mcp -c example\n"
               "     over HTTP:  raystorm mcp -c example --transport http --port 8765",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--collection", "-c", required=True, type=collection_name, help="the ingested collection")
    p.add_argument("--runs", metavar="DIR", help="where reports are written and read (default: DATA_DIR/runs)")
    p.add_argument("--wiki", action="append", default=[], metavar="DIR",
                   help="a wiki folder built by `raystorm wiki build` to serve (repeatable)")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                   help="stdio (default: the client starts this command) or streamable HTTP")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: the address to bind (default 127.0.0.1; any "
                   f"other needs a token)")
    p.add_argument("--port", type=int, default=8765, help="HTTP: the port (default 8765)")
    p.add_argument("--token", default=None, help=f"HTTP: the bearer token every request must carry "
                   f"(default: ${TOKEN_ENV}); required unless bound to a loopback address")
    add_gate_arguments(p)
    add_source_arguments(p, server=True)
    add_llm_arguments(p)
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cluster.mcp_server import build_server
    from cluster.session import session_of
    from retrieval.errors import UsageError

    for folder in args.wiki:
        if not Path(folder).is_dir():
            raise UsageError(f"--wiki {folder}: no such folder (build one with `raystorm wiki build`)")
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if args.transport == "http" and args.host not in LOOPBACK_NAMES and not token:
        raise UsageError(f"--host {args.host} serves beyond this machine: give a token (--token or ${TOKEN_ENV})")
    session = session_of(args, [Path(w) for w in args.wiki])
    gate = gate_settings(args.host, args.allowed_host, args.max_request_mb)
    server = build_server(session, args.host, args.port, gate)
    return run_async(_serve(session, server, args, token, gate))


async def _serve(session, server, args: argparse.Namespace, token: str | None, gate) -> int:
    session.open()  # one store, one set of models for every request
    try:
        if args.transport == "stdio":
            session.store.note("serving its MCP client over stdio")  # what a command that waits is told
            await server.run_stdio_async()
            return 0
        from cluster.web.http import serve_http

        info(f"raystorm mcp: collection '{args.collection}' at http://{args.host}:{args.port}/mcp")
        session.store.note(f"serving MCP at http://{args.host}:{args.port}/mcp")
        # the gate first (host, origin, body size: one-line 403/413), then the token, then the SDK's own checks
        await serve_http(Gate(with_token(server.streamable_http_app(), token), gate), args.host, args.port)
        return 0
    finally:
        await session.close()


def with_token(app, token: str | None):
    """`app`, refusing (401) every HTTP request without `Authorization: Bearer TOKEN` when a token is set."""
    if token is None:
        return app
    import hmac

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
            if not hmac.compare_digest(given, f"Bearer {token}"):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"a bearer token is required\n"})
                return
        await app(scope, receive, send)

    return guarded
