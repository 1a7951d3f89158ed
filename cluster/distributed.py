"""The STORM pipeline on Ray: every topic and every persona at once, over the actor system.

`run_reports_distributed(topics, ...)` writes the same artifacts as the
in-process run (`agents.storm.flow.run_topic` on a `LocalRuntime`, one topic
after another, as `raystorm report` does), all topics at once here. The
per-topic flow and its checkpoints are the same function; what changes is the
runtime (`cluster.ray_runtime.RayRuntime`), i.e. where each stage runs:

- personas, outline, each section, lead + polish: the flow's own stage
  functions, on the `Expert` pool (`ExpertActor.run_stage`);
- conversations: the flow's own `converse` team, run by the persona's
  `PersonaWriter` actor between its writer and the expert pool (`PooledChatAgent`):
  one team spans the cluster, and one call from the driver runs a whole interview;
- the information table: on the Corpus actors (`RemoteTable`), idempotent;
- every model call: under the `LLMGateway`'s cluster-wide limits, into its ledger.

`research_session(...)` holds the actors open around any number of
`report_topics` calls, so each persona's writer, with its conversation, can be
reached after the run (`ResearchCluster.writer_for`); `reports_distributed`
is one session for one set of topics.

Topics overlap freely: one topic's sections are written while another's
conversations run. Faults: actors restart, calls safe to repeat are reissued, a
conversation whose writer died is rerun on a fresh writer, every wait is
bounded, and a failed topic does not stop the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from pydantic import BaseModel

from actors.calls import call
from actors.models import ModelRecipe
from agents.lm.settings import LLMSettings
from agents.storm.artifacts import RunFiles
from agents.storm.flow import Progress, ProgressEvent, ReportOptions, ReportSummary, run_table_name, run_topic
from agents.web.records import WebSource
from cluster.distributed_checks import NodeWatch
from cluster.distributed_actors import ClusterPlan, ResearchCluster, placement_line
from cluster.ray_runtime import RayRuntime
from cluster.runtime import connect
from retrieval.config import StoreSettings
from retrieval.errors import RaystormError

__all__ = ["ClusterPlan", "ResearchCluster", "TopicsFailed", "report_topics",
           "reports_distributed", "research_session", "run_reports_distributed", "run_table_name"]


class TopicsFailed(RaystormError):
    """Some topics failed; the others' reports are written (and listed in `summaries`)."""

    def __init__(self, failures: dict[str, BaseException], summaries: list[ReportSummary]):
        lines = "; ".join(f"'{t}': {e}" for t, e in failures.items())
        super().__init__(f"{len(failures)} of {len(failures) + len(summaries)} topics failed: {lines}")
        self.failures = failures
        self.summaries = summaries


ConfigFor = Callable[[str], BaseModel]  # topic -> what its run_config.json records


async def report_topics(topics: Sequence[str], run: ResearchCluster, out_dir: str,
                        options: ReportOptions | None = None, progress: Progress | None = None,
                        config_for: ConfigFor | None = None) -> list[ReportSummary]:
    """Every topic at once (at most `plan.topics_in_flight`); a failed topic does not stop the others."""
    limit = asyncio.Semaphore(run.plan.topics_in_flight or max(len(topics), 1))
    runtime = RayRuntime(run)

    async def one(topic: str) -> ReportSummary:
        async with limit:
            return await run_topic(topic, runtime, out_dir, options, progress=progress,
                                   config=config_for(topic) if config_for else None, llm=run.recipe.llm)

    def say(line: str) -> None:  # a lost node concerns every topic in flight: said once, for all of them
        if progress:
            progress(ProgressEvent(topic=topics[0] if len(topics) == 1 else f"{len(topics)} topics", stage="cluster",
                                   kind="note", detail=line))

    async with NodeWatch(run.placement, say):
        results = await asyncio.gather(*(one(t) for t in topics), return_exceptions=True)
    failures = {t: r for t, r in zip(topics, results) if isinstance(r, BaseException)}
    summaries = [r for r in results if not isinstance(r, BaseException)]
    for error in failures.values():
        if not isinstance(error, Exception):  # KeyboardInterrupt, cancellation: not a topic's failure
            raise error
    if failures:
        raise TopicsFailed(failures, summaries)
    return summaries


