"""The STORM pipeline on Ray: every topic and every persona at once, over the actor system.

`run_reports_distributed(topics, ...)` writes the same artifacts as the
in-process `agents.storm.pipeline.run_report`, one topic after another there,
all at once here. The per-topic flow and its checkpoints are the pipeline's
(`RunFiles`: a stage whose files exist is reused); what changes is where each
stage runs:

- personas, outline, each section, lead + polish: the pipeline's own stage
  functions, on the `ExpertActor` pool (`run_stage`);
- conversations: the pipeline's own `converse` team, run here, with the
  persona's writer on a `PersonaWriter` actor (`RemoteChatAgent`) and the expert
  on the expert pool (`PooledChatAgent`): one team spans the cluster;
- the information table: on the store's owner (`RemoteTable`), idempotent;
- every model call: under the `LLMGateway`'s cluster-wide limits, into its ledger.

Topics overlap freely: one topic's sections are written while another's
conversations run. Faults: actors restart, stateless calls are reissued, a
conversation whose writer died is rerun on a fresh writer, every wait is
bounded, and a failed topic does not stop the others.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import ray
from pydantic import BaseModel, Field

from actors.calls import ActorUnavailable, call, get, retrying
from actors.chat_proxy import AgentCard, AgentNotHosted, PooledChatAgent, RemoteChatAgent
from actors.corpus import CorpusPool
from actors.expert import ExpertActor, ExpertSpec
from actors.gateway import EndpointLimits, GatewaySettings, LLMGateway, UsageReport
from actors.models import INJECTED_ENDPOINT, ModelRecipe
from actors.pool import ActorOptions, ActorPool, alive_nodes, cluster_cpus
from actors.table import RemoteTable
from actors.writer import PersonaWriter
from agents.lm.settings import LLMSettings
from agents.lm.usage import UsageLedger
from agents.storm.article import assemble, cited_indices, write_section
from agents.storm.artifacts import STAGES, RunFiles, nothing_found_markdown, report_markdown, topic_slug
from agents.storm.conversation import converse
from agents.storm.expert import ExpertAgent
from agents.storm.persona import PersonaPlan, find_personas
from agents.storm.pipeline import (
    OutlinePair,
    Progress,
    ReportOptions,
    ReportSummary,
    finish_article,
    make_outline,
    table_sources,
)
from agents.storm.records import Article, Conversation, ConversationLog, Persona
from cluster.runtime import cluster_info, connect, driver_node_id
from retrieval.config import StoreSettings
from retrieval.errors import RaystormError, StageFailed, UsageError
from retrieval.infotable import group_by_url, table_name

START_TIMEOUT_S = 300.0
RETRY_PAUSE_S = 2.0  # before a conversation starts again on a fresh writer


class ClusterPlan(BaseModel):
    """How a distributed run is laid out. None: sized from the cluster. Safe to print and to ship."""

    writer_actors: int | None = Field(None, ge=1, description="PersonaWriter actors (default: one per "
                                      "persona, at most the cluster's CPUs, at least 2)")
    expert_actors: int | None = Field(None, ge=1, description="Expert actors (default: the cluster's CPUs, "
                                      "at least 2)")
    corpus_actors: int | None = Field(None, ge=1, description="with a Qdrant server only (embedded: 1); "
                                      "default one per node")
    topics_in_flight: int | None = Field(None, ge=1, description="topics researched at once (default all)")
    llm_concurrency: int | None = Field(None, ge=1, description="requests in flight per endpoint, "
                                        "cluster-wide (default: the LLM settings' concurrency)")
    llm_requests_per_minute: float | None = Field(None, gt=0, description="per endpoint, cluster-wide")
    inject_latency_ms: float = Field(0.0, ge=0, description="benchmark knob: a wait per model call, "
                                     "standing in for a remote LLM")
    turn_timeout_s: float = Field(600.0, gt=0, description="one writer or expert turn")
    stage_timeout_s: float = Field(1800.0, gt=0, description="one stage call on an expert actor")
    conversation_attempts: int = Field(3, ge=1, description="tries of a conversation whose writer died")


class TopicsFailed(RaystormError):
    """Some topics failed; the others' reports are written (and listed in `summaries`)."""

    def __init__(self, failures: dict[str, BaseException], summaries: list[ReportSummary]):
        lines = "; ".join(f"'{t}': {e}" for t, e in failures.items())
        super().__init__(f"{len(failures)} of {len(failures) + len(summaries)} topics failed: {lines}")
        self.failures = failures
        self.summaries = summaries


