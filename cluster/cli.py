"""The `raystorm` command line: one subcommand a module in `cluster/commands/`."""

from __future__ import annotations

import argparse
import importlib
import sys

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
    "cluster.commands.graph",
    "cluster.commands.wiki",
]


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line on stderr, exit 2; subcommand parsers inherit this class."""

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
    except KeyboardInterrupt:
        print(f"raystorm {args.command}: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
