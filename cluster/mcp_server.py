"""raystorm as MCP tools and resources, on the official MCP SDK (FastMCP).

Each tool is a typed function with a docstring that calls the `Session` (the same functions the CLI
calls) and returns the CLI's `--json` shape. A report never blocks the protocol: `report_start` returns a
run id at once, `report_status` gives the progress events since the last poll, `report_result` the report.
Finished reports and wiki pages are resources with stable URIs: `raystorm://report/{run_id}` and
`raystorm://wiki/{page}`.
"""

from __future__ import annotations

from typing import Any

from cluster.limits import (Edges, Filters, GraphK, History, Hops, K, Name, Personas, Question, SearchMode,
                            Since, Source, Strategy, Topic, Writer, history_dicts)
from cluster.session import Session
from cluster.web.guard import GateSettings

INSTRUCTIONS = (
    "raystorm searches one document collection and its evidence graph. Start with `search` or `ask`; "
    "every passage says whether it is current or superseded. `graph_locate` / `graph_expand` show which "
    "document supersedes or amends which. `report_start` writes a cited report in the background: poll "
    "`report_status`, then read `report_result`. `interview` asks the simulated researchers of a report."
)


def build_server(session: Session, host: str = "127.0.0.1", port: int = 8765, gate: GateSettings | None = None):
    """The FastMCP server of an opened `session` (the caller opens and closes it around serving); over
    HTTP, `gate` says which Host and Origin headers it answers and the largest body it reads (the SDK's
    own checks, behind `cluster.web.guard.Gate`, which gives the one-line 403/413)."""
    from mcp.server.fastmcp import FastMCP
    from mcp.server.transport_security import TransportSecuritySettings

    extra = {}
    if gate is not None:
        names = [f"[{h}]" if ":" in h else h for h in gate.allowed_hosts]
        extra = dict(max_request_body_size=gate.max_body, transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection="*" not in gate.allowed_hosts,
            allowed_hosts=[form for n in names for form in (n, f"{n}:*")],
            allowed_origins=[form for n in names for s in ("http", "https") for form in (f"{s}://{n}", f"{s}://{n}:*")]))
    mcp = FastMCP("raystorm", instructions=INSTRUCTIONS, host=host, port=port, log_level="WARNING", **extra)

    @mcp.tool()
    async def search(query: Question, k: K = 5, mode: SearchMode | None = None, sources: Filters | None = None,
                     tags: Filters | None = None, source: Source = "corpus") -> list[dict[str, Any]]:
        """Ranked passages for a query: title, path, page / line range, text, score and the evidence
        graph's status (current, superseded, amended). `sources`/`tags` keep only those files or tags.
        `source`: corpus (the collection), web (a search engine's pages, fetched and cited at the lines
        of their snapshots) or hybrid (both); web needs a server started with --search-engine."""
        return await session.search(query, k, mode, sources, tags, source=source)

    @mcp.tool()
    async def ask(question: Question, strategy: Strategy = "auto", history: History | None = None,
                  source: Source = "corpus") -> dict[str, Any]:
        """A short answer with its confidence, or an honest refusal with the reason; the citations (each
        with its current/superseded status) and the hops. For a follow-up, pass the earlier answers'
        `turn` objects as `history`. `source`: corpus, web or hybrid, as for `search`."""
        return await session.ask(question, strategy, history_dicts(history), source=source)

    @mcp.tool()
    def graph_locate(terms: Question, k: GraphK = 10) -> list[dict[str, Any]]:
        """The evidence-graph nodes (documents, sections, passages) that best match some terms: a title,
        a heading, a form or bulletin number. Use a node's id with `graph_expand`."""
        return session.graph_locate(terms, k)

    @mcp.tool()
    def graph_expand(node: Name, edges: Edges | None = None, hops: Hops = 1) -> dict[str, Any]:
        """A node's typed edges (supersedes, superseded_by, amends, amended_by, refers_to, attaches_to,
        cites, ...), each with the file and lines where it was found; `hops` follows one edge type."""
        return session.graph_expand(node, edges, hops)

    @mcp.tool()
    def wiki_page(page: Name) -> dict[str, Any]:
        """A compiled wiki page (by name, e.g. 'flood-rider-form-fr-12') with its claims and their
        evidence (file, lines, hash)."""
        return session.wiki_page(page)

    @mcp.tool()
    def claims_check(folder: Name) -> dict[str, Any]:
        """ok / relocated / stale / unresolved for every claim of a report run or wiki folder, by
        re-reading and hashing the cited lines (no model call). `folder`: a run id or a wiki folder."""
        return session.claims_check(folder)

    @mcp.tool()
    def report_start(topic: Topic, writer: Writer = "storm", personas: Personas = 3,
                     source: Source = "corpus") -> dict[str, Any]:
        """Start a cited report on `topic` in the background and return its run id at once; `source`:
        corpus, web or hybrid, as for `search`."""
        return {"run_id": session.report_start(topic, writer, personas, source)}

    @mcp.tool()
    def report_status(run_id: Name, since: Since = 0) -> dict[str, Any]:
        """A report's state (running, done, failed) and its progress events from index `since` on
        (pass the last reply's `next` to get only new ones)."""
        return session.report_status(run_id, since)

    @mcp.tool()
    def report_result(run_id: Name) -> dict[str, Any]:
        """A finished report: report.md and its References (each [n]: title, source, snippets, lines)."""
        return session.report_result(run_id)

    @mcp.tool()
    async def interview(run_id: Name, question: Question, persona: Name | None = None) -> list[dict[str, Any]]:
        """Ask the simulated researchers of a finished report: one persona by name, "all", or (none
        given) the first; each answers in character, citing the passages it gathered."""
        return await session.interview(run_id, question, persona)

    @mcp.resource("raystorm://report/{run_id}", mime_type="text/markdown")
    def report_resource(run_id: str) -> str:
        """A finished report's report.md."""
        return session.report_result(run_id)["report"]

    @mcp.resource("raystorm://wiki/{page}", mime_type="text/markdown")
    def wiki_resource(page: str) -> str:
        """A compiled wiki page."""
        return session.wiki_page(page)["markdown"]

    from cluster.roundtable_faces import add_roundtable_tools  # roundtable_start, _turn, _mindmap, _report

    add_roundtable_tools(mcp, session)
    return mcp
