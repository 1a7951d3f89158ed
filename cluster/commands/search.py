"""`raystorm search "QUERY" --collection NAME [-k 5] [--mode hybrid] [--json]`."""

from __future__ import annotations

import argparse
import json
import textwrap

from cluster.commands.common import add_store_arguments, collection_name, count, place_of, store_settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="search a collection",
                       description="Ranked passages for a query, with title, source, line range and score.")
    p.add_argument("query", help="the search text")
    p.add_argument("--collection", "-c", required=True, type=collection_name)
    p.add_argument("-k", type=count(1, 1000), default=5, help="number of passages (default 5)")
    p.add_argument("--mode", choices=["dense", "sparse", "hybrid"], default=None,
                   help="dense vectors, BM25, or both fused by RRF in Qdrant (default: hybrid, chosen by "
                        "measurement; see README)")
    p.add_argument("--mmr", action="store_true", help="diversify the results (maximal marginal relevance)")
    p.add_argument("--doc", action="append", default=[], metavar="DOC_ID", help="only this document (repeatable)")
    p.add_argument("--source", action="append", default=[], metavar="PATH_OR_URL",
                   help="only this source (repeatable)")
    p.add_argument("--tag", action="append", default=[], help="only documents with this tag (repeatable)")
    p.add_argument("--exclude-url", action="append", default=[], metavar="URL",
                   help="leave out this URL (repeatable; e.g. the ground-truth page in an evaluation)")
    p.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                   help="re-order a deeper candidate list with the second-stage reranker (default: "
                        "SearchSettings.rerank, chosen by measurement)")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from retrieval.errors import UsageError
    from retrieval.search import Corpus
    from retrieval.store import SearchFilter

    if not args.query.strip():
        raise UsageError("the query is empty")
    sources = [str(Path(s).resolve()) if Path(s).exists() else s for s in args.source]
    flt = SearchFilter(doc_ids=args.doc, sources=sources, tags=args.tag, exclude_urls=args.exclude_url)
    from retrieval.search import SearchSettings

    search = SearchSettings() if args.rerank is None else SearchSettings(rerank=args.rerank)
    corpus = Corpus(store_settings(args), args.collection, search=search)
    try:
        hits = corpus.search(args.query, k=args.k, mode=args.mode, flt=flt, mmr=args.mmr)
    finally:
        corpus.close()
    if args.json:
        print(json.dumps([hit_json(h) for h in hits], ensure_ascii=False, indent=1))
        return 0
    if not hits:
        print("no matching passages")
    for h in hits:
        p = h.passage
        where = " > ".join(p.heading_path)
        print(f"{h.rank}. {p.title}{' > ' + where if where else ''}  (score {h.score:.3f})")
        chars = f", chars {p.char_start}-{p.char_end}" if p.char_start is not None else ""
        print(f"   {place_of(p.source, p.path, p.line_start, p.line_end, p.part)}{chars}")
        if h.status and h.status.state != "current":  # from the evidence graph
            print(f"   [{h.status.line()}]")
        print(textwrap.indent(textwrap.shorten(p.text.replace("\n", " "), 300), "   "))
    return 0


def hit_json(h) -> dict:
    """One search hit as `search --json` (and the MCP and HTTP faces) give it."""
    p = h.passage
    return {"rank": h.rank, "passage_id": p.passage_id, "title": p.title, "source": p.source, "url": p.url,
            "path": p.path, "record": p.record, "line_start": p.line_start, "line_end": p.line_end,
            **_part_fields(p.part), "char_start": p.char_start, "char_end": p.char_end, "score": h.score,
            "text": p.text, "status": h.status.model_dump(mode="json", exclude={"via_edges"}) if h.status else None}


def _part_fields(part) -> dict:
    """A PDF's "page", a deck's "slide" (numbers) or a workbook's "sheet" (its name), when the
    passage's lines count within one."""
    if part is None:
        return {}
    return {"sheet": part.name} if part.kind == "sheet" else {part.kind: part.number}
