"""A persona's memory, and answering in character from it.

A persona remembers who it is, its conversation with the expert, and the
evidence that conversation retrieved (each passage with its file and line range).
All of it is in the run's `conversation_log.json`, so a persona can be
interviewed in a fresh process long after the run, with no cluster and no store:
it answers only from what it gathered, never from nothing.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import LanguageModel, Step
from agents.storm.article import numbered
from agents.storm.persona import PersonaPlan
from agents.storm.records import Conversation, ConversationLog, Persona
from agents.storm.steps_research import (
    NOTHING_FOUND,
    AnswerInput,
    AnswerOutput,
    AnswerQuestion,
    NumberedSource,
    render_sources,
)
from retrieval.errors import RaystormError
from retrieval.saved import DamagedFile, load_json
from retrieval.snippets import Snippet


class PersonaMemory(BaseModel):
    """Who the persona is, what it asked and heard, and every passage it saw."""

    persona: Persona
    turns: list[tuple[str, str]] = Field(default_factory=list, description="(question, answer) in order")
    evidence: list[Snippet] = Field(default_factory=list, description="passages retrieved for it, no repeats")

    @classmethod
    def of(cls, conversation: Conversation) -> "PersonaMemory":
        seen: set[str] = set()
        evidence = []
        for turn in conversation.dlg_turns:
            for result in turn.search_results:
                snippet = result.to_snippet()
                if snippet.passage_id not in seen:
                    seen.add(snippet.passage_id)
                    evidence.append(snippet)
        return cls(persona=conversation.persona, evidence=evidence,
                   turns=[(t.user_utterance, t.agent_utterance) for t in conversation.dlg_turns])

    def text(self) -> str:
        """What the persona is about, for choosing whom to interview."""
        return " ".join([self.persona.perspective, *self.persona.focus, *(q for q, _ in self.turns)])


def memories_of(log: ConversationLog) -> list[PersonaMemory]:
    return [PersonaMemory.of(c) for c in log.conversations]


def load_memories(run_dir: str | Path) -> list[PersonaMemory]:
    """The personas of a finished run folder (`OUT/<topic_slug>/`)."""
    path = Path(run_dir).expanduser() / "conversation_log.json"
    if not path.is_file():
        raise RaystormError(f"{run_dir} holds no conversation_log.json: give a report's folder, "
                            "e.g. runs/<topic_slug>, after its conversations stage has finished")
    fix = "rerun the report (`raystorm report TOPIC --force`) to rebuild it"
    log = ConversationLog(conversations=load_json(path, list[Conversation], fix))
    if not log.conversations:
        planned = Path(run_dir).expanduser() / "personas.json"
        plan = load_json(planned, PersonaPlan, fix) if planned.is_file() else None
        if plan is not None and plan.relevant and plan.personas:  # they converse whenever the topic is covered
            raise DamagedFile(path, f"lists no conversations, though personas.json has {len(plan.personas)} "
                                    "personas for a topic the corpus covers: it was emptied or replaced", fix)
        raise RaystormError(f"{run_dir}: the run found nothing about its topic, so it has no personas to interview")
    return memories_of(log)


class InterviewInput(BaseModel):
    topic: str
    persona: Persona
    earlier: list[str] = Field(default_factory=list, description="what this persona asked the expert")
    dialogue: list[str] = Field(default_factory=list, description="this interview so far: 'Q: ...' / 'A: ...'")
    question: str
    sources: list[NumberedSource] = Field(description="the passages this persona gathered")


class InterviewOutput(BaseModel):
    answer: str = Field(description="the answer in the persona's voice, each sentence followed by its [n]")


class PersonaAnswer(Step[InterviewInput, InterviewOutput]):
    name = "report.interview.answer"
    role = "interview"
    Input = InterviewInput
    Output = InterviewOutput
    instructions = f"""\
You are the persona described below, being interviewed about a topic you researched. Answer in your own
voice, from your perspective, and only from the numbered passages you gathered: put the number of the
passage after every sentence, like [2]. At most five sentences. If your passages do not answer the
question, say only: "{NOTHING_FOUND}" """

    @classmethod
    def render_input(cls, inp: InterviewInput) -> str:
        asked = "; ".join(inp.earlier) or "(nothing)"
        so_far = "\n".join(inp.dialogue) or "(this is the first question)"
        return (f"Topic: {inp.topic}\nYou are: {inp.persona.perspective}\nYou asked the expert: {asked}\n"
                f"This interview so far:\n{so_far}\nQuestion to you: {inp.question}\n\n"
                f"Your passages:\n{render_sources(inp.sources)}")

    # An interview answer is an expert answer in another voice: the same check (cite a source, or
    # say nothing was found) and, offline, the same sentence selection over this persona's own
    # evidence only (its perspective is what it asked about, and so what it found).
    @classmethod
    def check(cls, inp: InterviewInput, out: InterviewOutput) -> str | None:
        return AnswerQuestion.check(_as_expert(inp), AnswerOutput(answer=out.answer))

    @classmethod
    def extract(cls, inp: InterviewInput, nlp: TextToolkit) -> InterviewOutput:
        return InterviewOutput(answer=AnswerQuestion.extract(_as_expert(inp), nlp).answer)


def _as_expert(inp: InterviewInput) -> AnswerInput:
    return AnswerInput(topic=inp.topic, question=inp.question, sources=inp.sources)


class InterviewAnswer(BaseModel):
    persona: str
    question: str
    answer: str = Field(description="with [n] pointing into `sources`")
    sources: list[Snippet]

    def cited(self) -> list[Snippet]:
        import re

        numbers = sorted({int(n) for n in re.findall(r"\[(\d+)\]", self.answer)})
        return [self.sources[n - 1] for n in numbers if 0 < n <= len(self.sources)]


async def interview(memory: PersonaMemory, topic: str, question: str, models: LanguageModel,
                    dialogue: list[str] | None = None) -> InterviewAnswer:
    """`memory`'s persona answers `question` in character, citing the passages it gathered;
    `dialogue`: the interview's earlier turns ("Q: ...", "A: ...")."""
    if not question.strip():
        raise RaystormError("the question is empty")
    sources = list(memory.evidence)
    out = await models.run(PersonaAnswer, InterviewInput(
        topic=topic, persona=memory.persona, earlier=[q for q, _ in memory.turns], dialogue=list(dialogue or []),
        question=question,
        sources=numbered(sources)))
    return InterviewAnswer(persona=memory.persona.name, question=question, answer=out.answer.strip(),
                           sources=sources)
