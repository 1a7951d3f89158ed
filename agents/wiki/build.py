"""`wiki build`: compile a collection into pages, one per document family (or document), claims in sidecars.

Passages come from the store in document order; the evidence graph says which
are superseded, and those reach the writer framed as history. The page step
(`WritePage`) runs on whatever model is given: the extractive one offline, a chat
model with `--llm`; either way each statement is pinned to the lines it cites.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from agents.lm.steps import LanguageModel
from agents.storm.citations import cited_numbers
from agents.storm.steps_research import NumberedSource
from agents.wiki.claims import ClaimSet, sidecar_path
from agents.wiki.pages import render_page, slug
from agents.wiki.pinning import LineCache, make_claim, pin_statement
from agents.wiki.steps import PageInput, WritePage
from retrieval.documents import Passage
from retrieval.errors import RaystormError
from retrieval.graph.current import as_history
from retrieval.graph.model import ClaimPointer, ClaimRecord, DocumentRecord
from retrieval.graph.store import GraphStore
from retrieval.graph.view import EvidenceGraph
from retrieval.store import PassageStore


class BuildSummary(BaseModel):
    pages: int
    claims: int
    dropped: int  # statements whose cited lines could not be pinned
    seconds: float


def page_groups(graph: EvidenceGraph) -> list[tuple[str, list[DocumentRecord]]]:
    """(subject, documents): a family's documents together, every other document alone."""
    families: dict[str, list[DocumentRecord]] = {}
    groups: list[tuple[str, list[DocumentRecord]]] = []
    for r in graph.records:
        if r.family:
            families.setdefault(r.family, []).append(r)
        else:
            groups.append((r.title, [r]))
    groups += [(name, sorted(docs, key=lambda r: (r.effective_date is None, r.effective_date or 0)))
               for name, docs in families.items()]
    return sorted(groups, key=lambda g: g[0].lower())


async def write_page(subject: str, passages: list[Passage], graph: EvidenceGraph, models: LanguageModel,
                     collection: str, written_by: str, cache: LineCache) -> tuple[ClaimSet, int]:
    sources = []
    for n, p in enumerate(passages, start=1):
        status = graph.passage_status(p.passage_id, p.doc_id, p.heading_path)
        sources.append(NumberedSource(n=n, title=p.title, section=" > ".join(p.heading_path),
                                      text=as_history(p, status).text))
    out = await models.run(WritePage, PageInput(subject=subject, sources=sources))
    claims = ClaimSet(kind="wiki", title=subject, page=f"{slug(subject)}.md", collection=collection,
                      written_by=written_by)
    dropped = 0
    for statement in out.statements:
        cited = [passages[n - 1] for n in cited_numbers(statement) if 1 <= n <= len(passages)]
        evidence = [pin_statement(statement, p.source, p.path, p.line_start, p.line_end, p.heading_path, cache,
                                  p.sha256, p.part) for p in cited]
        claim = make_claim(f"c{len(claims.claims) + 1}", statement,
                           " > ".join(cited[0].heading_path) if cited else "", evidence)
        if claim:
            claims.claims.append(claim)
        else:
            dropped += 1
    return claims.record_roots(), dropped


def claim_records(claims: ClaimSet, out: Path) -> list[ClaimRecord]:
    """A page's claims as the evidence graph keeps them (nodes with `cites` edges to passages)."""
    return [ClaimRecord(id=f"claim:{claims.page}#{c.id}", text=c.text, wiki=str(out.resolve()),
                        evidence=[ClaimPointer(path=e.path, line_start=e.line_start, line_end=e.line_end,
                                               part=e.part)
                                  for e in c.evidence])
            for c in claims.claims]


def refresh_graph_claims(store: PassageStore, collection: str, out: Path, pages: list[ClaimSet]) -> None:
    """Replace the wiki's claim nodes in the collection's graph with `pages` (after an update)."""
    GraphStore(store).put_claims(collection, str(out.resolve()), {c.page: claim_records(c, out) for c in pages})


async def build_wiki(store: PassageStore, collection: str, out: Path, models: LanguageModel,
                     written_by: str) -> BuildSummary:
    started = time.perf_counter()
    store.require(collection)
    graphs = GraphStore(store)
    if not graphs.exists(collection):
        raise RaystormError(f"collection '{collection}' has no evidence graph: run `raystorm ingest PATH "
                            f"--collection {collection}` again to build it, then `raystorm wiki build`")
    graph = graphs.load(collection)
    out.mkdir(parents=True, exist_ok=True)
    cache, pages, total, dropped, index = LineCache(), 0, 0, 0, []
    pointers: dict[str, list[ClaimRecord]] = {}  # the claims as graph nodes, by page
    for subject, docs in page_groups(graph):
        ids = [p.passage_id for r in docs for p in sorted(r.passages, key=lambda p: p.line_start)]
        passages = store.get(collection, ids)
        if not passages:
            continue
        claims, lost = await write_page(subject, passages, graph, models, collection, written_by, cache)
        if not claims.claims:
            continue
        page = out / claims.page
        page.write_text(render_page(claims), encoding="utf-8")
        sidecar_path(page).write_text(claims.model_dump_json(indent=1) + "\n", encoding="utf-8")
        index.append(f"- [{subject}]({claims.page}) — {len(claims.claims)} claims")
        pointers[claims.page] = claim_records(claims, out)
        pages, total, dropped = pages + 1, total + len(claims.claims), dropped + lost
    graphs.put_claims(collection, str(out.resolve()), pointers)
    (out / "index.md").write_text(f"# Wiki of collection '{collection}'\n\n" + "\n".join(index) + "\n",
                                  encoding="utf-8")
    return BuildSummary(pages=pages, claims=total, dropped=dropped, seconds=time.perf_counter() - started)
