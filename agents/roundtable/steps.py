"""The roundtable's typed steps, one role each (`ROUNDTABLE_ROLES`): the expert's question, queries and answer,
the moderator's question from unused information and its choice of experts, and the report's concept sections.
The mind map's steps are in `agents.roundtable.steps_mindmap`. Each has an extractive twin.

The expert's queries and answer are STORM's (`PlanQueries`, `AnswerQuestion`) with the discussion so far added:
Co-STORM's experts answer in the conversation's context, not a lone question.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from agents.lm.grounding import citation_problem
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.storm.evidence import similarity, stands_alone
from agents.storm.headings import clean_heading
from agents.storm.records import Persona
from agents.storm.steps_research import (AnswerInput, AnswerQuestion, NumberedSource, PlanQueries, QueriesInput,
                                         aspect_question, render_sources)
from agents.storm.topicality import topical_sentences

DISCUSSION_TURNS = 8  # the last turns a prompt shows; older ones are summed up by the mind map


def render_discussion(lines: list[str]) -> str:
    return "\n".join(f"- {x}" for x in lines[-DISCUSSION_TURNS:]) or "(nothing said yet)"


# --- the expert -----------------------------------------------------------------------------------


class RaiseInput(BaseModel):
    topic: str
    expert: Persona
    discussion: list[str] = Field(default_factory=list, description="the turns so far, oldest first")
    asked: list[str] = Field(default_factory=list, description="questions this expert raised before")


class RaiseOutput(BaseModel):
    question: str = Field(description="the follow-up question this expert raises", json_schema_extra={"maxLength": 300})


class RaiseQuestion(Step[RaiseInput, RaiseOutput]):
    name = "roundtable.expert.raise"
    role = "expert"
    Input = RaiseInput
    Output = RaiseOutput
    instructions = """\
You are an expert at a roundtable discussion on a topic. Nobody has asked you anything, so raise the next
question the discussion should take up: one specific question from your own perspective that builds on what
was said and has not been asked yet. Reply with the question only."""

    @classmethod
    def render_input(cls, inp: RaiseInput) -> str:
        asked = "; ".join(inp.asked) or "(none)"
        return (f"Topic: {inp.topic}\nYou: {inp.expert.perspective}\nYour focus: {'; '.join(inp.expert.focus)}\n"
                f"Questions you raised before: {asked}\n\nDiscussion so far:\n{render_discussion(inp.discussion)}")

    @classmethod
    def extract(cls, inp: RaiseInput, nlp: TextToolkit) -> RaiseOutput:
        for aspect in inp.expert.focus:
            question = aspect_question(inp.topic, aspect)
            if question not in inp.asked:
                return RaiseOutput(question=question)
        # every aspect asked: follow the discussion's last turn, by its most telling words
        last = inp.discussion[-1].split(": ", 1)[-1] if inp.discussion else inp.topic
        words = [w for w in nlp.keywords(last, k=4, background=inp.discussion[:-1]) if w.lower() not in
                 inp.topic.lower()][:3]
        question = f"What more do the sources say about {', '.join(words) or inp.topic} in {inp.topic}?"
        return RaiseOutput(question=question)


class ExpertQueriesInput(QueriesInput):
    discussion: list[str] = Field(default_factory=list)


class ExpertQueries(PlanQueries):
    name = "roundtable.expert.queries"
    role = "expert"
    Input = ExpertQueriesInput
    instructions = PlanQueries.instructions + """
The question comes up in a roundtable discussion; the discussion so far is given for context: search for
what the question needs that the discussion has not said yet."""

    @classmethod
    def render_input(cls, inp: ExpertQueriesInput) -> str:
        return f"{super().render_input(inp)}\n\nDiscussion so far:\n{render_discussion(inp.discussion)}"


class ExpertAnswerInput(AnswerInput):
    expert: Persona
    discussion: list[str] = Field(default_factory=list)


class ExpertAnswer(AnswerQuestion):
    name = "roundtable.expert.answer"
    role = "expert"
    Input = ExpertAnswerInput
    instructions = AnswerQuestion.instructions.replace(
        "answering a writer's question", "speaking at a roundtable, answering the question put to the table,") + """
