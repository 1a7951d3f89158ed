"""`raystorm collections`: the collections in the store with their passage counts."""

from __future__ import annotations

import argparse
import json

from cluster.commands.common import add_store_arguments, store_settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("collections", help="list collections with passage counts")
    p.add_argument("--json", action="store_true")
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from retrieval.store import PassageStore

    settings = store_settings(args)
    store = PassageStore(settings)
    try:
        infos = [i for i in store.collections() if not i.name.endswith("__graph")]  # graphs sit beside them
    finally:
        store.close()
    if args.json:
        print(json.dumps([i.model_dump() for i in infos], indent=1))
    elif not infos:
        where = settings.qdrant_url or settings.qdrant_path
        print(f"no collections in {where}: run `raystorm ingest PATH --collection NAME`")
    else:
        width = max(len(i.name) for i in infos)
        for i in infos:
            print(f"{i.name:<{width}}  {i.passages:>7} passages  ({i.dense_model or 'unknown model'})")
    return 0
