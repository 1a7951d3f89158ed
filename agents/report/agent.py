"""The ReACT loop of one section: think → tool call → observe, then write from what the tools returned.

    for each call (at least `min_calls`, at most `max_calls`):
        decision = models.run(ChooseTool, what the agent has seen so far)   # think
        result   = run_tool(ctx, decision.call)                              # act: a real execution
        observations.append(result)                                           # observe
    text = models.run(WriteReactSection, every observation and passage)     # write, with [n]

A decision is a structured call (tool name + arguments), never free text: an observation
only ever comes from `run_tool`, so a model that writes its own "tool result" into its
thought gets it logged as a thought and nothing else. A section that is empty, is tool-call
JSON, or cites nothing is rejected and written once more (after one more tool call when nothing
fitted); then the section fails by name (`SectionFailed`).
"""

from __future__ import annotations

import json
import re
from typing import Literal

from autogen_core.models import SystemMessage, UserMessage
from pydantic import BaseModel, Field

from agents.lm.grounding import cited_numbers
from agents.lm.nlp import TextToolkit
from agents.lm.steps import ToolStep
from agents.lm.text.instructions import as_data
from agents.lm.tool_calls import history
from agents.lm.usage import CURRENT_SECTION, CURRENT_TOOL
from agents.report.records import TOOL_NAMES, LogEntry, ReactSection, ToolCall, ToolName, ToolResult
from agents.report.steps import OBSERVATION_TOKENS, ReactWriteInput, WriteReactSection, within_budget
from agents.report.tools import DESCRIPTIONS, TOOLS, ToolContext, run_tool
from agents.storm.article import SectionDraft, numbered, tidy_section_text
from agents.storm.citations import keep_valid
from agents.storm.records import Outline
from agents.storm.steps_article import SectionDigest
from retrieval.errors import RaystormError
from retrieval.snippets import Snippet


class Observation(BaseModel):
    call_id: str
    tool: ToolName
    arguments: dict
    digest: str


class ChooseInput(BaseModel):
    topic: str
    heading: str
    subsections: list[str] = Field(default_factory=list)
    description: str = Field("", description="what the plan says the section covers")
    earlier_sections: list[str] = Field(default_factory=list, description="headings already written")
    tools: list[str]
    observations: list[Observation] = Field(default_factory=list)
    can_interview: bool
    min_calls: int
    max_calls: int


class ChooseOutput(BaseModel):
    thought: str = Field(description="one or two sentences: what is still missing for this section")
    action: Literal["quick_search", "insight_forge", "panorama_search", "interview_agents", "write"]
    arguments: dict = Field(default_factory=dict, description="the tool's arguments, e.g. {\"query\": \"...\"}")


class ChosenCall(ChooseOutput):
    """A decision made by a native function call: the id the model gave the call."""

    call_id: str


class WriteArgs(BaseModel):
    """No arguments: the section is written from what the tools returned."""


WRITE = "write_section"


