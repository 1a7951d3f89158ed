"""The STORM pipeline in one process: `run_report(topic, ...)`.

Stages, each a function with typed inputs and outputs (so a distributed
orchestrator can call the same functions from actors), each checkpointed by its
artifact files:

1. personas       `find_personas`        → PersonaPlan
2. conversations  `run_conversations`    → ConversationLog (all personas at once)
   (then every answer's sources go into the information table, idempotently)
3. outline        `make_outline`         → OutlinePair (draft from the topic, refined from the research)
4. article        `write_article`        → Article (sections at once, one citation index)
5. polish         `finish_article`       → Article (lead, optional de-duplication) + report.md
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable, Protocol, Sequence

from pydantic import BaseModel, Field

from agents.lm.steps import LanguageModel
from agents.storm.article import SECTION_SNIPPETS, SnippetSearch, assemble, cited_indices, polish, write_lead, write_sections
from agents.storm.artifacts import STAGES, RunFiles, nothing_found_markdown, report_markdown
from agents.storm.conversation import run_conversation
from agents.storm.outline import draft_outline, refine_outline
from agents.storm.persona import PersonaPlan, find_personas
from agents.lm.usage import UsageLedger
from agents.storm.records import Article, Conversation, ConversationLog, Outline
from retrieval.errors import RaystormError, StageFailed
from retrieval.query import Retriever
from retrieval.snippets import InfoEntry, Snippet, group_by_url

Progress = Callable[[str, str, str], None]  # (topic, stage, detail)


class ReportOptions(BaseModel):
    """How one report is researched and written. Safe to print and to ship to actors."""

    personas: int = Field(3, ge=0, description="personas besides the basic fact writer")
    turns: int = Field(3, ge=1, description="questions per conversation")
    search_k: int = Field(8, ge=1, description="passages per search query")
    section_k: int = Field(SECTION_SNIPPETS, ge=1, description="snippets a section is written from")
    exclude_urls: list[str] = Field(default_factory=list, description="never retrieved (e.g. the ground truth)")
    polish: bool = Field(True, description="remove repeated sentences after writing")
    force: bool = Field(False, description="redo every stage, even those whose artifacts exist")
    where: str = Field("the corpus", description="what was searched, for the nothing-found report")


class TableStore(SnippetSearch, Protocol):
    """The run's information table as the pipeline uses it (local, or an actor proxy)."""

    async def add(self, snippets: Sequence[Snippet]) -> int: ...

    async def url_to_info(self) -> dict[str, InfoEntry]: ...


class OutlinePair(BaseModel):
    draft: Outline
    refined: Outline


class ReportSummary(BaseModel):
    topic: str
    directory: str
    report: str
    relevant: bool
    personas: int
    turns: int
    sources: int
    sections: int
    citations: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    reused: list[str] = Field(default_factory=list, description="stages whose artifacts were reused")

    def line(self) -> str:
        return (f"{self.personas} personas, {self.turns} turns, {self.sources} sources, {self.sections} sections, "
                f"{self.citations} citations, {self.prompt_tokens + self.completion_tokens} tokens, "
                f"{self.seconds:.1f} s")


# --- the stages ----------------------------------------------------------------------------------


async def run_conversations(topic: str, plan: PersonaPlan, models: LanguageModel, retriever: Retriever,
                            options: ReportOptions, progress: Progress | None = None) -> ConversationLog:
    """One conversation per persona, all at once; the log keeps the personas' order."""
    done = 0
    total = len(plan.personas)

    async def one(persona) -> Conversation:
        nonlocal done
        conv = await run_conversation(topic, persona, models, retriever, max_turns=options.turns,
                                      search_k=options.search_k, exclude_urls=options.exclude_urls)
        done += 1
        if progress:
            progress(topic, "conversations", f"{done}/{total} done ({persona.name}: {len(conv.dlg_turns)} turns)")
        return conv

    return ConversationLog(conversations=list(await asyncio.gather(*(one(p) for p in plan.personas))))


def table_sources(log: ConversationLog) -> list[Snippet]:
    """What goes into the information table: every search result of every turn, as in STORM (the
    section writers judge what fits; a turn the expert could not answer still searched the right place)."""
    return [r.to_snippet() for c in log.conversations for t in c.dlg_turns for r in t.search_results]


async def make_outline(topic: str, log: ConversationLog, snippets: Sequence[Snippet],
                       models: LanguageModel) -> OutlinePair:
    draft = await draft_outline(topic, models)
    return OutlinePair(draft=draft, refined=await refine_outline(topic, draft, log, snippets, models))


async def write_article(topic: str, outline: Outline, table: SnippetSearch, models: LanguageModel,
                        options: ReportOptions, progress: Progress | None = None) -> Article:
    done = 0

    def on_done(draft) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(topic, "article", f"{done}/{len(outline.sections)} sections ({draft.heading})")

    drafts = await write_sections(topic, outline, table, models, options.section_k, on_done)
    return assemble(topic, drafts)