Speak from your perspective, and do not repeat what the discussion already said."""

    @classmethod
    def render_input(cls, inp: ExpertAnswerInput) -> str:
        return (f"You: {inp.expert.perspective}\nDiscussion so far:\n{render_discussion(inp.discussion)}\n\n"
                f"{super().render_input(inp)}")


# --- the moderator --------------------------------------------------------------------------------


class ModeratorInput(BaseModel):
    topic: str
    discussion: list[str] = Field(default_factory=list)
    unused: list[NumberedSource] = Field(description="passages retrieved during the discussion that no turn has "
                                                     "used yet")


class ModeratorOutput(BaseModel):
    question: str = Field(description="the question to the table", json_schema_extra={"maxLength": 300})
    grounded_in: list[int] = Field(description="the [n] of the unused passages the question comes from",
                                   json_schema_extra={"maxItems": 3})


MODERATOR_CANDIDATES = 12  # unused passages shown to the moderator


class AskFromUnused(Step[ModeratorInput, ModeratorOutput]):
    name = "roundtable.moderator.ask"
    role = "moderator"
    Input = ModeratorInput
    Output = ModeratorOutput
    instructions = """\
You moderate a roundtable discussion on a topic. The experts have been answering for a while; steer the
discussion to something new. Read the unused information — passages the experts retrieved but nobody has
talked about yet — and ask the table one question that those passages can answer and that the discussion has
not covered. Give the numbers of the passages the question comes from in `grounded_in`."""

    @classmethod
    def render_input(cls, inp: ModeratorInput) -> str:
        return (f"Topic: {inp.topic}\n\nDiscussion so far:\n{render_discussion(inp.discussion)}\n\n"
                f"Unused information:\n{render_sources(inp.unused)}")

    @classmethod
    def check(cls, inp: ModeratorInput, out: ModeratorOutput) -> str | None:
        valid = [s.n for s in inp.unused]
        if not valid or set(out.grounded_in) & set(valid):
            return None
        return f"grounded_in must name at least one of the unused passages {valid}"

    @classmethod
    def extract(cls, inp: ModeratorInput, nlp: TextToolkit) -> ModeratorOutput:
        if not inp.unused:
            return ModeratorOutput(question=f"What else should we know about {inp.topic}?", grounded_in=[])
        texts = [s.text for s in inp.unused]
        # about the topic, and unlike what was said: the passage the discussion most lacks
        topical = similarity([inp.topic], texts, nlp)[0]
        said = [x.split(": ", 1)[-1] for x in inp.discussion]
        known = similarity(texts, said, nlp).max(axis=1) if said else np.zeros(len(texts))
        best = int(np.argmax(np.round(topical - 0.5 * known, 6)))
        chosen = inp.unused[best]
        sentences = [x for x in nlp.sentences(chosen.text) if stands_alone(x)] or [chosen.text]
        fit = similarity([inp.topic], sentences, nlp)[0]
        sentence = sentences[int(np.argmax(fit))].rstrip()
        where = clean_heading(chosen.section.split(" > ")[-1]) if chosen.section else chosen.title
        return ModeratorOutput(question=f"Nobody has taken up {where} yet. The sources say: \"{sentence}\" "
                                        f"What does that mean for {inp.topic}?", grounded_in=[chosen.n])


class ExpertsInput(BaseModel):
    topic: str
    focus: str = Field(description="what the discussion turns to now")
    experts: list[Persona]
    max_experts: int = Field(ge=1)


class ExpertsOutput(BaseModel):
    experts: list[Persona] = Field(description="the experts at the table from now on, the one to answer first",
                                   json_schema_extra={"maxItems": 6})


FITS_FOCUS = 0.35  # an expert whose perspective is this close to the focus can answer it


class ChooseExperts(Step[ExpertsInput, ExpertsOutput]):
    name = "roundtable.moderator.experts"
    role = "moderator"
    Input = ExpertsInput
    Output = ExpertsOutput
    instructions = """\