def run_table_name(out_dir: str, topic: str) -> str:
    """The topic's table collection, named as `raystorm report` names it (topic and output folder)."""
    where = hashlib.sha256(str(Path(out_dir).expanduser().resolve()).encode()).hexdigest()[:8]
    return table_name(f"{topic_slug(topic)}-{where}")


def writer_name(persona: Persona) -> str:
    """The writer agent's name, as `agents.storm.conversation.run_conversation` gives it."""
    slug = "".join(ch if ch.isalnum() else "_" for ch in persona.name.lower())[:40] or "writer"
    return f"writer_{slug}"


class ResearchCluster:
    """The actors of one distributed run: gateway, corpus/table owner, writers, experts."""

    def __init__(self, store: StoreSettings, collection: str, llm: LLMSettings, plan: ClusterPlan,
                 personas_total: int, cache_dir: str | None = None, recipe: ModelRecipe | None = None):
        if cluster_info().client_mode and not store.qdrant_url:
            raise UsageError("over Ray Client (ray://) the actors cannot open this machine's embedded store: "
                             "use a Qdrant server (--qdrant-url), or submit the run as a job (`raystorm submit`) "
                             "so it runs where the data is")
        self.plan = plan
        cpus = cluster_cpus()
        recipe = recipe or ModelRecipe(llm=llm)
        recipe = recipe.model_copy(update={"llm": llm, "inject_latency_s": plan.inject_latency_ms / 1000.0,
                                           "gateway_cache": bool(cache_dir and llm.cache)})
        self.recipe = recipe
        driver = driver_node_id()
        default_limits = EndpointLimits(concurrency=plan.llm_concurrency or llm.concurrency,
                                        requests_per_minute=plan.llm_requests_per_minute)
        endpoints = {}
        if recipe.inject_latency_s and not plan.llm_concurrency:
            # a stand-in endpoint: as many in flight as the run asks for, unless limited explicitly
            endpoints[INJECTED_ENDPOINT] = EndpointLimits(concurrency=10_000)
        gateway_options = ActorOptions(max_restarts=3, pin_node=driver, max_concurrency=100_000)
        self.gateway = LLMGateway.options(**gateway_options.ray_options()).remote(
            GatewaySettings(default=default_limits, endpoints=endpoints, cache_dir=cache_dir))
        corpus_size = plan.corpus_actors or alive_nodes()
        self.corpus = CorpusPool(store, collection, size=corpus_size, pin_node=driver)
        keys = llm.api_key_env()  # the model actors' API keys, from this environment; never written down
        env = {"env_vars": keys} if keys else None
        self.writers = ActorPool.create(
            PersonaWriter, plan.writer_actors or min(max(personas_total, 1), max(cpus, 2)),
            ActorOptions(max_restarts=3, max_task_retries=0), label="PersonaWriter",
            args=(recipe, self.gateway), runtime_env=env, pass_label=True)
        self.experts = ActorPool.create(
            ExpertActor, plan.expert_actors or max(cpus, 2), ActorOptions(max_restarts=3, max_task_retries=3),
            label="Expert", args=(recipe, self.gateway, self.corpus.retriever(), self.corpus.pool),
            runtime_env=env, pass_label=True)
        self._slot = 0
        self._writer_of: dict[tuple[str, str], tuple[int, str]] = {}  # (topic, persona) -> (writer actor, key)

    def note_writer(self, topic: str, persona: str, index: int, key: str) -> None:
        self._writer_of[(topic, persona)] = (index, key)

    def writer_for(self, topic: str, persona: str) -> tuple[ray.actor.ActorHandle, str]:
        """The actor hosting that persona's writer, and its key there (e.g. to interview it after the run)."""
        index, key = self._writer_of[(topic, persona)]
        return self.writers.handles[index], key

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> dict[str, list[str]]:
        """Wait for every actor; where each runs: node id -> actor names."""
        where: dict[str, list[str]] = {}
        gateway = get(self.gateway.ready.remote(), actor="LLMGateway", method="ready", stage="startup",
                      timeout_s=timeout_s)
        where.setdefault(gateway, []).append("LLMGateway")
        self.corpus.wait_ready(timeout_s)
        for pool in (self.corpus.pool, self.writers, self.experts):
            for i, node in enumerate(pool.wait_ready(timeout_s)):
                where.setdefault(node, []).append(pool.name(i))
        return where

    def next_writer_slot(self) -> int:
        slot = self._slot
        self._slot += 1
        return slot

    async def stage(self, stage: str, fn, topic: str, table: str | None, kwargs: dict):
        """The pipeline's stage function `fn(**kwargs)` on an expert actor (models, retriever, table filled in)."""
        return await self.experts.call("run_stage", fn, topic, table, kwargs, stage=stage,
                                       timeout_s=self.plan.stage_timeout_s, idempotent=True)

    def usage(self) -> UsageReport:
        return get(self.gateway.report.remote(), actor="LLMGateway", method="report", stage="usage",
                   timeout_s=60)

    def shutdown(self) -> None:
        for pool in (self.writers, self.experts):
            pool.kill()
        self.corpus.kill()
        ray.kill(self.gateway, no_restart=True)


