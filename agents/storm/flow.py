"""A STORM report's stage order, written once: `run_topic(topic, runtime, out_dir, ...)`.

1. personas       `plan_personas`       → PersonaPlan
2. conversations  `runtime.converse`    → ConversationLog (all personas at once), then `survey_topic`
                  (one search for the topic itself); every search result goes into the information
                  table, idempotently
3. outline        `make_outline`        → OutlinePair (draft from the topic, refined from the research;
                  the draft, `make_draft`, is made while the conversations run)
4. article        `write_one_section`   → Article (sections at once, one citation index);
                  with `writer="react"`: `agents.report.flow.react_article` (the report agent,
                  one section after another, each checkpointed)
5. polish         `finish_article`      → Article (lead, optional de-duplication) + report.md

The runtime decides where each stage runs (`agents.runtime.LocalRuntime`: here;
`cluster.ray_runtime.RayRuntime`: on actors). The flow owns what does not depend
on that: checkpoints, progress events, the topic's table and its usage history.

A stage's checkpoint is its files plus a fingerprint of what it was made from
(`agents.storm.checkpoints`): a rerun reuses a stage only while that still holds.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from agents.lm.settings import LLMSettings
from agents.lm.usage import CURRENT_TOPIC, UsageLedger
from agents.runtime import ConversationSpec, Runtime
from agents.stage import StageArgs
from agents.storm.article import assemble, cited_indices
from agents.storm.artifacts import RunFiles, nothing_found_markdown, report_markdown, topic_slug
from agents.storm.options import ReportOptions, ReportSummary  # noqa: F401  (re-exported)
from agents.storm.checkpoints import Checkpoints, StageFailed, fingerprint, models_key
from agents.report.flow import react_article
from agents.storm.persona import PersonaPlan
from agents.storm.records import Article, Conversation, ConversationLog, Outline, Persona, SearchResult
from agents.storm.stages import (
    FinishArgs,
    OutlineArgs,
    OutlinePair,
    PersonasArgs,
    SectionArgs,
    SurveyArgs,
    finish_article,
    make_draft,
    make_outline,
    plan_personas,
    survey_topic,
    table_sources,
    write_one_section,
)
from retrieval.errors import RaystormError
from retrieval.infotable import table_name
from retrieval.snippets import Snippet, group_by_url

T = TypeVar("T")
INFO_TABLE = "information table"  # not a checkpointed stage: rebuilt from the conversation log every run


class ProgressEvent(BaseModel):
    """One thing that happened in a topic's run, for the CLI (and `ray job logs`) to show as a line."""

    topic: str
    stage: str = Field(description="one of STAGES, INFO_TABLE, or another named step (e.g. 'cluster')")
    kind: Literal["started", "reused", "progress", "done", "note"]
    detail: str = ""
    done: int | None = None
    total: int | None = None

    def text(self) -> str:
        if self.kind == "progress":
            return f"{self.done}/{self.total} {self.detail}".rstrip()
        return self.detail or self.kind

    def line(self) -> str:
        return f"[{self.topic}] {self.stage}: {self.text()}"


Progress = Callable[[ProgressEvent], None]


def outline_fingerprint(research: str, o: ReportOptions) -> str:
    """The outline's checkpoint: the research's, and the outline knobs when the run names its own (a run
    with the defaults keeps the fingerprint it had before the knobs could be named)."""
    return fingerprint(research, "outline", *([o.outline.model_dump(mode="json")] if o.outline else []))


def run_table_name(out_dir: str, topic: str) -> str:
    """The topic's information table: one per topic and output folder."""
    where = hashlib.sha256(str(Path(out_dir).expanduser().resolve()).encode()).hexdigest()[:8]
    return table_name(f"{topic_slug(topic)}-{where}")


async def run_topic(topic: str, runtime: Runtime, out_dir: str, options: ReportOptions | None = None, *,
                    progress: Progress | None = None, config: BaseModel | None = None,
                    llm: LLMSettings | None = None) -> ReportSummary:
    """Research and write one report into `out_dir/<topic_slug>/`, reusing what still holds.

    `config`: written as run_config.json (must hold no secrets). `llm`: the settings the
    runtime's models were built from (None: the extractive model), for the checkpoints.
    """
    options = options or ReportOptions()
    if not topic.strip():
        raise RaystormError("the topic is empty")
    started = time.monotonic()
    scope = CURRENT_TOPIC.set(topic)  # this task's model calls are this topic's
    try:
        summary = await _run_topic(topic, runtime, str(Path(out_dir).expanduser().resolve()), options,
                                   progress, config, llm)
    finally:
        CURRENT_TOPIC.reset(scope)
    summary.seconds = time.monotonic() - started
    return summary


