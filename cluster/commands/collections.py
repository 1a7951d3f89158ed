"""`raystorm collections [migrate]`: the collections in the store with their passage counts; `migrate`
moves a data dir written by an earlier raystorm (Qdrant local mode) to the embedded Qdrant engine."""

from __future__ import annotations

import argparse
import json

from cluster.commands.common import add_store_arguments, store_settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("collections", help="list collections with passage counts (or migrate an old store)")
    p.add_argument("action", nargs="?", choices=["list", "migrate"], default="list",
                   help="list (default), or migrate: copy a store written by an earlier raystorm (Qdrant local "
                        "mode) into the embedded Qdrant engine, once; its vectors are copied, not embedded again")
    p.add_argument("--json", action="store_true")
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from retrieval.store import PassageStore

    settings = store_settings(args)
    if args.action == "migrate":
        return migrate(settings)
    store = PassageStore(settings)
    try:
        infos = [i for i in store.collections() if not i.name.endswith("__graph")]  # graphs sit beside them
    finally:
        store.close()
    if args.json:
        print(json.dumps([i.model_dump() for i in infos], indent=1))
    elif not infos:
        where = settings.qdrant_url or settings.edge_path
        print(f"no collections in {where}: run `raystorm ingest PATH --collection NAME`")
    else:
        width = max(len(i.name) for i in infos)
        for i in infos:
            print(f"{i.name:<{width}}  {i.passages:>7} passages  ({i.dense_model or 'unknown model'})")
    return 0


def migrate(settings) -> int:
    from cluster.commands.common import info
    from retrieval.migrate import migrate as copy_store

    def progress(name: str, done: int, total: int) -> None:
        info(f"migrating '{name}': {done}/{total} points")

    summary = copy_store(settings, progress)
    print(f"migrated {len(summary.collections)} collections ({sum(summary.collections.values())} points) to "
          f"{settings.edge_path} in {summary.seconds:.1f} s; the old store is kept at {summary.kept_at} "
          f"(delete it once you are satisfied)")
    return 0
