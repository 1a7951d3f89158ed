"""The report agent's four tools: typed arguments, a real execution, a `ToolResult`.

- `quick_search(query, k)`: hybrid search over the collection.
- `insight_forge(query)`: 3–5 sub-questions (the model's), each answered by Chain-of-RAG at once; the evidence
  merged without repeats, with the relations between the documents involved.
- `panorama_search(query)`: everything on the subject, what no longer holds included: a timeline of
  the documents, each current, superseded or amended (from the evidence graph's status on search
  hits; without a graph, from the dates the documents state).
- `interview_agents(topic, max_agents)`: the run's most relevant personas, 3 questions each (the model's),
  answered in character from their own evidence, with a short synthesis.

Each is a plain async function of a `ToolContext` (tests call them directly); `ToolBox.run`
validates a `ToolCall`'s arguments against the tool's model and executes it, so an observation
only ever comes from a real execution.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from agents.lm.nlp import TextToolkit
from agents.lm.steps import LanguageModel
from agents.multihop.chain import ChainOfRAG, ChainSettings
from agents.multihop.trace import AgentAnswer
from agents.report.memory import PersonaMemory, interview
from agents.report.records import ToolCall, ToolName, ToolResult
from agents.report.steps import (
    EvidencePlace,
    InterviewQuestions,
    InterviewQuestionsInput,
    SubQuestions,
    SubQuestionsInput,
)
from agents.storm.steps_research import NOTHING_FOUND
from retrieval.query import Retriever, SearchHit
from retrieval.snippets import Snippet

_DATE = re.compile(r"\b(?:Effective|Issued|Dated?|Edition)\s*:?\**\s*:?\s*\**\s*([A-Z][a-z]+ \d{1,2}, \d{4}|\d{4}-\d{2}-\d{2})")
# insight_forge's Chain-of-RAG: two hops of four passages per sub-question
FORGE_CHAIN = ChainSettings(max_iter=2, k=4)
# answers sub-questions elsewhere (the Ray runtime: on Hopper actors, in parallel)
AskMany = Callable[[list[str], ChainSettings], Awaitable[list[AgentAnswer]]]


@dataclass
class ToolContext:
    topic: str
    models: LanguageModel
    retriever: Retriever
    nlp: TextToolkit
    memories: list[PersonaMemory] = field(default_factory=list)
    ask_many: AskMany | None = None  # None: Chain-of-RAG in this process

    async def chain_of_rag(self, questions: list[str]) -> list[AgentAnswer]:
        if self.ask_many is not None:
            return await self.ask_many(questions, FORGE_CHAIN)
        chain = ChainOfRAG(self.models, self.retriever, FORGE_CHAIN)
        return list(await asyncio.gather(*(chain.answer(q) for q in questions)))


def _facts(hits: list[SearchHit]) -> list[Snippet]:
    return [Snippet.from_passage(h.passage) for h in hits]


def _line(s: Snippet, status: str = "") -> str:
    text = " ".join(s.text.split())
    return f"- {s.title} ({s.path.rsplit('/', 1)[-1]}, lines {s.line_start}-{s.line_end}){status}: {text}"


class QuickSearchArgs(BaseModel):
    query: str = Field(min_length=1)
    k: int = Field(6, ge=1, le=20)


async def quick_search(ctx: ToolContext, args: QuickSearchArgs) -> ToolResult:
    hits = await ctx.retriever.search(args.query, k=args.k)
    facts = _facts(hits)
    return ToolResult(call_id="", tool="quick_search", facts=facts,
                      digest="\n".join(_line(s) for s in facts) or "nothing found")


class InsightForgeArgs(BaseModel):
    query: str = Field(min_length=1)


async def sub_questions(ctx: ToolContext, query: str, hits: list[SearchHit], n: int = 4) -> list[str]:
    """3–5 sub-questions of `query`, the model's, shown where the evidence for it sits (document and
    heading); the extractive model asks the query, then one question per place."""
    places = [EvidencePlace(title=h.passage.title, heading=h.passage.heading_path[-1] if h.passage.heading_path
                            else "") for h in hits]
    out = await ctx.models.run(SubQuestions, SubQuestionsInput(topic=ctx.topic, query=query, places=places, n=n))
    return list(dict.fromkeys(q.strip() for q in out.questions if q.strip()))[:5]


async def insight_forge(ctx: ToolContext, args: InsightForgeArgs) -> ToolResult:
    hits = await ctx.retriever.search(args.query, k=8)
    questions = await sub_questions(ctx, args.query, hits)
    answers = await ctx.chain_of_rag(questions)
    facts: list[Snippet] = []
    seen: set[str] = set()
    for a in answers:
        for hop in a.hops:
            for p in hop.supporting_passages:
                if p.passage_id not in seen:
                    seen.add(p.passage_id)
                    facts.append(Snippet.from_passage(p))
    relations = sorted({f"{h.passage.title} —{h.status.state} by→ {', '.join(h.status.by_titles)}"
                        for h in hits if h.status is not None and h.status.state != "current"})
    digest = [f"Q: {q}\nA: {' '.join(a.answer.split())}" for q, a in zip(questions, answers)]
    return ToolResult(call_id="", tool="insight_forge", facts=facts,
                      digest="\n".join(digest + [f"relation: {r}" for r in relations]),
                      details={"sub_questions": questions, "answers": [a.answer for a in answers],
                               "relations": relations})


class PanoramaArgs(BaseModel):
    query: str = Field(min_length=1)


def stated_date(text: str) -> str | None:
    found = _DATE.search(text)
    return found.group(1) if found else None


async def panorama_search(ctx: ToolContext, args: PanoramaArgs) -> ToolResult:
    hits = await ctx.retriever.search(args.query, k=12)
    by_doc: dict[str, list[SearchHit]] = {}
    for h in hits:
        by_doc.setdefault(h.passage.doc_id, []).append(h)
    timeline = []
    for doc_hits in by_doc.values():
        first = doc_hits[0]
        status = first.status
        state = status.state if status is not None else "current"
        timeline.append({"document": first.passage.title, "path": first.passage.path,
                         "date": stated_date(" ".join(h.passage.text for h in doc_hits)) or "",
                         "state": state, "replaced_by": status.by_titles if status else [],
                         "effective": status.effective if status else None})
    timeline.sort(key=lambda t: (_sortable(t["date"]), t["document"]))
    current = [h for h in hits if h.status is None or h.status.state != "superseded"]
    history = [h for h in hits if h.status is not None and h.status.state == "superseded"]
    lines = [f"{t['date'] or 'undated'}: {t['document']} [{t['state']}"
             + (f" by {', '.join(t['replaced_by'])}" if t["replaced_by"] else "")
             + (f", effective {t['effective']}" if t["effective"] else "") + "]" for t in timeline]
    return ToolResult(call_id="", tool="panorama_search", facts=_facts(current + history),
                      digest="\n".join(lines) or "nothing found", details={"timeline": timeline})


def _sortable(date: str) -> str:
    from datetime import datetime

    for fmt in ("%B %d, %Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(date, fmt).strftime("%Y-%m-%d")
        except ValueError:
            pass
    return "9999"  # undated last


class InterviewArgs(BaseModel):
    topic: str = Field(min_length=1)
    max_agents: int = Field(3, ge=1, le=8)


def choose_personas(memories: list[PersonaMemory], topic: str, n: int, nlp: TextToolkit) -> list[PersonaMemory]:
    """The `n` personas whose research is closest to `topic` (each a different perspective)."""
    if not memories:
        return []
    scores = nlp.similarities(topic, [m.text() for m in memories])
    order = sorted(range(len(memories)), key=lambda i: (-round(float(scores[i]), 6), i))
    return [memories[i] for i in order[:n]]


async def interview_agents(ctx: ToolContext, args: InterviewArgs) -> ToolResult:
    chosen = choose_personas(ctx.memories, args.topic, args.max_agents, ctx.nlp)
    if not chosen:
        return ToolResult(call_id="", tool="interview_agents", digest="no personas to interview")
    asked = await ctx.models.run(InterviewQuestions, InterviewQuestionsInput(
        topic=args.topic, report_topic=ctx.topic, personas=[m.persona.perspective for m in chosen]))
    questions = list(dict.fromkeys(q.strip() for q in asked.questions if q.strip()))[:3]
    answers = await asyncio.gather(*(interview(m, ctx.topic, q, ctx.models) for m in chosen for q in questions))
    facts: list[Snippet] = []
    seen: set[str] = set()
    interviews = []
    for a in answers:
        interviews.append({"persona": a.persona, "question": a.question, "answer": a.answer,
                           "cited": [f"{s.path}#L{s.line_start}-L{s.line_end}" for s in a.cited()]})
        for s in a.cited():
            if s.passage_id not in seen:
                seen.add(s.passage_id)
                facts.append(s)
    answered = [a for a in answers if not a.answer.startswith(NOTHING_FOUND[:20])]
    synthesis = (f"{len(chosen)} personas interviewed ({', '.join(m.persona.name for m in chosen)}); "
                 f"{len(answered)} of {len(answers)} answers found evidence, citing {len(facts)} passages.")
    digest = [f"{a.persona} — {a.question}\n  {' '.join(a.answer.split())}" for a in answers]
    return ToolResult(call_id="", tool="interview_agents", facts=facts, digest="\n".join([synthesis, *digest]),
                      details={"interviews": interviews, "synthesis": synthesis})


Tool = Callable[[ToolContext, BaseModel], Awaitable[ToolResult]]
TOOLS: dict[ToolName, tuple[type[BaseModel], Tool]] = {
    "quick_search": (QuickSearchArgs, quick_search),
    "insight_forge": (InsightForgeArgs, insight_forge),
    "panorama_search": (PanoramaArgs, panorama_search),
    "interview_agents": (InterviewArgs, interview_agents),
}
DESCRIPTIONS: dict[ToolName, str] = {
    "quick_search": "quick_search(query, k=6): passages of the collection matching the query",
    "insight_forge": "insight_forge(query): sub-questions answered hop by hop, merged evidence, document relations",
    "panorama_search": "panorama_search(query): a timeline of the documents on the subject, current and superseded",
    "interview_agents": "interview_agents(topic, max_agents=3): the run's personas answer questions from their research",
}


async def run_tool(ctx: ToolContext, call: ToolCall) -> ToolResult:
    """Validate the call's arguments and execute the tool; a bad call comes back as an error result."""
    model, fn = TOOLS[call.tool]
    try:
        args = model.model_validate(call.arguments)
    except ValidationError as exc:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return ToolResult(call_id=call.call_id, tool=call.tool, digest=f"invalid arguments: {problem}",
                          error=problem)
    result = await fn(ctx, args)
    return result.model_copy(update={"call_id": call.call_id})
