"""`raystorm serve -c NAME --address ADDR [--stop | --status]`: keep a collection's actors up between reports."""

from __future__ import annotations

import argparse

from cluster.commands.common import add_store_arguments, collection_name, count, info, store_settings


def register(sub: argparse._SubParsersAction) -> None:
    from agents.lm.arguments import add_llm_arguments
    from cluster.distributed_args import add_cluster_arguments

    p = sub.add_parser(
        "serve", help="keep a collection's actors up on a Ray cluster, for quick reports",
        description="Start a report service on a long-lived Ray cluster (`ray start --head`, then "
                    "--address auto): the gateway, corpus, writer and expert actors of collection NAME start "
                    "once and stay up. From then on `raystorm report -c NAME --address ADDR`, with the same "
                    "--data-dir and --llm options, runs its topics on them instead of starting its own "
                    "(seconds of start-up saved per report); the reports are written on the node where the "
                    "service runs. While it runs, the service holds the collection's embedded store: stop it "
                    "to ingest into that data dir again.",
        epilog="e.g.  ray start --head && raystorm serve -c example --address auto --llm gpt-4o-mini\n"
               "      raystorm report --topics topics.txt -c example --address auto --llm gpt-4o-mini\n"
               "      raystorm serve -c example --address auto --stop",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--collection", "-c", type=collection_name, required=True, help="the ingested collection to serve")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true", help="say whether the service runs, and with what")
    what.add_argument("--stop", action="store_true", help="stop the service and let go of the store")
    p.add_argument("--report-agents", type=count(0, 64), default=0, metavar="N",
                   help="ReportAgent actors, for reports with --writer react (default 0: storm writer only)")
    add_llm_arguments(p)
    add_cluster_arguments(p)
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cluster.runtime import connect, resolve_address
    from cluster.service import find_service, service_info, service_name, stop_service
    from retrieval.errors import UsageError

    if not resolve_address(args.address):
        raise UsageError("a service outlives this command only on a running cluster: start one (`ray start "
                         "--head`) and give --address auto (or HOST:6379)")
    if args.distributed:
        raise UsageError("--distributed starts a Ray that ends with this command: give --address instead")
    connect(args.address)
    handle = find_service(args.collection)
    if args.status or args.stop:
        if handle is None:
            print(f"no service for '{args.collection}' on this cluster")
            return 0 if args.stop else 1
        if args.status:
            found = service_info(handle)
            print(found.line())
            print(found.spec.model_dump_json(indent=2))
            return 0
        stop_service(handle)
        print(f"stopped service '{service_name(args.collection)}'")
        return 0
    if handle is not None:  # (before the store check: the service holds the store)
        raise UsageError(f"a service for '{args.collection}' is already running on this cluster: `raystorm serve "
                         f"-c {args.collection} --status`, or `--stop` it first")
    return _start(args)


def _start(args: argparse.Namespace) -> int:
    from agents.lm.arguments import settings_from_args
    from agents.lm.models import check_roles
    from agents.lm.settings import STORM_ROLES
    from cluster.service import spec_of
    from retrieval.search import check_collection
    from cluster.distributed_actors import placement_line
    from cluster.distributed_args import plan_from_args
    from cluster.service import service_info, start_service
    from retrieval.config import data_home

    settings = store_settings(args)
    llm = settings_from_args(args)
    check_roles(llm.roles, STORM_ROLES)
    check_collection(settings, args.collection)  # before any actor: the collection is there and searchable
    spec = spec_of(settings, args.collection, llm)
    info(f"starting the report service for '{args.collection}' ...")
    plan = plan_from_args(args).model_copy(update={"report_agents": args.report_agents})
    handle, placement = start_service(spec, plan, str(data_home(settings.data_dir) / "cache" / "llm"),
                                      env=llm.api_key_env())
    found = service_info(handle)
    print(found.line())
    print(f"actors: {placement_line(placement)}")
    print(f"use it: raystorm report TOPIC -c {args.collection} --address {args.address or 'auto'} (with the same "
          f"--data-dir and --llm options); stop it: raystorm serve -c {args.collection} --address "
          f"{args.address or 'auto'} --stop")
    return 0
