"""`raystorm wiki build|check|update`: a compiled wiki of claims tied to source lines, checked with no model."""

from __future__ import annotations

import argparse
from pathlib import Path

from cluster.commands.common import (
    add_store_arguments,
    info,
    relative_source,
    store_settings,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("wiki", help="compile a collection into a wiki of checkable claims; check it",
                       description="Pages whose every statement is a claim pinned to SOURCE#Lx-Ly and the "
                                   "sha256 of those lines. `check` re-reads the lines (no model call); "
                                   "`update` re-derives only stale and unresolved claims. A report folder "
                                   "can be checked too (report.md has the same sidecar).")
    actions = p.add_subparsers(dest="wiki_command", metavar="ACTION")
    from agents.lm.arguments import add_llm_arguments

    build = actions.add_parser("build", help="compile a collection into a wiki folder")
    build.add_argument("--collection", "-c", required=True)
    build.add_argument("--out", required=True, metavar="DIR", help="the wiki folder (created)")
    add_llm_arguments(build)
    add_store_arguments(build)
    build.set_defaults(func=run_build)
    check = actions.add_parser("check", help="ok / relocated / stale / unresolved for every claim (no model)")
    check.add_argument("folder", metavar="DIR", help="a wiki folder, a report run folder, or one topic's folder")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument("--refetch", action="store_true",
                       help="first fetch again every web page the claims cite (their snapshots), so claims "
                            "whose lines the page changed read stale; without it nothing leaves this machine")
    check.add_argument("--allow-private-hosts", action="store_true",
                       help="--refetch: pages on loopback and private addresses may be fetched (an intranet)")
    check.set_defaults(func=run_check)
    update = actions.add_parser("update", help="re-derive the stale and unresolved claims of a wiki")
    update.add_argument("folder", metavar="DIR")
    add_llm_arguments(update)
    add_store_arguments(update)  # to refresh the wiki's claim nodes in the collection's evidence graph
    update.set_defaults(func=run_update)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _models(args: argparse.Namespace, data_dir: str | None):
    from agents.lm.arguments import role_models_from_args
    from agents.lm.nlp import TextToolkit
    from retrieval.config import data_home

    models = role_models_from_args(args, cache_dir=data_home(data_dir) / "cache" / "llm", nlp=TextToolkit())
    models.validate_roles(["article"])
    if models.notice:
        info(models.notice)
    return models


def run_build(args: argparse.Namespace) -> int:
    import asyncio

    from agents.wiki.build import build_wiki
    from retrieval.store import PassageStore

    settings = store_settings(args)
    models = _models(args, settings.data_dir)
    store = PassageStore(settings)

    async def go():
        try:
            return await build_wiki(store, args.collection, Path(args.out), models, models.name)
        finally:
            await models.close()

    try:
        summary = asyncio.run(go())
    finally:
        store.close()
    print(f"wiki of '{args.collection}' in {args.out}: {summary.pages} pages, {summary.claims} claims"
          + (f" ({summary.dropped} statements left out: their source lines changed since the last ingest; "
             f"run `raystorm ingest` again, then rebuild)" if summary.dropped else "") + f", {summary.seconds:.1f} s")
    return 0


def run_check(args: argparse.Namespace) -> int:
    # no language model or store is touched here (nor the network, without --refetch): files are read and hashed
    from agents.wiki.check import check_folder

    if args.refetch:
        refetch_cited(Path(args.folder), args.allow_private_hosts)
    report = check_folder(Path(args.folder))
    if args.json:
        print(report.model_dump_json(indent=1))
        return 0 if report.counts["stale"] + report.counts["unresolved"] == 0 else 1
    for c in report.claims:
        if c.state == "ok":
            continue
        where = "; ".join(f"{e.was}" + (f" -> {e.now}" if e.now else "") + (f" ({e.reason})" if e.reason else "")
                          for e in c.evidence if e.state != "ok")
        print(f"{c.state:10} {relative_source(c.page)} {c.claim_id}: {c.text[:90]}\n{'':11}{where}")
    counts = ", ".join(f"{n} {s}" for s, n in report.counts.items())
    print(f"{len(report.claims)} claims: {counts} ({report.files_read} source files read, "
          f"{report.seconds * 1000:.0f} ms, no model call)")
    return 0 if report.counts["stale"] + report.counts["unresolved"] == 0 else 1


def refetch_cited(folder: Path, allow_private_hosts: bool) -> None:
    """Every web page the claims under `folder` cite, fetched again into its snapshot; one line each."""
    import asyncio

    from agents.web.fetch import FetchSettings
    from agents.web.refetch import refetch_snapshots
    from agents.wiki.claims import load_sidecars

    paths = [ev.path for _, claims in load_sidecars(folder) for claim in claims.claims for ev in claim.evidence]
    results = asyncio.run(refetch_snapshots(paths, FetchSettings(allow_private_hosts=allow_private_hosts)))
    for r in results:
        info(r.line())
    if not results:
        info("--refetch: the claims cite no web page")


def run_update(args: argparse.Namespace) -> int:
    import asyncio

    from agents.wiki.update import update_wiki

    models = _models(args, args.data_dir)

    async def go():
        try:
            return await update_wiki(Path(args.folder), models)
        finally:
            await models.close()

    s, pages = asyncio.run(go())
    _refresh_graph(args, Path(args.folder), pages)
    print(f"{s.pages} pages: {s.rewritten} claims re-derived, {s.removed} removed (evidence gone), "
          f"{s.kept} kept" + (f"; {s.pages_removed} pages left with no claim removed" if s.pages_removed else "")
          + (f"; {s.skipped_reports} report sidecars skipped (rerun the report with --force to rewrite it)"
             if s.skipped_reports else ""))
    return 0


def _refresh_graph(args: argparse.Namespace, folder: Path, pages) -> None:
    from agents.wiki.build import refresh_graph_claims
    from retrieval.store import PassageStore

    collections = {c.collection for c in pages if c.collection}
    if not collections:
        return
    store = PassageStore(store_settings(args))
    try:
        for name in collections:
            if store.exists(name):
                refresh_graph_claims(store, name, folder, [c for c in pages if c.collection == name])
    finally:
        store.close()