async def _run_topic(topic: str, runtime: Runtime, out_dir: str, options: ReportOptions,
                     progress: Progress | None, config: BaseModel | None, llm: LLMSettings | None) -> ReportSummary:
    files = RunFiles(out_dir, topic)
    files.dir.mkdir(parents=True, exist_ok=True)
    if config is not None:
        files.write_config(config)

    def say(stage: str, kind: str, detail: str = "", done: int | None = None, total: int | None = None) -> None:
        if progress:
            if kind not in ("started", "reused", "progress", "done"):
                kind, detail = "note", kind  # say(stage, "some words")
            progress(ProgressEvent(topic=topic, stage=stage, kind=kind, detail=detail, done=done, total=total))

    name = run_table_name(out_dir, topic)
    table = runtime.table(name)
    before = await _usage(runtime, topic, say)
    points = Checkpoints(files, say, options.force)
    try:
        await table.drop()  # rebuilt from the conversation log, so it holds exactly this run's sources
        summary = await _stages(topic, runtime, files, points, options, say, name,
                                root=fingerprint(topic, await runtime.corpus_version(), models_key(llm)))
        await table.drop()
    finally:
        ledger = await _usage(runtime, topic, say)
        known = {r.call_id for r in before.records}
        mine = UsageLedger(records=[r for r in ledger.records if r.call_id not in known])
        files.write_history(mine.to_jsonl(), append=bool(points.reused))
        runtime.release_table(name)
    totals = mine.summary().total
    summary.prompt_tokens, summary.completion_tokens = totals.prompt_tokens, totals.completion_tokens
    summary.fell_back = mine.fallback_summary()
    return summary


async def _stages(topic: str, runtime: Runtime, files: RunFiles, points: Checkpoints, options: ReportOptions,
                  say: Callable[..., None], table: str, root: str) -> ReportSummary:
    o = options
    print_ = fingerprint(root, "personas", o.personas, o.turns, o.exclude_urls)
    plan: PersonaPlan = await points.stage(
        "personas", print_,
        lambda: runtime.stage("personas", plan_personas, PersonasArgs(
            topic=topic, max_personas=o.personas, questions_per_persona=o.turns, exclude_urls=o.exclude_urls)),
        files.write_personas, files.read_personas)
    say("personas", "done", ", ".join(p.name for p in plan.personas) if plan.relevant
        else "nothing about the topic found")

    spec = ConversationSpec(turns=o.turns, search_k=o.search_k, exclude_urls=o.exclude_urls)

    async def conversations() -> ConversationLog:
        if not plan.relevant:
            return ConversationLog(conversations=[])
        finished = 0

        async def one(persona: Persona) -> Conversation:
            nonlocal finished
            conv = await runtime.converse(topic, persona, spec, lambda text: say("conversations", text))
            finished += 1
            say("conversations", "progress", f"done ({persona.name}: {len(conv.dlg_turns)} turns)",
                finished, len(plan.personas))
            return conv

        async def survey() -> list[SearchResult]:
            if not o.survey_k:
                return []
            found = await runtime.stage("conversations", survey_topic, SurveyArgs(
                topic=topic, k=o.survey_k, exclude_urls=o.exclude_urls))
            say("conversations", f"survey: {len(found)} passages found by the topic itself")
            return found

        *held, found = await asyncio.gather(*(one(p) for p in plan.personas), survey())
        return ConversationLog(conversations=held, survey=found)

    print_ = fingerprint(print_, "conversations", spec.model_dump(), o.survey_k)
    # STORM drafts its outline from the topic alone, so that call runs while the personas converse
    # (one model call off every report's critical path); unless both stages' files still hold
    outline_print = outline_fingerprint(print_, o)
    draft = None
    if plan.relevant and not (points.holds("conversations", print_) and points.holds("outline", outline_print)):
        draft = asyncio.ensure_future(runtime.stage("outline", make_draft, StageArgs(topic=topic)))
    try:
        return await _research_and_write(topic, runtime, files, points, o, say, table, plan, print_,
                                         conversations, draft)
    finally:
        if draft is not None:
            draft.cancel()  # a no-op once it is done; else the topic failed before its outline
            await asyncio.gather(draft, return_exceptions=True)