# --- one topic ---------------------------------------------------------------------------------------


class _Topic:
    """One topic's run: the pipeline's stages and checkpoints, each stage on the cluster."""

    def __init__(self, topic: str, run: ResearchCluster, out_dir: str, options: ReportOptions,
                 progress: Progress | None):
        self.topic = topic
        self.run = run
        self.options = options
        self.progress = progress
        self.files = RunFiles(out_dir, topic)
        self.table_name = run_table_name(out_dir, topic)
        self.table = RemoteTable(run.corpus.pool, self.table_name)
        self.reused: list[str] = []

    def say(self, stage: str, detail: str) -> None:
        if self.progress:
            self.progress(self.topic, stage, detail)

    async def stage(self, name: str, make, write, read):
        if self.files.done(name):
            self.reused.append(name)
            self.say(name, "reused")
            return read()
        self.say(name, "started")
        try:
            value = await make()
        except RaystormError as exc:
            raise StageFailed(name, str(exc), self.topic) from exc
        write(value)
        return value

    async def personas(self) -> PersonaPlan:
        o = self.options
        return await self.run.stage("personas", find_personas, self.topic, None, dict(
            topic=self.topic, max_personas=o.personas, questions_per_persona=o.turns, exclude_urls=o.exclude_urls))

    async def conversation(self, persona: Persona) -> Conversation:
        """The persona's interview: its writer on a PersonaWriter actor, the expert on the pool."""
        run, o = self.run, self.options
        slot = run.next_writer_slot()
        key = f"{topic_slug(self.topic)}/{writer_name(persona)}"
        expert_card = AgentCard.of(ExpertAgent("expert", self.topic, None, None))
        spec = ExpertSpec(topic=self.topic, search_k=o.search_k, exclude_urls=o.exclude_urls)
        for attempt in range(run.plan.conversation_attempts):
            index = (slot + attempt) % len(run.writers)
            actor, label = run.writers.handles[index], run.writers.name(index)
            bound = dict(actor=label, stage="conversations", timeout_s=run.plan.turn_timeout_s)
            writer = expert = None
            try:
                # adding a writer is safe to repeat (it replaces the key): wait out a restarting actor
                card = await retrying(lambda: call(
                    actor.add_writer.remote(key, writer_name(persona), self.topic, persona, o.turns),
                    method="add_writer", **bound))
                run.note_writer(self.topic, persona.name, index, key)
                writer = RemoteChatAgent(card, actor, key, label=label, stage="conversations",
                                         timeout_s=run.plan.turn_timeout_s)
                expert = PooledChatAgent(expert_card, run.experts, spec, stage="conversations",
                                         timeout_s=run.plan.turn_timeout_s)
                return await converse(self.topic, persona, writer, expert, o.turns)
            except Exception as exc:
                typed = (writer and writer.last_error) or (expert and expert.last_error) or exc
                # the writer's actor died (or died and came back without its agents): a fresh writer
                # runs the conversation again; expert turns and searches are reissued where they are
                retry = attempt + 1 < run.plan.conversation_attempts
                if retry and isinstance(typed, (ActorUnavailable, AgentNotHosted)):
                    self.say("conversations", f"{persona.name}: {label} was lost, starting the conversation again")
                    await asyncio.sleep(RETRY_PAUSE_S * (attempt + 1))  # time for Ray to restart it
                    continue
                if typed is exc:
                    raise
                raise typed from exc
        raise AssertionError("unreachable")

    async def conversations(self, plan: PersonaPlan) -> ConversationLog:
        if not plan.relevant:
            return ConversationLog(conversations=[])
        done = 0

        async def one(persona: Persona) -> Conversation:
            nonlocal done
            conv = await self.conversation(persona)
            done += 1
            self.say("conversations", f"{done}/{len(plan.personas)} done ({persona.name}: {len(conv.dlg_turns)} turns)")
            return conv

        return ConversationLog(conversations=list(await asyncio.gather(*(one(p) for p in plan.personas))))

    async def article(self, outline) -> Article:
        done = 0

        async def one(i: int):
            nonlocal done
            draft = await self.run.stage("article", write_section, self.topic, self.table_name, dict(
                topic=self.topic, outline=outline, index=i, k=self.options.section_k))
            done += 1
            self.say("article", f"{done}/{len(outline.sections)} sections ({draft.heading})")
            return draft

        drafts = await asyncio.gather(*(one(i) for i in range(len(outline.sections))))
        return assemble(self.topic, list(drafts))

    async def report(self) -> ReportSummary:
        """The pipeline's `_run`, stage for stage."""
        files, topic, o = self.files, self.topic, self.options
        plan = await self.stage("personas", self.personas, files.write_personas, files.read_personas)
        self.say("personas", ", ".join(p.name for p in plan.personas) if plan.relevant
                 else "nothing about the topic found")

        def write_log(log: ConversationLog) -> None:
            files.write_conversations(log, group_by_url(table_sources(log)))

        log = await self.stage("conversations", lambda: self.conversations(plan), write_log, files.read_conversations)
        sources = table_sources(log)
        try:
            added = await self.table.add(sources)
            info = await self.table.url_to_info()
        except RaystormError as exc:
            raise StageFailed("information table", str(exc), topic) from exc
        self.say("information table", f"{len(info)} sources, {len(sources)} snippets ({added} new)")

        snippets = [s for e in info.values() for s in e.snippets]
        outlines = await self.stage(
            "outline", lambda: self.run.stage("outline", make_outline, topic, None,
                                              dict(topic=topic, log=log, snippets=snippets)),
            lambda pair: files.write_outlines(pair.draft, pair.refined),
            lambda: OutlinePair(draft=files.read_outlines()[0], refined=files.read_outlines()[1]))
        self.say("outline", f"{len(outlines.refined.sections)} sections: "
                            + ", ".join(s.heading for s in outlines.refined.sections))

        article = await self.stage("article", lambda: self.article(outlines.refined),
                                   lambda a: files.write_article(a, info), files.read_article)

        def write_final(final: Article) -> None:
            if final.sections:
                report = report_markdown(final)
            else:
                queries = [q for c in log.conversations for t in c.dlg_turns for q in t.search_queries]
                report = nothing_found_markdown(topic, o.where, queries or [topic])
            files.write_polished(final, info, report)

        final = await self.stage("polish", lambda: self.run.stage("polish", finish_article, topic, self.table_name,
                                                                  dict(article=article, options=o)),
                                 write_final, files.read_polished)
        return ReportSummary(
            topic=topic, directory=str(files.dir), report=str(files.path("report.md")), relevant=plan.relevant,
            personas=len(plan.personas), turns=log.turns, sources=len(info), sections=len(final.sections),
            citations=len(cited_indices(final)), reused=self.reused)