class ChooseTool(ToolStep[ChooseInput, ChooseOutput]):
    name = "report.react.choose"
    role = "react"
    Input = ChooseInput
    Output = ChooseOutput
    instructions = """\
You are writing one section of a research report. Decide the next step: call one tool to gather
evidence, or "write" once the observations cover everything the section must say. Call at least
min_calls tools and at most max_calls; use different tools, since each sees the evidence differently.

- insight_forge: the deepest. It breaks your query into sub-questions, answers each hop by hop from the
  documents and says how the documents involved relate (which replaced or amended which). Use it first
  for the section's core question, with a query that states what you need to know.
- panorama_search: the widest. A timeline of every document on the subject, each marked current,
  superseded or amended, with the passages. Use it wherever rules, figures or facts may have changed
  over time, so the section says what holds now and what held before.
- quick_search: fast and narrow. The passages matching a few keywords. Use it to check one fact, a
  name or a date, or to fill a gap the other tools left.
- interview_agents (only when can_interview): the run's researchers, each from their own perspective,
  answer questions from what they found. Use it for viewpoints, disputes and what a reader should not
  miss.

Never write a tool's result yourself: only the tool's real output is observed."""

    @classmethod
    def tools(cls, inp: ChooseInput) -> dict[str, tuple[str, type[BaseModel]]]:
        offered = {t: (DESCRIPTIONS[t], TOOLS[t][0]) for t in TOOL_NAMES
                   if t != "interview_agents" or inp.can_interview}
        offered[WRITE] = ("Write the section now, from what the tools returned (call it once the "
                          "observations cover the section).", WriteArgs)
        return offered

    @classmethod
    def render_messages(cls, inp: ChooseInput) -> list:
        task = (f"Topic: {inp.topic}\nSection to write: {inp.heading}"
                + (f" (subsections: {'; '.join(inp.subsections)})" if inp.subsections else "")
                + (f"\nWhat it covers: {inp.description}" if inp.description else "")
                + (f"\nSections already written: {'; '.join(inp.earlier_sections)}" if inp.earlier_sections else "")
                + f"\nCall at least {inp.min_calls} and at most {inp.max_calls} tools before {WRITE}.")
        return [SystemMessage(content=cls.instructions), UserMessage(content=task, source="user"),
                *history([(o.call_id, o.tool, o.arguments, o.digest) for o in inp.observations]),
                UserMessage(content=progress_line(inp), source="user")]

    @classmethod
    def from_call(cls, inp: ChooseInput, tool: str, arguments: dict, call_id: str, thought: str) -> ChosenCall:
        return ChosenCall(thought=thought, action="write" if tool == WRITE else tool, arguments=arguments,
                          call_id=call_id)

    @classmethod
    def extract(cls, inp: ChooseInput, nlp: TextToolkit) -> ChooseOutput:
        """The deterministic planner: search the section, read its history, hear the personas."""
        done = len(inp.observations)
        query = f"{inp.topic} {inp.heading}"
        plan: list[tuple[str, dict, str]] = [
            ("quick_search", {"query": query, "k": 6}, f"Find the passages about {inp.heading}."),
            ("panorama_search", {"query": query}, "Check which of them still hold and what replaced the others."),
        ]
        plan.append(("insight_forge", {"query": query}, "Break the section into sub-questions and answer "
                                                         "each hop by hop."))
        if inp.can_interview:
            plan.append(("interview_agents", {"topic": query, "max_agents": 2},
                         "Hear what the researchers found on this section."))
        plan = plan[:max(inp.min_calls, min(len(plan), inp.max_calls))]
        if done < len(plan):
            action, args, thought = plan[done]
            return ChooseOutput(thought=thought, action=action, arguments=args)
        return ChooseOutput(thought="The observations cover the section.", action="write")


def progress_line(inp: ChooseInput) -> str:
    """Where the agent stands: calls made, and the tools it has not used yet for this section."""
    offered = [t for t in TOOL_NAMES if t != "interview_agents" or inp.can_interview]
    unused = [t for t in offered if t not in {o.tool for o in inp.observations}]
    return (f"Tool calls so far: {len(inp.observations)} (at least {inp.min_calls}, at most {inp.max_calls}). "
            f"Not used yet for this section: {', '.join(unused) or 'none (every tool was used)'}.")


def observation_text(result: ToolResult) -> str:
    """What a tool returned, whole: its digest, then the passages it found that the digest does not quote
    (each marked current or superseded), fenced as data."""
    extra = [f"- {f.title} ({f.path.rsplit('/', 1)[-1]}, lines {f.line_start}-{f.line_end}): {' '.join(f.text.split())}"
             for f in result.facts if " ".join(f.text.split()) not in result.digest]
    body = result.digest + (f"\nPassages:\n" + "\n".join(extra) if extra else "")
    return as_data(body)


def _is_tool_json(text: str) -> bool:
    body = text.strip().strip("`").strip()
    if body.startswith("json"):
        body = body[4:].strip()
    if not body.startswith(("{", "[")):
        return False
    try:
        value = json.loads(body)
    except ValueError:
        return bool(re.search(r'"(tool|action|arguments|function)"\s*:', body))
    return isinstance(value, (dict, list))


EMPTY = "the section is empty"
NOTHING_TO_CITE = "no tool returned anything to cite"


def section_problem(text: str, sources: int) -> str | None:
    """Why a written section cannot be used, or None."""
    if not text.strip():
        return EMPTY
    if _is_tool_json(text):
        return "the section is tool-call JSON, not prose"
    if not any(1 <= n <= sources for n in cited_numbers(text)):
        return "the section cites none of its sources"
    return None


class SectionFailed(RaystormError):
    def __init__(self, heading: str, problem: str):
        super().__init__(f"section '{heading}' could not be written: {problem} (twice)")
        self.heading = heading
        self.problem = problem


async def write_react_section(ctx: ToolContext, outline: Outline, index: int, earlier: list[str],
                              min_calls: int = 2, max_calls: int = 5, *, description: str = "",
                              earlier_text: list[SectionDigest] | None = None) -> ReactSection:
    """Section `index` of `outline`, researched with the tools; see the module docstring. `earlier`: the
    headings written before; `earlier_text`: those sections as written (the writer reads them);
    `description`: what the plan says the section covers."""
    scope = CURRENT_SECTION.set(index)  # the model calls made meanwhile are this section's
    try:
        return await _research_and_write(ctx, outline, index, earlier, min_calls, max_calls, description,
                                         list(earlier_text or []))
    finally:
        CURRENT_SECTION.reset(scope)


