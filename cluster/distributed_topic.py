"""One topic's report on the cluster: the pipeline's stages and checkpoints, each stage on the actors.

`report_topic` is `agents.storm.pipeline.run_report`, stage for stage (the same
`RunFiles` checkpoints, the same progress, the same summary), with the work
placed on a `ResearchCluster`: the stage functions on the expert pool, each
conversation as the pipeline's own `converse` team between a `RemoteChatAgent`
(the persona's writer, on a PersonaWriter actor) and a `PooledChatAgent` (the
expert), the table on the Corpus actors. A conversation whose writer is lost
starts again on a fresh writer.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path

from pydantic import BaseModel

from actors.calls import ActorUnavailable, call, retrying
from actors.chat_proxy import AgentCard, AgentNotHosted, PooledChatAgent, RemoteChatAgent
from actors.expert import ExpertSpec
from actors.table import RemoteTable
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
from cluster.distributed_actors import ResearchCluster
from retrieval.errors import RaystormError, StageFailed
from retrieval.infotable import group_by_url, table_name

RETRY_PAUSE_S = 2.0  # before a conversation starts again on a fresh writer


def run_table_name(out_dir: str, topic: str) -> str:
    """The topic's table collection, named as `raystorm report` names it (topic and output folder)."""
    where = hashlib.sha256(str(Path(out_dir).expanduser().resolve()).encode()).hexdigest()[:8]
    return table_name(f"{topic_slug(topic)}-{where}")


def writer_name(persona: Persona) -> str:
    """The writer agent's name, as `agents.storm.conversation.run_conversation` gives it."""
    slug = "".join(ch if ch.isalnum() else "_" for ch in persona.name.lower())[:40] or "writer"
    return f"writer_{slug}"


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