async def report_topic(topic: str, run: ResearchCluster, out_dir: str, options: ReportOptions | None = None,
                       progress: Progress | None = None, config: BaseModel | None = None) -> ReportSummary:
    """One topic into `out_dir/<topic_slug>/`, as `run_report` does it, on the cluster `run`.

    `config`: written as run_config.json (no secrets)."""
    options = options or ReportOptions()
    if not topic.strip():
        raise RaystormError("the topic is empty")
    started = time.monotonic()
    job = _Topic(topic, run, out_dir, options, progress)
    job.files.dir.mkdir(parents=True, exist_ok=True)
    if config is not None:
        job.files.write_config(config)
    if options.force:
        for stage in STAGES:
            job.files.clear(stage)
    # the table is rebuilt from the conversation log, so it holds exactly this run's sources
    await job.table.drop()
    try:
        summary = await job.report()
        await job.table.drop()
    finally:
        ledger = await _ledger(run, job)
        job.files.write_history(ledger.to_jsonl(), append=bool(job.reused))
    totals = ledger.summary().total
    summary.prompt_tokens, summary.completion_tokens = totals.prompt_tokens, totals.completion_tokens
    summary.seconds = time.monotonic() - started
    return summary


async def _ledger(run: ResearchCluster, job: _Topic) -> UsageLedger:
    """The topic's calls, from the gateway; empty (and said so) if the gateway cannot answer, so
    that a failing gateway never hides the error that ended the topic."""
    try:
        return await call(run.gateway.ledger.remote(job.topic), actor="LLMGateway", method="ledger",
                          stage="llm_call_history", timeout_s=60)
    except RaystormError as exc:
        job.say("llm_call_history", f"not written: {exc}")
        return UsageLedger()