@asynccontextmanager
async def research_session(*, store: StoreSettings, collection: str, personas_total: int,
                           llm: LLMSettings | None = None, plan: ClusterPlan | None = None,
                           address: str | None = None, cache_dir: str | None = None,
                           recipe: ModelRecipe | None = None,
                           ready: Callable[[ResearchCluster, dict[str, list[str]]], None] | None = None,
                           web: WebSource | None = None, source: str = "corpus", home: str | None = None
                           ) -> AsyncIterator[ResearchCluster]:
    """The run's actors, started (joining `address`, else a local Ray) and up; shut down on exit.

    `personas_total` sizes the writer pool (topics x personas); `ready(run, placement)`
    hears where every actor runs (node id -> actor names) once all are up.
    In embedded mode the store must not be open in this process: a Corpus actor opens it.
    """
    plan = plan or ClusterPlan()
    llm = llm or LLMSettings()
    recipe = recipe or ModelRecipe.for_store(store)
    connect(address)
    run = ResearchCluster(store, collection, llm, plan, personas_total=personas_total, cache_dir=cache_dir,
                          recipe=recipe, web=web, source=source, home=home)
    try:
        placement = await asyncio.to_thread(run.wait_ready)
        if ready:
            ready(run, placement)
        yield run
    finally:
        await asyncio.to_thread(run.shutdown)


async def reports_distributed(topics: Sequence[str], *, store: StoreSettings, collection: str, out_dir: str,
                              llm: LLMSettings | None = None, options: ReportOptions | None = None,
                              progress: Progress | None = None, config_for: ConfigFor | None = None,
                              plan: ClusterPlan | None = None, address: str | None = None,
                              cache_dir: str | None = None, recipe: ModelRecipe | None = None,
                              web: WebSource | None = None, source: str = "corpus", home: str | None = None
                              ) -> list[ReportSummary]:
    """Research and write every topic's report on Ray (joining `address`, else a local Ray).

    The same results and files as the in-process run of each topic, one after
    another, as `raystorm report` does. `config_for(topic)`: that topic's
    run_config.json. `cache_dir`: the completion cache (on the driver's node).
    `recipe`: how actors build their models beyond `llm`; by default the extractive
    toolkit embeds with the store's dense model, as `raystorm report` does.
    `web`, `source`, `home`: research the web too (`--source web|hybrid`), its pages kept under `home`;
    every query sent is written into each topic's run_config.json at the end.
    Raises `TopicsFailed` (with the finished topics' summaries) if any topic failed.
    In embedded mode the store must not be open in this process: a Corpus actor opens it.
    """
    topics = list(dict.fromkeys(t.strip() for t in topics if t.strip()))
    if not topics:
        raise RaystormError("no topics: give at least one non-empty topic")
    options = options or ReportOptions()
    out_dir = str(Path(out_dir).expanduser().resolve())
    plan = plan or ClusterPlan()
    if options.writer == "react" and not plan.report_agents:
        # one report agent per topic in flight: a topic's sections are written one after another
        plan = plan.model_copy(update={"report_agents": min(len(topics), plan.topics_in_flight or len(topics), 8)})

    def ready(run: ResearchCluster, placement: dict[str, list[str]]) -> None:
        if progress:
            nodes = placement_line(placement)
            for topic in topics:
                progress(ProgressEvent(topic=topic, stage="cluster", kind="note",
                                       detail=f"{len(run.writers)} writers and {len(run.experts)} experts "
                                              f"on {len(placement)} node(s): {nodes}"))

    async with research_session(store=store, collection=collection, llm=llm, plan=plan, address=address,
                                personas_total=len(topics) * (options.personas + 1), cache_dir=cache_dir,
                                recipe=recipe, ready=ready, web=web, source=source, home=home) as run:
        try:
            return await report_topics(topics, run, out_dir, options, progress, config_for)
        finally:
            if run.web is not None and config_for is not None:
                await _record_queries(run, topics, out_dir, config_for)


async def _record_queries(run: ResearchCluster, topics: Sequence[str], out_dir: str, config_for: ConfigFor) -> None:
    """The run's web queries in each topic's run_config.json (topics research at once: one list for all)."""
    queries = await call(run.web.take_queries.remote(), actor="WebResearch", method="take_queries",
                         stage="run_config", timeout_s=60.0)
    for topic in topics:
        files = RunFiles(out_dir, topic)
        if files.dir.is_dir():
            files.write_config(config_for(topic).model_copy(update={"web_queries": queries}))


def run_reports_distributed(topics: Sequence[str], **kwargs) -> list[ReportSummary]:
    """`reports_distributed` for callers without an event loop (same keyword arguments)."""
    return asyncio.run(reports_distributed(topics, **kwargs))
