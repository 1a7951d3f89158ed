"""The stage functions of a STORM report, each `async def fn(args, ctx) -> output`.

Each takes its arguments as one `StageArgs` model and gets the models, the
retriever and the table from the runtime's `StageContext`, so the same function
runs in this process (`LocalRuntime`) or on an expert actor (`RayRuntime`). The
order they run in, and their checkpoints, are `agents.storm.flow.run_topic`'s.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from agents.stage import StageArgs, StageContext
from agents.storm.article import SectionDraft, polish, write_lead, write_section
from agents.storm.current_facts import state_current
from agents.storm.outline import draft_outline, refine_outline
from agents.storm.outline_params import OutlineParams
from agents.storm.persona import PersonaPlan, find_personas
from agents.storm.records import Article, ConversationLog, Outline, SearchResult
from retrieval.query import SearchAsk, SearchFilter, search_each
from retrieval.snippets import Snippet


class PersonasArgs(StageArgs):
    max_personas: int = Field(ge=0)
    questions_per_persona: int = Field(ge=1)
    exclude_urls: list[str] = Field(default_factory=list)


async def plan_personas(args: PersonasArgs, ctx: StageContext) -> PersonaPlan:
    return await find_personas(args.topic, ctx.models, ctx.retriever, max_personas=args.max_personas,
                               questions_per_persona=args.questions_per_persona, exclude_urls=args.exclude_urls)


class SurveyArgs(StageArgs):
    k: int = Field(ge=1, description="passages")
    exclude_urls: list[str] = Field(default_factory=list)


async def survey_topic(args: SurveyArgs, ctx: StageContext) -> list[SearchResult]:
    """One search for the topic itself: the passages most about it, whatever the personas asked. The
    conversations read a part of the sources (55% of a FreshWiki corpus's documents; with 40 passages
    of survey, 84%); the extractive outline counts how much of the evidence each section would hold,
    and a wider read counts better (`scripts/calibrate/cv_outline.py`: held-out heading match recall 0.313 ->
    0.344, precision 0.489 -> 0.508)."""
    flt = SearchFilter(exclude_urls=args.exclude_urls) if args.exclude_urls else None
    hits = await ctx.retriever.search(args.topic, k=args.k, flt=flt)
    return [SearchResult.from_snippet(Snippet.from_passage(h.passage)) for h in hits]


class OutlineArgs(StageArgs):
    log: ConversationLog
    snippets: list[Snippet]
    draft: Outline | None = Field(None, description="the draft outline, if made already (`make_draft`)")
    params: OutlineParams | None = Field(None, description="the extractive outline's knobs (None: the defaults)")
    exclude_urls: list[str] = Field(default_factory=list, description="sources the reading beside the research "
                                                                      "leaves out, as the research did")


class OutlinePair(BaseModel):
    draft: Outline
    refined: Outline


async def make_draft(args: StageArgs, ctx: StageContext) -> Outline:
    """STORM's draft outline, from the topic alone (so it may be made while the research runs)."""
    return await draft_outline(args.topic, ctx.models)


# passages read beside the research for the outline: the topic's best (a wide read; a FreshWiki
# corpus's conversations reach about half its documents) and each draft heading's
OUTLINE_READ_TOPIC_K = 64
OUTLINE_READ_HEADING_K = 8


async def make_outline(args: OutlineArgs, ctx: StageContext) -> OutlinePair:
    """STORM's two outlines: a draft from the topic alone (unless given), refined from the research and,
    for a chat model, from the corpus's best passages for the topic and each of the draft's headings
    (the research's conversations read only part of the sources)."""
    draft = args.draft if args.draft is not None else await draft_outline(args.topic, ctx.models)
    flt = SearchFilter(exclude_urls=args.exclude_urls) if args.exclude_urls else None
    found = await search_each(ctx.retriever, [SearchAsk(args.topic, OUTLINE_READ_TOPIC_K, flt), *(
        SearchAsk(f"{args.topic} {h}", OUTLINE_READ_HEADING_K, flt) for h in draft.headings())])
    reading = [Snippet.from_passage(h.passage) for hits in found for h in hits]
    return OutlinePair(draft=draft, refined=await refine_outline(args.topic, draft, args.log, args.snippets,
                                                                 ctx.models, args.params, reading=reading))


class SectionArgs(StageArgs):
    outline: Outline
    index: int = Field(ge=0, description="which first-level section of the outline")
    k: int = Field(ge=1, description="snippets the section is written from")


async def write_one_section(args: SectionArgs, ctx: StageContext) -> SectionDraft:
    return await write_section(args.topic, args.outline, args.index, ctx.need_table("article"), ctx.models,
                               args.k)


class FinishArgs(StageArgs):
    article: Article
    polish: bool = Field(description="remove sentences that repeat earlier sections")


async def finish_article(args: FinishArgs, ctx: StageContext) -> Article:
    """The lead and (optionally) the de-duplication pass, at once: the lead is written from the
    sections as drafted, and the pass leaves the lead and the citations as they are."""
    table = ctx.need_table("polish")
    lead = write_lead(args.article, table, ctx.models)
    if not args.polish:
        return await state_current(await lead, table)
    with_lead, polished = await asyncio.gather(lead, polish(args.article, ctx.models))
    # after the polish: the rule in force is stated where the history is, even if a section above says it too
    return await state_current(with_lead.model_copy(update={"sections": polished.sections}), table)


def table_sources(log: ConversationLog) -> list[Snippet]:
    """What goes into the information table: every search result of every turn, as in STORM (the
    section writers judge what fits; a turn the expert could not answer still searched the right place),
    then the survey's (`survey_topic`)."""
    return [r.to_snippet() for c in log.conversations for t in c.dlg_turns for r in t.search_results] + [
        r.to_snippet() for r in log.survey]
