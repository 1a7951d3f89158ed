"""The mind map's two operations: insert a cited snippet under the concept it belongs to (a new concept when
none fits), and split a concept past `split_above` snippets into sub-concepts. The organiser's choices are the
mind-map steps, run through the runtime; the tree itself changes only here."""

from __future__ import annotations

from agents.roundtable.records import MindMapNode, RoundtableSession
from agents.roundtable.stages import PlaceArgs, SplitArgs, place_snippet, split_concept
from agents.roundtable.steps_mindmap import NodeView
from agents.roundtable.steps_user import ConceptView
from retrieval.snippets import Snippet

VIEW_SNIPPETS = 4  # snippets of each concept the organiser reads


def node_views(root: MindMapNode) -> list[NodeView]:
    """Every concept below the root (the topic), with its path from the top level."""
    views: list[NodeView] = []
    path: list[str] = []
    for node, depth in root.walk():
        if depth == 0:
            continue
        path[depth - 1:] = [node.concept]
        views.append(NodeView(id=node.id, path=list(path), snippets=[s.text for s in node.snippets[:VIEW_SNIPPETS]],
                              has_children=bool(node.children)))
    return views


def concept_views(root: MindMapNode) -> list[ConceptView]:
    """Every concept below the root with how many snippets it holds, its sub-concepts' included."""
    held = {v.id: len(root.find(v.id).all_snippets()) for v in node_views(root)}
    return [ConceptView(path=v.path, held=held[v.id]) for v in node_views(root)]


def path_of(root: MindMapNode, node_id: str) -> list[str]:
    return next((v.path for v in node_views(root) if v.id == node_id), [])


def holder_of(root: MindMapNode, point_id: str) -> MindMapNode | None:
    return next((n for n, _ in root.walk() if any(s.point_id == point_id for s in n.snippets)), None)


async def insert(session: RoundtableSession, snippet: Snippet, runtime) -> MindMapNode:
    """`snippet` under its concept (the tree is changed in place); a snippet already in the map stays put."""
    root = session.mindmap
    held = holder_of(root, snippet.point_id)
    if held is not None:
        return held
    placed = await runtime.stage("roundtable.mindmap", place_snippet,
                                 PlaceArgs(topic=session.topic, nodes=node_views(root), snippet=snippet))
    node = root.find(placed.node_id) if placed.node_id and placed.node_id != root.id else None
    if node is None:
        parent = root.find(placed.parent_id) if placed.parent_id else None
        node = _new_node(session, placed.new_concept.strip() or snippet.title)
        (parent or root).children.append(node)
    node.snippets.append(snippet)
    if len(node.snippets) > session.options.split_above:
        await split(session, node, runtime)
    return node


async def split(session: RoundtableSession, node: MindMapNode, runtime) -> None:
    """The node's snippets into sub-concepts; a snippet the organiser left out stays on the node."""
    out = await runtime.stage("roundtable.mindmap", split_concept, SplitArgs(
        topic=session.topic, path=path_of(session.mindmap, node.id), snippets=node.snippets))
    moved: set[int] = set()
    groups: list[tuple[str, list[int]]] = []
    for sub in out.subconcepts:
        mine = [n for n in dict.fromkeys(sub.snippets) if 1 <= n <= len(node.snippets) and n not in moved]
        if mine and sub.name.strip():
            moved.update(mine)
            groups.append((sub.name.strip(), mine))
    if len(groups) < 2:
        return  # nothing to split into: the concept stays whole
    for name, mine in groups:
        child = next((c for c in node.children if c.concept.lower() == name.lower()), None)
        if child is None:
            child = _new_node(session, name)
            node.children.append(child)
        child.snippets += [node.snippets[n - 1] for n in mine]
    node.snippets = [s for i, s in enumerate(node.snippets, start=1) if i not in moved]


def _new_node(session: RoundtableSession, concept: str) -> MindMapNode:
    node = MindMapNode(id=f"n{session.next_node}", concept=concept[:80])
    session.next_node += 1
    return node


def mindmap_text(root: MindMapNode) -> str:
    """The tree as indented lines: each concept with its snippets' sources and lines."""
    lines = []
    for node, depth in root.walk():
        lines.append(f"{'  ' * depth}- {node.concept}" + (f" ({len(node.snippets)})" if node.snippets else ""))
        for s in node.snippets:
            lines.append(f"{'  ' * (depth + 1)}  · {s.title}, lines {s.line_start}-{s.line_end}")
    return "\n".join(lines)
