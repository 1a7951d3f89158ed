"""The report of a roundtable, from its mind map: one section per top-level concept in the tree's order, a
subsection per concept below it, each written from the snippets the discussion put there, the rule in force
put before any superseded one it gives (`agents.storm.current_facts`); then STORM's References and claim
sidecar (report.md, report.claims.json), so `raystorm wiki check` reads it as any report."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents.roundtable.mindmap import node_views
from agents.roundtable.records import MindMapNode, RoundtableSession
from agents.roundtable.stages import ConceptArgs, CurrentArgs, current_first, write_concept
from agents.storm.article import CitationIndex
from agents.storm.artifacts import _write, report_markdown
from agents.storm.records import Article, ArticleSection

REPORT = "report.md"
CLAIMS = "report.claims.json"


async def mindmap_article(session: RoundtableSession, runtime) -> Article:
    """The article the tree gives: every concept's heading, in the tree's order, with its paragraph."""
    root = session.mindmap
    paths = {v.id: v.path for v in node_views(root)}
    nodes = [(n, d) for n, d in root.walk() if d > 0]
    texts = await asyncio.gather(*(
        runtime.stage("roundtable.report", write_concept, ConceptArgs(topic=session.topic, path=paths[n.id],
                                                                      snippets=n.snippets))
        if n.snippets else _nothing() for n, _ in nodes))
    index = CitationIndex()
    sections: list[ArticleSection] = []
    for (node, depth), text in zip(nodes, texts):
        body = index.renumber(text, node.snippets) if text else ""
        if depth == 1:
            sections.append(ArticleSection(heading=node.concept, text=body))
        else:
            heading = f"{'#' * min(depth + 1, 6)} {node.concept}"
            joined = "\n\n".join(x for x in (sections[-1].text, heading, body) if x)
            sections[-1] = sections[-1].model_copy(update={"text": joined})
    article = Article(topic=session.topic, sections=sections, citations=index.all())
    # a concept that gives a superseded rule gives the rule that replaced it first (as a STORM report does)
    pool = [s for n, _ in nodes for s in n.snippets] + list(session.unused)
    return await runtime.stage("roundtable.report", current_first,
                               CurrentArgs(topic=session.topic, article=article, pool=pool))


async def _nothing() -> str:
    return ""


async def write_report(session: RoundtableSession, runtime, folder: Path) -> Path:
    """report.md and report.claims.json in `folder` (the session's)."""
    from agents.wiki.report_claims import report_claims

    article = await mindmap_article(session, runtime)
    path = folder / REPORT
    _write(path, report_markdown(article))
    _write(folder / CLAIMS, report_claims(article).model_dump_json(indent=1) + "\n")
    return path


def tree_headings(root: MindMapNode) -> list[tuple[int, str]]:
    """(level, heading) of every concept below the root, as the report writes them (## top level, ### below)."""
    return [(min(d + 1, 6), n.concept) for n, d in root.walk() if d > 0]