async def _research_and_write(ctx: ToolContext, outline: Outline, index: int, earlier: list[str],
                              min_calls: int, max_calls: int, description: str,
                              earlier_text: list[SectionDigest]) -> ReactSection:
    section = outline.sections[index]
    log: list[LogEntry] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []

    async def act(tool: ToolName, arguments: dict, thought: str, call_id: str | None = None) -> None:
        # the model's id for a native call (its result goes back under it); else the agent's own
        call = ToolCall(call_id=call_id or f"s{index:02d}-c{len(calls) + 1}", tool=tool, arguments=arguments,
                        thought=thought)
        log.append(LogEntry(kind="tool_call", section=index, call_id=call.call_id,
                            data={"tool": call.tool, "arguments": call.arguments}))
        scope = CURRENT_TOOL.set(call.tool)
        try:
            result = await run_tool(ctx, call)
        finally:
            CURRENT_TOOL.reset(scope)
        log.append(LogEntry(kind="tool_result", section=index, call_id=call.call_id,
                            data={"tool": result.tool, "digest": result.digest, "facts": len(result.facts),
                                  "error": result.error, **result.details}))
        calls.append(call)
        results.append(result)

    query = f"{ctx.topic} {section.heading}"
    while len(calls) < max_calls:
        decision = await ctx.models.run(ChooseTool, ChooseInput(
            topic=ctx.topic, heading=section.heading, subsections=section.subsections, description=description,
            earlier_sections=earlier, tools=[DESCRIPTIONS[t] for t in TOOL_NAMES], can_interview=bool(ctx.memories),
            min_calls=min_calls, max_calls=max_calls,
            observations=[Observation(call_id=c.call_id, tool=c.tool, arguments=c.arguments, digest=d)
                          for c, d in zip(calls, within_budget([observation_text(r) for r in results],
                                                               OBSERVATION_TOKENS, "observations"))]))
        log.append(LogEntry(kind="thought", section=index, data={"thought": decision.thought,
                                                                 "action": decision.action}))
        if decision.action == "write":
            if len(calls) >= min_calls:
                break
            # too early: the loop's floor is the agent's, not the model's, to decide
            decision = ChooseOutput(thought="", action="quick_search" if not calls else "panorama_search",
                                    arguments={"query": query})
        await act(decision.action, decision.arguments, decision.thought,
                  decision.call_id if isinstance(decision, ChosenCall) else None)

    others = [s.heading for j, s in enumerate(outline.sections) if j != index]
    for attempt in range(2):
        facts = _merged([f for r in results for f in r.facts])
        observed = [f"{c.tool}({json.dumps(c.arguments, ensure_ascii=False)}):\n{observation_text(r)}"
                    for c, r in zip(calls, results)]
        draft, problem, raw = await _draft(ctx, ReactWriteInput(
            topic=ctx.topic, heading=section.heading, description=description, subsections=section.subsections,
            other_headings=others, earlier=earlier_text, observations=observed, sources=numbered(facts)), facts)
        if problem is None:
            log.append(LogEntry(kind="section", section=index, data={
                "heading": draft.heading, "chars": len(draft.text), "sources": len(draft.sources)}))
            return ReactSection(index=index, draft=draft, calls=calls, results=results, log=log)
        log.append(LogEntry(kind="rejected", section=index, data={"problem": problem, "text": raw[:400]}))
        if attempt == 0 and problem in (EMPTY, NOTHING_TO_CITE) and len(calls) < max_calls:
            # nothing written fits yet: widen the evidence before the second try
            await act("insight_forge", {"query": query}, "Nothing written fits the section yet: break it into "
                                                         "sub-questions and look again.")
    log.append(LogEntry(kind="error", section=index, data={"problem": problem}))
    raise SectionFailed(section.heading, problem)


def _merged(facts: list[Snippet]) -> list[Snippet]:
    seen: set[str] = set()
    out = []
    for f in facts:
        if f.passage_id not in seen:
            seen.add(f.passage_id)
            out.append(f)
    return out


async def _draft(ctx: ToolContext, inp: ReactWriteInput, facts: list[Snippet]
                 ) -> tuple[SectionDraft | None, str | None, str]:
    """The section written from every observation and passage: (draft, None, raw text), or (None,
    problem, raw text)."""
    if not facts:
        return None, NOTHING_TO_CITE, ""
    out = await ctx.models.run(WriteReactSection, inp)
    problem = section_problem(out.text, len(facts))
    if problem is None:
        text = keep_valid(tidy_section_text(out.text, inp.heading), len(facts))
        problem = section_problem(text, len(facts))
        if problem is None:
            return SectionDraft(heading=inp.heading, text=text, sources=facts), None, out.text
    return None, problem, out.text
