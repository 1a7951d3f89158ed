"""The command-line options of a distributed run, and the `ClusterPlan` they make.

    add_cluster_arguments(parser)
    if wants_distributed(args):
        run_reports_distributed(..., plan=plan_from_args(args), address=args.address)
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cluster.runtime import resolve_address
from retrieval.errors import UsageError

if TYPE_CHECKING:  # the plan's module imports Ray and the actors: every command's --help would pay for it
    from cluster.distributed import ClusterPlan


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "cluster",
        "With --address (or inside a Ray job, where Ray sets RAY_ADDRESS) the run joins that Ray cluster "
        "and researches every topic and persona at once; --distributed does the same on a local Ray.")
    g.add_argument("--address", metavar="ADDR",
                   help="a Ray cluster: auto, HOST:6379, or ray://HOST:10001 (default: $RAY_ADDRESS; none: "
                        "run in this process)")
    g.add_argument("--distributed", action="store_true",
                   help="run on Ray even without an address (a local Ray sized for this machine)")
    g.add_argument("--writers", type=int, metavar="N",
                   help="PersonaWriter actors (default: one per persona, at most the cluster's CPUs)")
    g.add_argument("--experts", type=int, metavar="N", help="Expert actors (default: the cluster's CPUs)")
    g.add_argument("--topics-in-flight", type=int, metavar="N", help="topics researched at once (default: all)")
    g.add_argument("--llm-requests-per-minute", type=float, metavar="N",
                   help="requests per minute to each LLM endpoint, over the whole cluster (default: no limit; "
                        "--llm-concurrency bounds requests in flight, cluster-wide too)")
    g.add_argument("--actor-resource", metavar="NAME[=AMOUNT]",
                   help="a custom resource every writer and expert actor asks for (default amount 1), to keep "
                        "them on the nodes started with it, e.g. `ray start --resources '{\"research\": 64}'`")
    g.add_argument("--call-timeout", type=float, metavar="SECONDS",
                   help="bound of one actor call: a conversation turn or a stage (default 600 / 1800)")


def wants_distributed(args: argparse.Namespace) -> bool:
    """Run on Ray: an address is given or set in the environment, or --distributed."""
    return bool(args.distributed or resolve_address(args.address))


def plan_from_args(args: argparse.Namespace) -> "ClusterPlan":
    from cluster.distributed import ClusterPlan

    fields: dict = {}
    for name, key in (("writers", "writer_actors"), ("experts", "expert_actors"),
                      ("topics_in_flight", "topics_in_flight")):
        value = getattr(args, name)
        if value is not None:
            if value < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
            fields[key] = value
    if args.llm_requests_per_minute is not None:
        if args.llm_requests_per_minute <= 0:
            raise UsageError("--llm-requests-per-minute must be positive")
        fields["llm_requests_per_minute"] = args.llm_requests_per_minute
    if args.actor_resource:
        name, eq, amount = args.actor_resource.partition("=")
        try:
            value = float(amount) if eq else 1.0
        except ValueError:
            value = 0.0
        if not name.strip() or value <= 0:
            raise UsageError(f"--actor-resource {args.actor_resource!r}: expected NAME or NAME=AMOUNT (AMOUNT > 0)")
        fields["research_resources"] = {name.strip(): value}
    if args.call_timeout is not None:
        if args.call_timeout <= 0:
            raise UsageError("--call-timeout must be positive")
        fields["turn_timeout_s"] = fields["stage_timeout_s"] = args.call_timeout
    return ClusterPlan(**fields)