You moderate a roundtable discussion on a topic, and the discussion turns to a new focus. Decide who sits at
the table: keep the experts who can speak to it, and add an expert (a short name, a one-sentence description,
a focus list) when no one present can. Keep at most `max_experts`. Put the expert who should answer the focus
first."""

    @classmethod
    def render_input(cls, inp: ExpertsInput) -> str:
        experts = "\n".join(f"- {p.perspective} (focus: {'; '.join(p.focus)})" for p in inp.experts)
        return (f"Topic: {inp.topic}\nmax_experts: {inp.max_experts}\nNew focus: {inp.focus}\n\n"
                f"Experts at the table:\n{experts or '(none)'}")

    @classmethod
    def extract(cls, inp: ExpertsInput, nlp: TextToolkit) -> ExpertsOutput:
        profiles = [f"{p.description} {' '.join(p.focus)}" for p in inp.experts]
        fit = similarity([inp.focus], profiles, nlp)[0] if profiles else np.zeros(0)
        if len(fit) and float(fit.max()) >= FITS_FOCUS:
            best = int(np.argmax(fit))
            return ExpertsOutput(experts=[inp.experts[best], *inp.experts[:best], *inp.experts[best + 1:]])
        words = [w for w in nlp.keywords(inp.focus, k=5) if w.lower() not in inp.topic.lower()][:3] or ["the question"]
        newcomer = Persona(name=f"Expert on {' '.join(words)}"[:60],
                           description=f"knows the sources on {', '.join(words)} in {inp.topic}"[:300],
                           focus=[" ".join(words)])
        return ExpertsOutput(experts=[newcomer, *inp.experts][: inp.max_experts])


# --- the report -----------------------------------------------------------------------------------


class ConceptInput(BaseModel):
    topic: str
    path: list[str] = Field(description="the concept and the concepts above it in the mind map, outermost first")
    sources: list[NumberedSource] = Field(description="the snippets the mind map holds under this concept")


class ConceptOutput(BaseModel):
    text: str = Field(description="a paragraph on the concept, [n] after every sentence")


CONCEPT_SENTENCES = 4


class WriteConcept(Step[ConceptInput, ConceptOutput]):
    name = "roundtable.report.concept"
    role = "report"
    Input = ConceptInput
    Output = ConceptOutput
    instructions = """\
You write one part of a report from a roundtable discussion's mind map: the concept given, from the snippets
the discussion gathered under it. Write neutral, factual prose using only what the snippets say, and put the
number of the snippet after every sentence, like [2]. Do not write a heading or a references list."""

    @classmethod
    def render_input(cls, inp: ConceptInput) -> str:
        return f"Topic: {inp.topic}\nConcept: {' > '.join(inp.path)}\n\nSnippets:\n{render_sources(inp.sources)}"

    @classmethod
    def check(cls, inp: ConceptInput, out: ConceptOutput) -> str | None:
        return citation_problem(out.text, [s.n for s in inp.sources], what="the paragraph")

    @classmethod
    def extract(cls, inp: ConceptInput, nlp: TextToolkit) -> ConceptOutput:
        # every snippet the discussion put here is said: its sentence closest to the concept, then the best others
        sentences = [x for x in topical_sentences(inp.topic, inp.sources, nlp) if stands_alone(x.text)] or \
            [x for x in topical_sentences(inp.topic, inp.sources, nlp)]
        if not sentences:
            return ConceptOutput(text="")
        fit = similarity([" ".join(inp.path)], [x.text for x in sentences], nlp)[0]
        picked: list[int] = []
        for source in dict.fromkeys(x.source for x in sentences):
            own = [i for i, x in enumerate(sentences) if x.source == source]
            picked.append(max(own, key=lambda i: (fit[i], -i)))
        rest = sorted((i for i in range(len(sentences)) if i not in picked), key=lambda i: (-fit[i], i))
        picked += rest[: max(0, CONCEPT_SENTENCES - len(picked))]
        ordered = sorted(picked, key=lambda i: (sentences[i].source, sentences[i].position))
        return ConceptOutput(text=" ".join(f"{sentences[i].text}[{inp.sources[sentences[i].source].n}]"
                                           for i in ordered))
