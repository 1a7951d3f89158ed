"""The `raystorm` command line: one subcommand a module in `cluster/commands/`."""

from __future__ import annotations

import argparse
import errno
import importlib
import shutil
import sqlite3
import sys
from pathlib import Path

from retrieval.errors import RaystormError

# Each module defines `register(subparsers)`; the parser it adds sets `func(args) -> int`.
COMMAND_MODULES = [
    "cluster.commands.ingest",
    "cluster.commands.search",
    "cluster.commands.collections",
    "cluster.commands.report",
    "cluster.commands.ask",
    "cluster.commands.bench",
    "cluster.commands.serve",
    "cluster.commands.submit",
    "cluster.commands.interview",
    "cluster.commands.roundtable",
    "cluster.commands.graph",
    "cluster.commands.wiki",
    "cluster.commands.export",
    "cluster.commands.diff",
    "cluster.commands.mcp",
    "cluster.commands.web",
]


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line on stderr, exit 2; subcommand parsers inherit this class. No
    abbreviations of long options: a new option must never change what an old abbreviation meant."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="raystorm",
        description=(
            "Distributed deep research: ingest a document collection, search it, "
            "write cited STORM reports, answer multi-hop questions. Runs locally by "
            "default (embedded Qdrant, offline embeddings, extractive model); "
            "--address, --qdrant-url and --llm switch to a Ray cluster, a Qdrant "
            "server and an OpenAI-compatible LLM."
        ),
        epilog="Run `raystorm COMMAND --help` for a command's options. Data lives in "
        "$RAYSTORM_HOME (default ~/.raystorm) unless --data-dir is given.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except RaystormError as exc:
        print(f"raystorm {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (OSError, sqlite3.OperationalError) as exc:
        if not disk_full(exc):
            raise
        print(f"raystorm {args.command}: error: {no_space_line(args, exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"raystorm {args.command}: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


def run() -> int:
    """The `raystorm` command: `main`, then out of Ray at once if the command joined it (`cluster.runtime.leave`),
    not half a second later in Ray's exit hook."""
    try:
        return main()
    finally:
        from cluster.runtime import leave

        leave()


def disk_full(exc: BaseException) -> bool:
    """The OS's "No space left on device" or sqlite's "database or disk is full"."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(exc, sqlite3.OperationalError) and "disk is full" in str(exc)


def no_space_line(args: argparse.Namespace, exc: BaseException) -> str:
    """One line: which disk is full, how much is free, and that rerunning resumes."""
    from retrieval.config import data_home

    filename = getattr(exc, "filename", None)
    where = Path(filename).parent if filename else data_home(getattr(args, "data_dir", None))
    folder = next((p for p in [where, *where.parents] if p.exists()), Path("/"))
    free = shutil.disk_usage(folder).free / 2**20
    need = getattr(exc, "strerror", "") or ""
    need = need.split(": ", 1)[1] if "needs" in need else "a collection takes ~10 KB a passage, a report a few MB"
    return (f"no space left on the disk holding {where} ({free:.0f} MB free; {need}): free some space and rerun "
            "the same command; what was written stays, and it resumes")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
