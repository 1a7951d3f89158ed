"""The report agent as a stage of the report flow: one section per call, on any runtime.

`agents.storm.flow` calls `react_section` for each section in outline order (each
section sees the headings written before it) and checkpoints each result as
`section_NN.json`, so a rerun resumes at the first unfinished section.
"""

from __future__ import annotations

from pydantic import Field

from agents.lm.nlp import TextToolkit
from agents.report.agent import write_react_section
from agents.report.memory import PersonaMemory
from agents.report.records import ReactSection
from agents.report.steps import PlanInput, PlanOutput, PlanSections
from agents.report.tools import ToolContext
from agents.stage import StageArgs, StageContext
from agents.storm.records import Outline
from agents.storm.steps_article import SectionDigest
from agents.storm.steps_outline import QuestionAnswer


class ReactArgs(StageArgs):
    outline: Outline
    index: int = Field(ge=0)
    earlier: list[str] = Field(default_factory=list, description="headings of the sections already written")
    earlier_text: list[SectionDigest] = Field(default_factory=list, description="those sections as written")
    description: str = Field("", description="what the plan says the section covers")
    memories: list[PersonaMemory] = Field(default_factory=list, description="the run's personas")
    min_calls: int = Field(2, ge=1)
    max_calls: int = Field(5, ge=1)


async def react_section(args: ReactArgs, ctx: StageContext) -> ReactSection:
    # lexical similarity for choosing personas: the same in every process, with or without embeddings
    tools = ToolContext(topic=args.topic, models=ctx.models, retriever=ctx.retriever, nlp=TextToolkit(),
                        memories=args.memories, ask_many=ctx.ask_many)
    return await write_react_section(tools, args.outline, args.index, args.earlier, args.min_calls, args.max_calls,
                                     description=args.description, earlier_text=args.earlier_text)


class PlanArgs(StageArgs):
    outline: Outline
    research: list[QuestionAnswer] = Field(default_factory=list)


async def plan_report(args: PlanArgs, ctx: StageContext) -> PlanOutput:
    """The report's plan: a description of each section of the outline (MiroFish plans its report so)."""
    return await ctx.models.run(PlanSections, PlanInput(topic=args.topic, outline=args.outline,
                                                        research=args.research))
