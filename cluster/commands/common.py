"""Options shared by the commands: where data lives and how the store is reached."""

from __future__ import annotations

import argparse
import sys

from retrieval.config import StoreSettings


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("data and store")
    group.add_argument("--data-dir", metavar="DIR",
                       help="where raystorm keeps its store, models, caches and runs "
                            "(default: $RAYSTORM_HOME or ~/.raystorm)")
    group.add_argument("--qdrant-url", metavar="URL",
                       help="a Qdrant server or cluster (default: $QDRANT_URL, else Qdrant embedded on disk "
                            "in the data dir); the API key is read from $QDRANT_API_KEY")
    group.add_argument("--dense-model", metavar="NAME",
                       help="fastembed dense model (default: the bundled offline all-MiniLM-L6-v2; "
                            "other names download, so they need network)")


def store_settings(args: argparse.Namespace) -> StoreSettings:
    return StoreSettings.resolve(args.data_dir, args.qdrant_url, args.dense_model)


def relative_source(source: str) -> str:
    """A path shown relative to the working directory when it is under it."""
    from pathlib import Path

    try:
        return str(Path(source).relative_to(Path.cwd()))
    except ValueError:
        return source


def info(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
