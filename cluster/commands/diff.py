"""`raystorm diff RUN_A RUN_B`: what changed from one run of a report to another, as changes.md.

Also the step `raystorm report` takes around a rerun of a topic: the finished run is kept as previous/
before the topic is written again, and changes.md compares the two afterwards.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diff", help="what changed between two runs of a report (changes.md, no model call)",
                       description="Compare two report run folders claim by claim: per section, the claims "
                                   "new, gone, or whose cited lines changed, and the cited sources that became "
                                   "superseded in between (as each run's evidence graph recorded), each with "
                                   "both citations. Reads files only; no model call.")
    p.add_argument("earlier", metavar="RUN_A", help="the earlier run's folder (OUT/<topic_slug>)")
    p.add_argument("later", metavar="RUN_B", help="the later run's folder")
    p.add_argument("--out", "-o", metavar="FILE", help="where changes.md goes (default: RUN_B/changes.md)")
    p.add_argument("--json", action="store_true", help="print the changes as JSON instead of Markdown")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agents.wiki.changes import changes_markdown, diff_runs, write_changes

    later = Path(args.later).expanduser()
    changes = diff_runs(Path(args.earlier).expanduser(), later)
    out = write_changes(later, changes, Path(args.out).expanduser() if args.out else None)
    print(changes.model_dump_json(indent=1) if args.json else changes_markdown(changes), end="")
    if not args.json:
        print(f"(written to {out})")
    return 0


def before_rerun(run_dir: Path) -> bool:
    """Keep the finished run in `run_dir` as previous/ before its topic is written again."""
    from agents.wiki.changes import keep_previous

    return keep_previous(run_dir)


def collection_graph(store, collection: str):
    """The collection's evidence graph from the open `store` (None when it has none); a report does not
    change it, so it is read once, before the topics run."""
    from retrieval.graph.store import GraphStore

    graphs = GraphStore(store)
    return graphs.load(collection) if graphs.exists(collection) else None


def after_run(run_dir: Path, graph) -> Path | None:
    """Record what the evidence graph (`graph`, None: none) says of the documents the run cites; when an
    earlier run was kept in previous/, write changes.md against it. Returns changes.md's path, or None."""
    from agents.wiki.changes import changes_since_previous, record_sources, write_changes

    if not (run_dir / "report.claims.json").is_file():
        return None  # a topic the corpus says nothing about: no claims, nothing to compare
    record_sources(run_dir, graph)
    changes = changes_since_previous(run_dir)
    return write_changes(run_dir, changes) if changes is not None else None


def changed_line(run_dir: Path, graph) -> str | None:
    """`after_run`, said as the line `raystorm report` prints (None when there was no earlier run)."""
    changed = after_run(run_dir, graph)
    return f"what changed since the previous run: {changed}" if changed is not None else None
