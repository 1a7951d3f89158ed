"""`raystorm ingest PATH... --collection NAME [--prune]`."""

from __future__ import annotations

import argparse

from cluster.commands.common import add_store_arguments, collection_name, count, info, relative_source, store_settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest", help="load files into a searchable collection",
        description="Load .md .txt .html .json .jsonl .csv .pdf .docx .pptx .xlsx files (and directory trees) into "
                    "a collection: passages with line ranges (and page, slide or sheet), dense + BM25 vectors, in "
                    "Qdrant. Re-ingesting is cheap: "
                    "unchanged passages are not embedded again, a changed file replaces only its own passages.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to ingest")
    p.add_argument("--collection", "-c", required=True, type=collection_name,
                   help="collection name (created if new): letters, digits, '-', '_', '.'")
    p.add_argument("--prune", action="store_true",
                   help="also remove passages of files under PATH that no longer exist (or became a symbolic "
                        "link leading out of PATH: links out of the given paths are never followed)")
    p.add_argument("--max-words", type=count(10, 10_000), default=None,
                   help="passage size limit in words (default 180)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_store_arguments(p)
    p.set_defaults(func=run)


PAGE_BAR_FROM = 20  # pages: a shorter file reads in a blink


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from retrieval.ingest import Ingestor
    from retrieval.loaders import HIDDEN
    from retrieval.splitter import DEFAULT_MAX_WORDS

    settings = store_settings(args)
    ingestor = Ingestor(settings, max_words=args.max_words or DEFAULT_MAX_WORDS)
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if args.quiet or total == 0:
            return
        if bar is None:
            bar = tqdm(total=total, unit="passage", desc="embedding", leave=False)
        bar.update(done - bar.n)

    pages = None  # one bar a file, page by page, for a long PDF

    def page_read(path, done: int, total: int | None) -> None:
        nonlocal pages
        if args.quiet or not total or total < PAGE_BAR_FROM:
            return
        if pages is None or done == 1:
            if pages is not None:
                pages.close()
            pages = tqdm(total=total, unit="page", desc=f"reading {path.name}", leave=False)
        pages.update(done - pages.n)
        if done == total:
            pages.close()

    def skipped(item) -> None:
        if item.reason != HIDDEN:  # counted in the summary, not listed
            info(f"skipped {relative_source(item.path)}: {item.reason}")

    try:
        summary = ingestor.ingest_paths(args.paths, args.collection, prune=args.prune,
                                        progress=progress, on_skip=skipped, on_page=page_read)
    finally:
        for shown in (pages, bar):
            if shown is not None:
                shown.close()
        ingestor.store.close()
    for line in summary.warnings(relative_source):
        info(line)
    pruned = f", {summary.pruned_files} deleted files pruned" if args.prune else ""
    print(f"ingested into '{args.collection}': {summary.line()}{pruned}")
    return 0