# --- many topics -------------------------------------------------------------------------------------


ConfigFor = Callable[[str], BaseModel]  # topic -> what its run_config.json records


async def report_topics(topics: Sequence[str], run: ResearchCluster, out_dir: str,
                        options: ReportOptions | None = None, progress: Progress | None = None,
                        config_for: ConfigFor | None = None) -> list[ReportSummary]:
    """Every topic at once (at most `plan.topics_in_flight`); a failed topic does not stop the others."""
    limit = asyncio.Semaphore(run.plan.topics_in_flight or max(len(topics), 1))

    async def one(topic: str) -> ReportSummary:
        async with limit:
            return await report_topic(topic, run, out_dir, options, progress,
                                      config_for(topic) if config_for else None)

    results = await asyncio.gather(*(one(t) for t in topics), return_exceptions=True)
    failures = {t: r for t, r in zip(topics, results) if isinstance(r, BaseException)}
    summaries = [r for r in results if not isinstance(r, BaseException)]
    for error in failures.values():
        if not isinstance(error, Exception):  # KeyboardInterrupt, cancellation: not a topic's failure
            raise error
    if failures:
        raise TopicsFailed(failures, summaries)
    return summaries


def run_reports_distributed(topics: Sequence[str], *, store: StoreSettings, collection: str, out_dir: str,
                            llm: LLMSettings | None = None, options: ReportOptions | None = None,
                            progress: Progress | None = None, config_for: ConfigFor | None = None,
                            plan: ClusterPlan | None = None, address: str | None = None,
                            cache_dir: str | None = None, recipe: ModelRecipe | None = None
                            ) -> list[ReportSummary]:
    """Research and write every topic's report on Ray (joining `address`, else a local Ray).

    The same results and files as calling `run_report` for each topic, one after
    another, as `raystorm report` does. `config_for(topic)`: that topic's
    run_config.json. `cache_dir`: the completion cache (on the driver's node).
    `recipe`: how actors build their models beyond `llm`; by default the extractive
    toolkit embeds with the store's dense model, as `raystorm report` does.
    Raises `TopicsFailed` (with the finished topics' summaries) if any topic failed.
    """
    topics = list(dict.fromkeys(t.strip() for t in topics if t.strip()))
    if not topics:
        raise RaystormError("no topics: give at least one non-empty topic")
    options = options or ReportOptions()
    plan = plan or ClusterPlan()
    llm = llm or LLMSettings()
    out_dir = str(Path(out_dir).expanduser().resolve())
    recipe = recipe or ModelRecipe.for_store(store)
    connect(address)
    run = ResearchCluster(store, collection, llm, plan, personas_total=len(topics) * (options.personas + 1),
                          cache_dir=cache_dir, recipe=recipe)
    try:
        placement = run.wait_ready()
        if progress:
            nodes = "; ".join(f"{node[:8]}: {', '.join(names)}" for node, names in sorted(placement.items()))
            for topic in topics:
                progress(topic, "cluster", f"{len(run.writers)} writers and {len(run.experts)} experts "
                                           f"on {len(placement)} node(s): {nodes}")
        return asyncio.run(report_topics(topics, run, out_dir, options, progress, config_for))
    finally:
        run.shutdown()
