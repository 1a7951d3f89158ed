"""Moving around the evidence graph: `locate` good starting nodes, `expand` a node along typed edges, `stats`.

The same functions back `raystorm graph ...` and the agents' tools; all results are pydantic models.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import BaseModel, Field

from retrieval.errors import UsageError
from retrieval.graph.model import ALL_EDGE_NAMES, Edge, Node
from retrieval.graph.view import EvidenceGraph

_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_STOP = {"the", "a", "an", "of", "for", "and", "or", "to", "in", "on", "is", "what", "which", "how", "by", "with"}


class LocatedNode(BaseModel):
    node: Node
    score: float
    matched: list[str] = Field(default_factory=list)


class NeighbourEdge(BaseModel):
    name: str  # as seen from the expanded node: supersedes, superseded_by, ...
    other: str
    other_title: str
    edge: Edge
    at: str | None = None  # the section of the expanded document the edge is attached to


class Expansion(BaseModel):
    node: Node
    edges: list[NeighbourEdge] = Field(default_factory=list)
    path: list[str] = Field(default_factory=list)  # nodes followed with --hops
    stopped: str | None = None  # why following stopped: "branch", "end", "hops"
    branches: list[str] = Field(default_factory=list)


class GraphStats(BaseModel):
    nodes: dict[str, int]
    edges: dict[str, int]
    edges_by_via: dict[str, int]
    unreached: list[str]  # documents no relation edge (supersedes, amends, refers_to, attaches_to) reaches


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def locate(graph: EvidenceGraph, terms: str, k: int = 10) -> list[LocatedNode]:
    """Nodes whose title, heading or identifier matches the terms best (documents, sections, claims)."""
    wanted = _terms(terms)
    if not wanted:
        raise UsageError("locate needs search terms with at least one word")
    keys = {r.node_id: " ".join(r.keys) for r in graph.records}
    scored = []
    for node in graph.nodes.values():
        if node.kind in ("passage", "external"):
            continue
        words = set(_terms(f"{node.title} {keys.get(node.id, '')}"))
        matched = [w for w in wanted if w in words]
        if matched:
            # share of the query matched, a little more for a short (specific) title
            score = len(set(matched)) / len(set(wanted)) + 0.1 / (1 + len(words)) + (0.05 if node.kind == "document" else 0)
            scored.append(LocatedNode(node=node, score=round(score, 4), matched=sorted(set(matched))))
    scored.sort(key=lambda n: (-n.score, n.node.id))
    return scored[:k]


def _neighbours(graph: EvidenceGraph, node: str, names: list[str] | None) -> list[NeighbourEdge]:
    """Edges at `node`; a document's include those at its sections (a partial supersession names sections)."""
    places = [node]
    if graph.nodes[node].kind == "document":
        places += [n.id for n in graph.nodes.values() if n.kind == "section" and n.doc == node]
    out = []
    for name, edge in [pair for place in places for pair in graph.edges_of(place, names)]:
        if name == edge.type and edge.target in places or name != edge.type and edge.source in places:
            continue  # within the document itself
        other = edge.target if name == edge.type else edge.source
        mine = edge.source if name == edge.type else edge.target
        out.append(NeighbourEdge(name=name, other=other, at=mine if mine != node else None,
                                 other_title=graph.nodes[other].title if other in graph.nodes else other, edge=edge))
    return out


def expand(graph: EvidenceGraph, node: str, names: list[str] | None = None, hops: int = 1) -> Expansion:
    """`node` and its typed edges; with `hops` > 1 and one edge name, follow it while the path is single."""
    if node not in graph.nodes:
        raise UsageError(f"no node '{node}' in the graph: find one with `raystorm graph locate TERMS`")
    bad = [n for n in names or [] if n not in ALL_EDGE_NAMES]
    if bad:
        raise UsageError(f"unknown edge type {', '.join(bad)}: use {', '.join(ALL_EDGE_NAMES)}")
    if hops < 1:
        raise UsageError(f"--hops must be at least 1, got {hops}")
    if hops > 1 and (not names or len(names) != 1):
        raise UsageError("--hops N follows one edge type: pass exactly one with --edges")
    result = Expansion(node=graph.nodes[node], edges=_neighbours(graph, node, names), path=[node])
    if hops == 1:
        return result
    current = node
    for _ in range(hops):
        step = list(dict.fromkeys(n.other for n in _neighbours(graph, current, names)))
        if len(step) != 1:
            result.stopped = "branch" if step else "end"
            result.branches = step
            return result
        if step[0] in result.path:  # a cycle: stop rather than loop
            result.stopped = "cycle"
            return result
        current = step[0]
        result.path.append(current)
    result.stopped = "hops"
    return result


def stats(graph: EvidenceGraph) -> GraphStats:
    relations = [e for e in graph.edges if e.type != "cites"]  # a wiki citing a document relates nothing to it
    reached = {e.source.split("#")[0] for e in relations} | {graph.nodes[e.target].doc or e.target for e in relations}
    return GraphStats(
        nodes=dict(Counter(n.kind for n in graph.nodes.values())),
        edges=dict(Counter(e.type for e in graph.edges)),
        edges_by_via=dict(Counter(e.via for e in graph.edges)),
        unreached=sorted(r.node_id for r in graph.records if r.node_id not in reached))