async def finish_article(article: Article, table: SnippetSearch, models: LanguageModel,
                         options: ReportOptions) -> Article:
    with_lead = await write_lead(article, table, models)
    return await polish(with_lead, models) if options.polish else with_lead


# --- the orchestrator ------------------------------------------------------------------------------


async def run_report(topic: str, *, retriever: Retriever, table: TableStore, models: LanguageModel,
                     out_dir: str, options: ReportOptions | None = None, progress: Progress | None = None,
                     config: BaseModel | None = None, ledger: UsageLedger | None = None) -> ReportSummary:
    """Research and write one report into `out_dir/<topic_slug>/`, reusing finished stages.

    `config`: written as run_config.json (must hold no secrets). `ledger`: where the models
    record their calls; this topic's calls go to llm_call_history.jsonl, done or failed.
    """
    options = options or ReportOptions()
    if not topic.strip():
        raise RaystormError("the topic is empty")
    started = time.monotonic()
    files = RunFiles(out_dir, topic)
    files.dir.mkdir(parents=True, exist_ok=True)
    if config is not None:
        files.write_config(config)
    if options.force:
        for stage in STAGES:
            files.clear(stage)
    reused: list[str] = []
    first_call = len(ledger.records) if ledger is not None else 0
    try:
        summary = await _run(topic, files, retriever, table, models, options, progress, reused)
    finally:
        if ledger is not None:
            mine = UsageLedger(records=ledger.records[first_call:])
            files.write_history(mine.to_jsonl(), append=bool(reused))
    if ledger is not None:
        totals = UsageLedger(records=ledger.records[first_call:]).summary().total
        summary.prompt_tokens, summary.completion_tokens = totals.prompt_tokens, totals.completion_tokens
    summary.seconds = time.monotonic() - started
    return summary


async def _run(topic: str, files: RunFiles, retriever: Retriever, table: TableStore, models: LanguageModel,
               options: ReportOptions, progress: Progress | None, reused: list[str]) -> ReportSummary:

    def say(stage: str, detail: str) -> None:
        if progress:
            progress(topic, stage, detail)

    async def stage(name: str, make, write, read):
        if files.done(name):
            reused.append(name)
            say(name, "reused")
            return read()
        say(name, "started")
        try:
            value = await make()
        except RaystormError as exc:
            raise StageFailed(name, str(exc), topic) from exc
        write(value)
        return value

    plan = await stage("personas",
                       lambda: find_personas(topic, models, retriever, max_personas=options.personas,
                                             questions_per_persona=options.turns, exclude_urls=options.exclude_urls),
                       files.write_personas, files.read_personas)
    say("personas", ", ".join(p.name for p in plan.personas) if plan.relevant else "nothing about the topic found")

    async def converse() -> ConversationLog:
        if not plan.relevant:
            return ConversationLog(conversations=[])
        return await run_conversations(topic, plan, models, retriever, options, progress)

    def write_log(log: ConversationLog) -> None:
        files.write_conversations(log, group_by_url(table_sources(log)))

    log = await stage("conversations", converse, write_log, files.read_conversations)
    sources = table_sources(log)
    try:
        added = await table.add(sources)
        info = await table.url_to_info()
    except RaystormError as exc:
        raise StageFailed("information table", str(exc), topic) from exc
    say("information table", f"{len(info)} sources, {len(sources)} snippets ({added} new)")

    outlines = await stage("outline", lambda: make_outline(topic, log, [s for e in info.values() for s in e.snippets],
                                                           models),
                           lambda o: files.write_outlines(o.draft, o.refined),
                           lambda: OutlinePair(draft=files.read_outlines()[0], refined=files.read_outlines()[1]))
    say("outline", f"{len(outlines.refined.sections)} sections: "
                   + ", ".join(s.heading for s in outlines.refined.sections))

    article = await stage("article", lambda: write_article(topic, outlines.refined, table, models, options, progress),
                          lambda a: files.write_article(a, info), files.read_article)

    async def finish() -> Article:
        return await finish_article(article, table, models, options)

    def write_final(final: Article) -> None:
        if final.sections:
            report = report_markdown(final)
        else:
            queries = [q for c in log.conversations for t in c.dlg_turns for q in t.search_queries]
            report = nothing_found_markdown(topic, options.where, queries or [topic])
        files.write_polished(final, info, report)

    final = await stage("polish", finish, write_final, files.read_polished)
    return ReportSummary(
        topic=topic, directory=str(files.dir), report=str(files.path("report.md")), relevant=plan.relevant,
        personas=len(plan.personas), turns=log.turns, sources=len(info), sections=len(final.sections),
        citations=len(cited_indices(final)), reused=reused)
