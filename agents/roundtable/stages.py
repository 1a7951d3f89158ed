"""The roundtable's stage functions: each turn's work, with its typed arguments, run where the runtime says
(`runtime.stage(...)`: this process, or an expert actor of the cluster, which supplies models and retriever)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from agents.lm.steps import I, LanguageModel, O, Step
from agents.lm.text.tokens import content_tokens
from agents.roundtable.records import Utterance
from agents.roundtable.steps import (MODERATOR_CANDIDATES, AskFromUnused, ChooseExperts, ConceptInput,
                                     ExpertAnswer, ExpertAnswerInput, ExpertQueries, ExpertQueriesInput,
                                     ExpertsInput, ModeratorInput, RaiseInput, RaiseQuestion, WriteConcept)
from agents.roundtable.steps_mindmap import NodeView, PlaceInput, PlaceOutput, PlaceSnippet, SplitConcept, \
    SplitInput, SplitOutput
from agents.roundtable.steps_user import ConceptView, SimulatedUser, UserInput
from agents.stage import StageArgs, StageContext
from agents.storm.current_facts import state_current
from agents.storm.citations import cited_numbers, cut_unfinished, keep_valid
from agents.storm.persona import find_personas
from agents.storm.records import Article, Persona
from agents.storm.steps_research import NOTHING_FOUND, NumberedSource
from retrieval.query import Retriever, SearchAsk, search_each
from retrieval.snippets import Snippet

MAX_QUERIES = 3


def numbered(snippets: list[Snippet]) -> list[NumberedSource]:
    return [NumberedSource(n=i, title=s.title, section=" > ".join(s.heading_path), text=s.text)
            for i, s in enumerate(snippets, start=1)]


class AsRole:
    """A model that runs every step on one role's model: STORM's persona step, run for the roundtable's
    moderator (`--role-llm moderator=...` picks the model of the warm start's perspectives too)."""

    def __init__(self, models: LanguageModel, role: str):
        self.models, self.role = models, role
        self.name = getattr(models, "name", role)

    async def run(self, step: type[Step[I, O]], inp: I) -> O:
        for_role = getattr(self.models, "for_role", None)
        return await (for_role(self.role) if for_role else self.models).run(step, inp)


# --- warm start -------------------------------------------------------------------------------------


class WarmStartArgs(StageArgs):
    max_experts: int = Field(ge=1)


async def first_experts(args: WarmStartArgs, ctx: StageContext) -> list[Persona]:
    """The first experts: STORM's perspectives on the topic (the basic fact writer first)."""
    plan = await find_personas(args.topic, AsRole(ctx.models, "moderator"), ctx.retriever,
                               max_personas=max(0, args.max_experts - 1))
    return plan.personas[: args.max_experts]


# --- an expert's turn -------------------------------------------------------------------------------


class ExpertTurnArgs(StageArgs):
    expert: Persona
    focus: str = Field("", description="the question to answer; '' lets the expert raise its own")
    discussion: list[str] = Field(default_factory=list)
    asked: list[str] = Field(default_factory=list)
    search_k: int = Field(ge=1)


async def expert_turn(args: ExpertTurnArgs, ctx: StageContext) -> Utterance:
    """The expert answers the focus (or a question of its own): queries, one search each, a cited answer."""
    focus = args.focus.strip()
    if not focus:
        raised = await ctx.models.run(RaiseQuestion, RaiseInput(topic=args.topic, expert=args.expert,
                                                                discussion=args.discussion, asked=args.asked))
        focus = " ".join(raised.question.split()) or args.topic
    planned = await ctx.models.run(ExpertQueries, ExpertQueriesInput(
        topic=args.topic, question=focus, max_queries=MAX_QUERIES, discussion=args.discussion))
    queries = list(dict.fromkeys(" ".join(q.split()) for q in planned.queries if q.strip()))[:MAX_QUERIES] or [focus]
    found = await search_each(ctx.retriever, [SearchAsk(q, args.search_k, None) for q in queries])
    sources: list[Snippet] = []
    for hits in found:
        for hit in hits:
            if all(s.passage_id != hit.passage.passage_id for s in sources):
                sources.append(Snippet.from_passage(hit.passage))
    speaker = args.expert.name
    if not sources:
        return Utterance(role="expert", speaker=speaker, text=NOTHING_FOUND, focus=focus, queries=queries)
    out = await ctx.models.run(ExpertAnswer, ExpertAnswerInput(
        topic=args.topic, question=focus, sources=numbered(sources), expert=args.expert, discussion=args.discussion))
    text = keep_valid(cut_unfinished(out.answer.strip()), len(sources)).strip() or NOTHING_FOUND
    return Utterance(role="expert", speaker=speaker, text=text, focus=focus, queries=queries, sources=sources,
                     cited=sorted(cited_numbers(text)))


# --- the moderator ----------------------------------------------------------------------------------


MODERATOR = "Moderator"


class ModeratorArgs(StageArgs):
    discussion: list[str] = Field(default_factory=list)
    unused: list[Snippet] = Field(description="the unused-information pool, best candidates first")


async def moderator_turn(args: ModeratorArgs, ctx: StageContext) -> Utterance:
    """A question grounded in unused passages; the utterance cites them."""
    pool = args.unused[:MODERATOR_CANDIDATES]
    out = await ctx.models.run(AskFromUnused, ModeratorInput(topic=args.topic, discussion=args.discussion,
                                                             unused=numbered(pool)))
    grounded = [n for n in dict.fromkeys(out.grounded_in) if 1 <= n <= len(pool)]
    sources = [pool[n - 1] for n in grounded]
    question = " ".join(out.question.split())
    text = question + "".join(f"[{i}]" for i in range(1, len(sources) + 1))
    return Utterance(role="moderator", speaker=MODERATOR, text=text, focus=question, sources=sources,
                     cited=list(range(1, len(sources) + 1)))


class ExpertsArgs(StageArgs):
    focus: str
    experts: list[Persona]
    max_experts: int = Field(ge=1)


async def choose_experts(args: ExpertsArgs, ctx: StageContext) -> list[Persona]:
    """The table for a new focus: the expert to answer it first (a new one when nobody fits)."""
    out = await ctx.models.run(ChooseExperts, ExpertsInput(topic=args.topic, focus=args.focus, experts=args.experts,
                                                           max_experts=args.max_experts))
    return out.experts[: args.max_experts] or args.experts


# --- the simulated user (--observe) -----------------------------------------------------------------


class UserArgs(StageArgs):
    discussion: list[str] = Field(default_factory=list)
    concepts: list[ConceptView] = Field(default_factory=list)
    cited: list[Snippet] = Field(default_factory=list, description="the passages the last expert cited")
    asked: list[str] = Field(default_factory=list, description="what the simulated user asked before")


async def simulated_user(args: UserArgs, ctx: StageContext) -> str:
    """What the simulated user says: one question grounded in the discussion and the mind map."""
    out = await ctx.models.run(SimulatedUser, UserInput(topic=args.topic, discussion=args.discussion,
                                                        concepts=args.concepts, cited=numbered(args.cited),
                                                        asked=args.asked))
    return " ".join(out.message.split())


# --- the mind map and the report --------------------------------------------------------------------


class PlaceArgs(StageArgs):
    nodes: list[NodeView]
    snippet: Snippet


async def place_snippet(args: PlaceArgs, ctx: StageContext) -> PlaceOutput:
    return await ctx.models.run(PlaceSnippet, PlaceInput(topic=args.topic, nodes=args.nodes,
                                                         snippet=numbered([args.snippet])[0]))


class SplitArgs(StageArgs):
    path: list[str]
    snippets: list[Snippet]


async def split_concept(args: SplitArgs, ctx: StageContext) -> SplitOutput:
    return await ctx.models.run(SplitConcept, SplitInput(topic=args.topic, path=args.path,
                                                         snippets=numbered(args.snippets)))


class ConceptArgs(StageArgs):
    path: list[str]
    snippets: list[Snippet]


async def write_concept(args: ConceptArgs, ctx: StageContext) -> str:
    """A concept's paragraph, `[n]` pointing into `args.snippets`."""
    out = await ctx.models.run(WriteConcept, ConceptInput(topic=args.topic, path=args.path,
                                                          sources=numbered(args.snippets)))
    return keep_valid(cut_unfinished(out.text.strip()), len(args.snippets)).strip()


class CurrentArgs(StageArgs):
    article: Article
    pool: list[Snippet] = Field(default_factory=list, description="the session's snippets: the map's and the "
                                                                   "unused pool's")


class SessionSnippets:
    """What the current-facts pass searches for a superseded rule's replacement: the session's own snippets
    first (by the words they share with the query), then the collection (or the web) the experts search."""

    def __init__(self, pool: list[Snippet], retriever: Retriever | None):
        self.pool, self.retriever = pool, retriever

    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]:
        words = {t for q in queries for t in content_tokens(q)}
        ranked = sorted(self.pool, key=lambda s: -len(words & set(content_tokens(s.text))))
        found = ranked[:k]
        if self.retriever is not None:
            hits = await search_each(self.retriever, [SearchAsk(query=q, k=k) for q in queries])
            found += [Snippet.from_passage(h.passage) for group in hits for h in group]
        return found


async def current_first(args: CurrentArgs, ctx: StageContext) -> Article:
    """The report with the rule in force stated before each superseded one it gives (as a STORM report's)."""
    return await state_current(args.article, SessionSnippets(args.pool, ctx.retriever))
