"""A roundtable's turns on Ray (`raystorm roundtable --distributed / --address`): the session stays with the
driver, and every turn's stage (an expert's answer, the moderator's question, the organiser's placement, a
report paragraph) goes to the cluster's Expert actors through `RayRuntime.stage`, as a report's stages do.
The experts' searches go to the Corpus actors, so many roundtables can share one cluster; with `--source
web|hybrid` to the cluster's WebResearch actor too (its fetcher actors download across the cluster), as a
report's do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from agents.lm.settings import LLMSettings
from retrieval.config import StoreSettings, data_home


@dataclass
class ClusterTurns:
    runtime: object
    notice: str | None
    placement: str


@asynccontextmanager
async def cluster_turns(args, settings: StoreSettings, collection: str, llm: LLMSettings, source: str = "corpus",
                        web=None) -> AsyncIterator[ClusterTurns]:
    """`web` (`agents.web.research.WebSource`) with `source` web or hybrid: the experts search the web too, its
    pages kept under the data dir, as `raystorm report --source web --distributed` keeps them. The roles and
    the collection are checked by the caller (`cluster.roundtables.turns_on`) before the cluster starts."""
    from agents.lm.extractive import NO_LLM_NOTICE
    from cluster.distributed import research_session
    from cluster.distributed_actors import placement_line
    from cluster.distributed_args import plan_from_args
    from cluster.ray_runtime import RayRuntime
    from cluster.runtime import resolve_address

    plan = plan_from_args(args)
    if plan.writer_actors is None:  # a roundtable has no writers: one idle actor, not one per CPU
        plan = plan.model_copy(update={"writer_actors": 1})
    where: list[str] = []
    async with research_session(store=settings, collection=collection, personas_total=1, llm=llm, plan=plan,
                                address=resolve_address(args.address),
                                cache_dir=str(data_home(settings.data_dir) / "cache" / "llm"),
                                web=web, source=source, home=str(data_home(settings.data_dir)),
                                ready=lambda run, placement: where.append(placement_line(placement))) as run:
        yield ClusterTurns(RayRuntime(run), None if llm.uses_llm else NO_LLM_NOTICE, where[0] if where else "")
