"""`raystorm graph locate|expand|stats`: navigate a collection's evidence graph (built at ingest)."""

from __future__ import annotations

import argparse
import json

from cluster.commands.common import add_store_arguments, place_of, store_settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("graph", help="navigate the evidence graph of a collection",
                       description="Which documents supersede, amend, refer to and attach to which, found at "
                                   "ingest with no model call. `locate` finds starting nodes, `expand` shows a "
                                   "node's typed edges, `stats` counts them.")
    actions = p.add_subparsers(dest="graph_command", metavar="ACTION")
    loc = actions.add_parser("locate", help="the best starting nodes for some terms")
    loc.add_argument("terms", help="words of a title, heading, form or bulletin number")
    loc.add_argument("-k", type=int, default=10, help="how many nodes (default 10)")
    exp = actions.add_parser("expand", help="a node and its typed edges")
    exp.add_argument("node", help="a node id: a document URL (or path), DOC#Heading/Path, or a passage id")
    exp.add_argument("--edges", default=None, metavar="TYPES",
                     help="comma-separated edge types, e.g. superseded_by,amends (default: all)")
    exp.add_argument("--hops", type=int, default=1,
                     help="follow one edge type this many steps while the path is single; stops at a branch")
    st = actions.add_parser("stats", help="counts by node and edge type, and documents no edge reaches")
    for action in (loc, exp, st):
        action.add_argument("--collection", "-c", required=True)
        action.add_argument("--json", action="store_true", help="print JSON")
        add_store_arguments(action)
        action.set_defaults(func=run)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def load_graph(args: argparse.Namespace):
    from retrieval.errors import RaystormError
    from retrieval.graph.store import GraphStore
    from retrieval.store import PassageStore

    store = PassageStore(store_settings(args))
    try:
        store.require(args.collection)
        graphs = GraphStore(store)
        if not graphs.exists(args.collection):
            raise RaystormError(f"collection '{args.collection}' has no evidence graph yet: run "
                                f"`raystorm ingest PATH --collection {args.collection}` again to build it")
        return graphs.load(args.collection)
    finally:
        store.close()


def citation_statuses(args: argparse.Namespace, citations) -> list[dict | None]:
    """The graph status of each citation's passage (None each when the collection has no graph)."""
    from retrieval.graph.store import GraphStore
    from retrieval.store import PassageStore

    store = PassageStore(store_settings(args))
    try:
        graphs = GraphStore(store)
        graph = graphs.load(args.collection) if graphs.exists(args.collection) else None
    finally:
        store.close()
    return statuses_in(graph, citations)


def statuses_in(graph, citations) -> list[dict | None]:
    """The status of each citation's passage in `graph` (None each without a graph)."""
    if graph is None:
        return [None for _ in citations]
    out = []
    for c in citations:
        status = graph.status_at(c.path or c.source, c.line_start)
        out.append({"state": status.state, "by": status.by, "effective": status.effective,
                    "summary": status.line()})
    return out


def run(args: argparse.Namespace) -> int:
    from retrieval.errors import UsageError
    from retrieval.graph.navigate import expand, locate, stats

    graph = load_graph(args)
    if args.graph_command == "locate":
        if args.k < 1:
            raise UsageError(f"-k must be at least 1, got {args.k}")
        found = locate(graph, args.terms, args.k)
        if args.json:
            print(json.dumps([f.model_dump(mode="json") for f in found], indent=1, ensure_ascii=False))
        for f in [] if args.json else found:
            lines = f" lines {f.node.line_start}-{f.node.line_end}" if f.node.line_start else ""
            print(f"{f.score:.3f}  {f.node.kind:8}  {f.node.id}{lines}\n          {f.node.title}")
        if not found and not args.json:
            print("no node matches those terms")
        return 0
    if args.graph_command == "expand":
        names = [n.strip() for n in args.edges.split(",") if n.strip()] if args.edges else None
        result = expand(graph, args.node, names, args.hops)
        if args.json:
            print(result.model_dump_json(indent=1))
            return 0
        print(f"{result.node.kind} {result.node.id}\n  {result.node.title}")
        if args.node in graph.nodes and result.node.kind in ("document", "section", "passage"):
            record = graph.document(result.node.doc)
            if record and result.node.kind == "passage":
                print(f"  status: {graph.passage_status(args.node).line()}")
            elif record:
                status = graph.status(record.node_id, result.node.heading_path)
                parts = [(sec, graph.status(record.node_id, sec.heading_path)) for sec in record.sections
                         if result.node.kind == "document" and status.state == "current"]
                parts = [(sec, st) for sec, st in parts if st.state != "current"]
                print(f"  status: {status.line()}" + (" except these sections:" if parts else ""))
                for sec, st in parts:
                    print(f"    '{' > '.join(sec.heading_path)}': {st.line()}")
        for n in result.edges:
            e = n.edge
            when = f", effective {e.effective}" if e.effective and n.name in ("supersedes", "amends",
                                                                                "superseded_by", "amended_by") else ""
            at = f"  (at {graph.nodes[n.at].title})" if n.at else ""
            where = place_of(e.path, e.path, e.line_start, e.line_end, e.part)
            print(f"  {n.name:14} {n.other}{at}\n  {'':14} ({e.via}, {where}{when}) {e.quote[:100]}")
        if not result.edges:
            print("  (no edges" + (f" of type {args.edges})" if args.edges else ")"))
        if args.hops > 1:
            print("  path: " + " -> ".join(result.path) + f"  [stopped: {result.stopped}"
                  + (f"; branches: {', '.join(result.branches)}" if result.branches else "") + "]")
        return 0
    summary = stats(graph)
    if args.json:
        print(summary.model_dump_json(indent=1))
        return 0
    print("nodes: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.nodes.items())))
    print("edges: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.edges.items())))
    print("found via: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.edges_by_via.items())))
    print(f"documents no edge reaches ({len(summary.unreached)}): " + (", ".join(summary.unreached) or "none"))
    return 0
