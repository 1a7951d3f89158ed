"""A report service that keeps a collection's actors up between runs on a long-lived Ray cluster.

`raystorm report --address ADDR` starts its actors (gateway, corpus, writers, experts) and stops
them again: on a small machine that start-up (Python and its models in six processes) takes
longer than a topic's research. `raystorm serve -c NAME --address ADDR` starts them once, in a
detached `ReportService` actor named after the collection; from then on every
`raystorm report -c NAME --address ADDR` with the same store and LLM settings hands its topics to
that service, which runs them on the actors already up (the flow `report_topics` runs, with the
same files and checkpoints, and a rerun's changes.md) and streams the progress back. `raystorm serve -c NAME --stop` ends it
and lets go of the store.

The service is the run's driver: it holds the conversations and writes the reports, on its own
node, where `raystorm serve` ran (in embedded mode the store is on that disk too). Reports go to
the `--out` folder the client names, on that node.

Between runs the service drops what a finished topic left on its actors (the writers' agents,
each actor's models for the topic, the gateway's usage records), so a service that runs for days
does not grow with the topics it has written.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import ray
from pydantic import BaseModel, Field

from cluster.runtime import NAMESPACE
from retrieval.errors import RaystormError, UsageError

SERVICE_PREFIX = "report-service:"
SERVICE_START_TIMEOUT_S = 600.0
RUN_TIMEOUT_S = 7 * 24 * 3600.0  # a run through the service: progress shows it is alive
PROGRESS_POLL_S = 0.5


def service_name(collection: str) -> str:
    return f"{SERVICE_PREFIX}{collection}"


def spec_of(settings, collection: str, llm) -> "ServiceSpec":
    """What a report service for `collection` is started with (`raystorm serve`), and what a report asks of it."""
    return ServiceSpec(store=settings.model_dump(mode="json"), collection=collection,
                       llm=llm.model_dump(mode="json"))


class ServiceSpec(BaseModel):
    """What a service is started with; a report uses the service only if it asks for the same."""

    store: dict = Field(description="StoreSettings, as JSON")
    collection: str
    llm: dict = Field(description="LLMSettings, as JSON (no secrets: keys come from the environment)")

    def differences(self, other: "ServiceSpec") -> list[str]:
        """The settings in which `other` differs from this one, named for the user."""
        said = []
        for field in ("store", "collection"):
            if getattr(self, field) != getattr(other, field):
                said.append(field)
        mine, theirs = self.llm, other.llm
        said += [f"llm.{k}" for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
        return said


class ServiceInfo(BaseModel):
    name: str
    spec: ServiceSpec
    node: str
    started_at: float
    writers: int
    experts: int
    report_agents: int = Field(description="ReportAgent actors: --writer react needs at least one")
    runs: int
    topics_in_flight: int
    held_writers: int = Field(description="persona writers the actors host (those of the topics in flight)")
    held_usage_records: int = Field(description="usage records the gateway holds (those of the topics in flight)")

    def line(self) -> str:
        up = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started_at))
        agents = f", {self.report_agents} report agents" if self.report_agents else ""
        return (f"service '{self.name}' on node {self.node[:8]}, up since {up}: {self.writers} writers, "
                f"{self.experts} experts{agents}; {self.runs} run(s) so far, {self.topics_in_flight} topic(s) in flight "
                f"({self.held_writers} writers and {self.held_usage_records} usage records held)")


class ServiceRun(BaseModel):
    """What a run through the service gave: the finished topics' summaries and the failed ones' errors."""

    summaries: list = Field(default_factory=list, description="agents.storm.flow.ReportSummary")
    failures: dict[str, str] = Field(default_factory=dict)
    changed: dict[str, str] = Field(default_factory=dict, description="topic -> the line naming its changes.md, "
                                    "for a topic reported before into the same folder")


@ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1000)
class ReportService:
    """Holds a `ResearchCluster` open and runs `report_topics` on it for each client."""

    def __init__(self, spec: ServiceSpec, plan, cache_dir: str | None, name: str):
        from actors.models import ModelRecipe
        from agents.lm.settings import LLMSettings
        from cluster.distributed_actors import ResearchCluster
        from retrieval.config import StoreSettings

        store = StoreSettings.model_validate(spec.store)
        llm = LLMSettings.model_validate(spec.llm)
        self.spec = spec
        self.name = name
        self.started_at = time.time()
        # a writer pool as large as the cluster allows (topics x personas is not known yet)
        self.cluster = ResearchCluster(store, spec.collection, llm, plan, personas_total=1 << 20,
                                       cache_dir=cache_dir, recipe=ModelRecipe.for_store(store))
        self._opened = 0  # runs so far; the last one's number
        self._events: dict[int, list[str]] = {}
        self._in_flight: set[str] = set()

    async def wait_ready(self) -> dict[str, list[str]]:
        """Where every actor runs (node id -> actor names), once all are up."""
        return await asyncio.to_thread(self.cluster.wait_ready)

    async def info(self) -> ServiceInfo:
        from actors.filing import OUTBOX

        keys = await asyncio.gather(*(h.keys.remote() for h in self.cluster.writers.handles))
        await OUTBOX.flush(self.cluster.gateway)  # the records runs' results brought back
        ledger = await self.cluster.gateway.ledger.remote()
        return ServiceInfo(name=self.name, spec=self.spec, node=ray.get_runtime_context().get_node_id(),
                           started_at=self.started_at, writers=len(self.cluster.writers),
                           experts=len(self.cluster.experts), runs=self._opened,
                           report_agents=len(self.cluster.report_agents) if self.cluster.report_agents else 0,
                           topics_in_flight=len(self._in_flight), held_writers=sum(map(len, keys)),
                           held_usage_records=len(ledger.records))

    def open_run(self, topics: Sequence[str]) -> int:
        """A run id for `topics`; refused while another run researches one of them (one table each)."""
        busy = sorted(set(topics) & self._in_flight)
        if busy:
            raise UsageError(f"the service is researching {', '.join(repr(t) for t in busy)} for another "
                             "client: wait for it, or give other topics")
        self._in_flight |= set(topics)
        self._opened += 1
        run = self._opened
        self._events[run] = []
        return run

    async def report(self, run: int, topics: Sequence[str], out_dir: str, options, configs: dict) -> ServiceRun:
        """`report_topics` on the service's actors; progress lines are kept for `progress(run, ...)`.

        The reports are written here, so a rerun's changes.md is too, as `raystorm report` writes it."""
        from agents.storm.artifacts import topic_slug
        from cluster.commands.diff import before_rerun
        from cluster.distributed import TopicsFailed, report_topics

        events = self._events[run]
        try:
            for topic in topics:
                before_rerun(Path(out_dir) / topic_slug(topic))
            try:
                done = ServiceRun(summaries=await report_topics(topics, self.cluster, out_dir, options,
                                                                progress=lambda e: events.append(e.line()),
                                                                config_for=configs.get))
            except TopicsFailed as exc:
                done = ServiceRun(summaries=exc.summaries, failures={t: str(e) for t, e in exc.failures.items()})
            return await self._changes(done)
        finally:
            self._in_flight -= set(topics)
            await self._release(topics)

    async def _changes(self, done: ServiceRun) -> ServiceRun:
        """changes.md of each finished topic that was reported before, against the graph as it stands (the
        Corpus actor holds the store)."""
        from cluster.commands.diff import changed_line

        if not done.summaries:
            return done
        graph = await self.cluster.corpus.evidence_graph()
        for summary in done.summaries:
            line = await asyncio.to_thread(changed_line, Path(summary.directory), graph)  # files: off the loop
            if line:
                done.changed[summary.topic] = line
        return done

    def progress(self, run: int, since: int) -> list[str]:
        """The run's progress lines from number `since` on."""
        return self._events.get(run, [])[since:]

    def close_run(self, run: int) -> None:
        self._events.pop(run, None)

    async def _release(self, topics: Sequence[str]) -> None:
        """What the finished topics left on the actors: their writers, models and usage records."""
        from actors.filing import OUTBOX

        refs = [h.release.remote(list(topics)) for h in (*self.cluster.writers.handles,
                                                         *self.cluster.experts.handles)]
        try:  # records still held here go in before the gateway forgets these topics, not after
            await OUTBOX.flush(self.cluster.gateway)
        except Exception:  # best effort, as below
            pass
        refs.append(self.cluster.gateway.forget.remote(list(topics)))
        await asyncio.gather(*refs, return_exceptions=True)  # best effort: a lost actor held nothing

    def stop(self) -> None:
        """End the actors, let go of the store, and end this actor."""
        self.cluster.shutdown()
        ray.actor.exit_actor()


