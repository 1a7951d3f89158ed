"""The evidence graph as the pages show it: documents as nodes with their state, including "partly
superseded" (some sections replaced, others in force), and the typed edges between documents."""

from __future__ import annotations

from pathlib import Path

DRAWN_EDGES = ("supersedes", "amends", "refers_to", "attaches_to")  # `cites` joins claims, not documents


def document_state(graph, record) -> str:
    """current, superseded or amended for the whole document; "partly superseded" / "partly amended" when
    some of its sections are and the rest is not (a bulletin that replaces one clause of a form)."""
    whole = graph.status(record.node_id).state
    if whole != "current":
        return whole
    leaves = [s for s in record.sections
              if not any(o.heading_path[: len(s.heading_path)] == s.heading_path and o is not s for o in record.sections)]
    states = {graph.status(record.node_id, s.heading_path).state for s in leaves}
    for state in ("superseded", "amended"):
        if state in states:
            return f"partly {state}"
    return "current"


def document_states(graph) -> dict[str, str]:
    return {r.node_id: document_state(graph, r) for r in graph.records}


def graph_drawing(graph) -> dict:
    """{"nodes": [{id, title, path, state}], "edges": [{source, target, type, where, quote}]}: every document
    and every edge between two documents (a section's edge is drawn from or to its document)."""
    states = document_states(graph)
    nodes = [{"id": r.node_id, "title": r.title, "path": Path(r.path).name, "state": states[r.node_id]}
             for r in graph.records]
    known = {n["id"] for n in nodes}
    edges, seen = [], set()
    for e in graph.edges:
        if e.type not in DRAWN_EDGES:
            continue
        source, target = (graph.nodes[x].doc if x in graph.nodes else None for x in (e.source, e.target))
        if source not in known or target not in known or source == target or (source, target, e.type) in seen:
            continue
        seen.add((source, target, e.type))
        edges.append({"source": source, "target": target, "type": e.type, "quote": e.quote[:200],
                      "where": f"{Path(e.path).name}:{e.line_start}-{e.line_end} ({e.via})"})
    return {"nodes": nodes, "edges": edges}