async def _research_and_write(topic: str, runtime: Runtime, files: RunFiles, points: Checkpoints,
                              o: ReportOptions, say: Callable[..., None], table: str, plan: PersonaPlan,
                              print_: str, conversations: Callable[[], Awaitable[ConversationLog]],
                              draft: Awaitable[Outline] | None) -> ReportSummary:
    written: list[list[Snippet]] = []  # the table's sources, when the stage was run (not reused) just now

    def write(log: ConversationLog) -> None:
        written.append(table_sources(log))
        files.write_conversations(log, group_by_url(written[0]))

    log = await points.stage("conversations", print_, conversations, write, files.read_conversations)
    sources = written[0] if written else table_sources(log)  # (every search result as a snippet: made once)
    searched = len(sources)
    try:
        added = await runtime.table(table).add(sources)
        # the table has the search results now: many topics are in flight at once, so each keeps only what
        # its later stages read (`info` below; the react writer's personas also quote their results)
        del sources
        if o.writer == "storm":
            log = log.dialogue_only()
        info = await runtime.table(table).url_to_info()
    except RaystormError as exc:
        raise StageFailed(INFO_TABLE, str(exc), topic) from exc
    say(INFO_TABLE, "done", f"{len(info)} sources, {searched} snippets ({added} new)")

    snippets = [s for e in info.values() for s in e.snippets]
    print_ = outline_fingerprint(print_, o)

    async def outline() -> OutlinePair:
        return await runtime.stage("outline", make_outline, OutlineArgs(
            topic=topic, log=log, snippets=snippets, draft=await draft if draft is not None else None,
            params=o.outline, exclude_urls=o.exclude_urls))

    outlines: OutlinePair = await points.stage(
        "outline", print_, outline,
        lambda pair: files.write_outlines(pair.draft, pair.refined),
        lambda: OutlinePair(draft=files.read_outlines()[0], refined=files.read_outlines()[1]))
    sections = outlines.refined.sections
    say("outline", "done", f"{len(sections)} sections: " + ", ".join(s.heading for s in sections))

    async def article() -> Article:
        finished = 0

        async def one(i: int):
            nonlocal finished
            draft = await runtime.stage("article", write_one_section, SectionArgs(
                topic=topic, outline=outlines.refined, index=i, k=o.section_k), table=table)
            finished += 1
            say("article", "progress", f"sections ({draft.heading})", finished, len(sections))
            return draft

        return assemble(topic, list(await asyncio.gather(*(one(i) for i in range(len(sections))))))

    print_ = fingerprint(print_, "article", o.section_k, o.writer, o.react_min_calls, o.react_max_calls)
    make = article if o.writer == "storm" else functools.partial(
        react_article, topic, runtime, files, outlines.refined, log, o, say, print_)
    written = await points.stage("article", print_, make, lambda a: files.write_article(a, info),
                                 files.read_article)

    def write_final(final: Article) -> None:
        if final.sections:
            report = report_markdown(final)
        else:
            queries = [q for c in log.conversations for t in c.dlg_turns for q in t.search_queries]
            report = nothing_found_markdown(topic, o.where, queries or [topic])
        files.write_polished(final, info, report)

    print_ = fingerprint(print_, "polish", o.polish, "rule in force stated")  # a run before that stage redoes it
    final = await points.stage(
        "polish", print_,
        lambda: runtime.stage("polish", finish_article, FinishArgs(topic=topic, article=written, polish=o.polish),
                              table=table),
        write_final, files.read_polished)
    return ReportSummary(
        topic=topic, directory=str(files.dir), report=str(files.path("report.md")), relevant=plan.relevant,
        personas=len(plan.personas), turns=log.turns, sources=len(info), sections=len(final.sections),
        citations=len(cited_indices(final)), reused=points.reused)


async def _usage(runtime: Runtime, topic: str, say: Callable[..., None]) -> UsageLedger:
    """The topic's calls so far; empty (and said so) if they cannot be had, so that failing
    accounting never hides the error that ended the topic."""
    try:
        return await runtime.usage(topic)
    except RaystormError as exc:
        say("llm_call_history", f"not written: {exc}")
        return UsageLedger()