def find_service(collection: str) -> ray.actor.ActorHandle | None:
    """The running service for `collection` on the connected cluster, if any."""
    try:
        return ray.get_actor(service_name(collection), namespace=NAMESPACE)
    except ValueError:
        return None


def service_info(handle: ray.actor.ActorHandle, timeout_s: float = 60.0) -> ServiceInfo:
    from actors.calls import get

    return get(handle.info.remote(), actor="ReportService", method="info", stage="service", timeout_s=timeout_s)


def start_service(spec: ServiceSpec, plan, cache_dir: str | None, env: dict[str, str] | None = None,
                  timeout_s: float = SERVICE_START_TIMEOUT_S) -> tuple[ray.actor.ActorHandle, dict[str, list[str]]]:
    """Start the service for `spec.collection` on this node (detached) and wait until its actors are up."""
    from actors.calls import get
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    name = service_name(spec.collection)
    options = dict(name=name, namespace=NAMESPACE, lifetime="detached",
                   scheduling_strategy=NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(),
                                                                      soft=False))
    if env:
        options["runtime_env"] = {"env_vars": env}
    try:
        handle = ReportService.options(**options).remote(spec, plan, cache_dir, name)
    except ValueError as exc:  # the name is taken: another `raystorm serve` got there first
        raise UsageError(f"a service for '{spec.collection}' is already running on this cluster ({exc})") from None
    try:
        placement = get(handle.wait_ready.remote(), actor="ReportService", method="wait_ready", stage="startup",
                        timeout_s=timeout_s)
    except BaseException:
        stop_service(handle)
        raise
    return handle, placement


