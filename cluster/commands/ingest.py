"""`raystorm ingest PATH... --collection NAME [--prune]`."""

from __future__ import annotations

import argparse

from cluster.commands.common import add_store_arguments, collection_name, count, info, relative_source, store_settings
from retrieval.errors import UsageError


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
    p.add_argument("--allow-skips", action="store_true",
                   help="exit 0 even when files asked for could not be read (missing, or an I/O error); "
                        "without it such an ingest writes what it read and exits 3, naming them")
    g = p.add_argument_group(
        "cluster", "With --address (or $RAY_ADDRESS) ingest runs as a Ray pipeline on that cluster: this process "
                   "reads every file (the paths are this host's), the cluster's tasks parse and split the bytes, a "
                   "pool of embedding actors embeds, and the embedded store's one owner (this process) writes, or "
                   "every actor writes to --qdrant-url")
    g.add_argument("--address", metavar="ADDR",
                   help="a Ray cluster: auto, HOST:6379, or ray://HOST:10001 (default: $RAY_ADDRESS; none: ingest in "
                        "this process, the fastest on one machine)")
    g.add_argument("--distributed", action="store_true", help="run the pipeline on a local Ray even without an address")
    g.add_argument("--embed-workers", type=count(1, 4096), default=None, metavar="N",
                   help="embedding actors of the pipeline, exactly N, one CPU each (at most the cluster's CPUs; "
                        "default: the cluster's CPUs, at most one per 64 passages)")
    add_store_arguments(p)
    p.set_defaults(func=run)


PAGE_BAR_FROM = 20  # pages: a shorter file reads in a blink


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from cluster.distributed_args import wants_distributed
    from retrieval.ingest import Ingestor
    from retrieval.loaders import HIDDEN
    from retrieval.splitter import DEFAULT_MAX_WORDS

    distributed = wants_distributed(args)
    if args.embed_workers and not distributed:
        raise UsageError("--embed-workers needs --address or --distributed (the pipeline's embedding actors)")
    settings = store_settings(args)
    ingestor = Ingestor(settings, max_words=args.max_words or DEFAULT_MAX_WORDS)
    progress = _CountBar("passage", "embedding", args.quiet)
    file_read = _CountBar("file", "reading", args.quiet)  # the pipeline's files read, on every node

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
        if distributed:
            from cluster.ingest_pipeline import ingest_on_ray
            from cluster.runtime import connect

            connect(args.address)
            summary, stats = ingest_on_ray(ingestor, args.paths, args.collection, prune=args.prune,
                                           progress=progress, on_skip=skipped, on_file=file_read,
                                           workers=args.embed_workers)
            if stats.embedded:
                split = ", ".join(f"{node}: {n}" for node, n in sorted(stats.by_node.items()))
                info(f"embedded by {len(stats.by_worker)} actor(s) on {len(stats.by_node)} node(s) ({split}), "
                     f"{stats.per_worker_rate():.0f} passages/s per actor")
        else:
            summary = ingestor.ingest_paths(args.paths, args.collection, prune=args.prune,
                                            progress=progress, on_skip=skipped, on_page=page_read)
    finally:
        file_read.close()
        progress.close()
        if pages is not None:
            pages.close()
        ingestor.store.close()
    for line in summary.warnings(relative_source):
        info(line)
    pruned = f", {summary.pruned_files} deleted files pruned" if args.prune else ""
    print(f"ingested into '{args.collection}': {summary.line()}{pruned}")
    unreadable = [s for s in summary.skipped if s.unreadable]
    if unreadable and not args.allow_skips:
        shown = ", ".join(relative_source(s.path) for s in unreadable[:10])
        more = f" and {len(unreadable) - 10} more" if len(unreadable) > 10 else ""
        info(f"error: {len(unreadable)} file(s) asked for could not be read on this host: {shown}{more}; "
             "the collection holds the rest (rerun with them readable, or pass --allow-skips to accept this)")
        return SKIPPED_EXIT
    return 0


SKIPPED_EXIT = 3  # distinct from 1 (an error before anything was written) and 2 (a usage error)


class _CountBar:
    """`bar(done, total)`: a progress bar made at the first count of something to do."""

    def __init__(self, unit: str, desc: str, quiet: bool):
        self.unit, self.desc, self.quiet, self.bar = unit, desc, quiet, None

    def __call__(self, done: int, total: int) -> None:
        if self.quiet or total == 0:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=self.unit, desc=self.desc, leave=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