def stop_service(handle: ray.actor.ActorHandle, timeout_s: float = 60.0) -> None:
    """Stop the service's actors (the store is let go), then the service itself."""
    try:
        ray.get(handle.stop.remote(), timeout=timeout_s)
    except ray.exceptions.RayActorError:
        pass  # it ended, as `stop` does
    except (ray.exceptions.GetTimeoutError, ray.exceptions.RayError):
        ray.kill(handle, no_restart=True)


def check_spec(handle: ray.actor.ActorHandle, wanted: ServiceSpec) -> ServiceInfo:
    """The service's info, if it was started with `wanted`'s settings; else a clear error."""
    info = service_info(handle)
    differ = info.spec.differences(wanted)
    if differ:
        raise UsageError(f"the running service for '{wanted.collection}' was started with other settings "
                         f"({', '.join(differ)} differ): give the flags it was started with (`raystorm serve -c "
                         f"{wanted.collection} --status` shows them), or stop it (`--stop`) to run with these")
    return info


async def report_via_service(handle: ray.actor.ActorHandle, topics: Sequence[str], out_dir: str, options,
                             configs: dict, say) -> ServiceRun:
    """Run `topics` on the service, passing each progress line to `say` as it comes."""
    from actors.calls import ActorUnavailable, call

    bound = dict(actor="ReportService", stage="service")
    run = await call(handle.open_run.remote(list(topics)), method="open_run", timeout_s=60.0, **bound)
    done = asyncio.ensure_future(call(handle.report.remote(run, list(topics), out_dir, options, configs),
                                      method="report", timeout_s=RUN_TIMEOUT_S, **bound))
    seen = 0
    try:
        while True:
            finished = await asyncio.wait([done], timeout=PROGRESS_POLL_S)
            lines = await call(handle.progress.remote(run, seen), method="progress", timeout_s=60.0, **bound)
            for line in lines:
                say(line)
            seen += len(lines)
            if finished[0]:
                break
        return done.result()
    except ActorUnavailable as exc:
        raise RaystormError(f"the report service ended mid-run ({exc.reason}); finished stages are kept: start "
                            "it again (`raystorm serve`) and rerun to resume") from None
    finally:
        done.cancel()
        handle.close_run.remote(run)
