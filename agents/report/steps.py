"""The report agent's own steps besides choosing a tool: the plan's section descriptions, the section
written with every observation in view, and the model's sub-questions and interview questions.

What a chat model is shown is bounded by stated budgets (4 characters a token), never by a silent cut:
an observation longer than its share says that it was cut and why.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agents.lm.grounding import part_citation_problem
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.instructions import numbered_source
from agents.storm.citations import strip_citations
from agents.storm.lexicon import section_type
from agents.storm.records import Outline
from agents.storm.steps_article import SectionDigest, SectionInput, SectionOutput, WriteSection
from agents.storm.steps_outline import QuestionAnswer
from agents.storm.steps_research import NumberedSource
from retrieval.graph.current import is_history

CHARS_PER_TOKEN = 4
OBSERVATION_TOKENS = 16000  # the tools' observations a chat model reads for one section, in all
SOURCE_TOKENS = 16000  # the numbered passages the section writer may cite, in all
EARLIER_TOKENS = 4000  # the text of the sections written before, in all
PLAN_RESEARCH_TOKENS = 8000  # the research the planner reads
SECTION_FACTS = 12  # the passages the extractive writer reads (the first, in the order the tools found them)


def within_budget(texts: list[str], tokens: int, what: str) -> list[str]:
    """`texts` whole when together they fit `tokens`; else each cut to an equal share of what the short
    ones leave, with a note saying so."""
    budget = tokens * CHARS_PER_TOKEN
    if sum(len(t) for t in texts) <= budget:
        return list(texts)
    share, left = budget, sorted(texts, key=len)
    for i, t in enumerate(left):
        fair = share // (len(left) - i)
        if len(t) > fair:
            break
        share -= len(t)
    cap = share // max(1, len([t for t in texts if len(t) > fair]))
    note = f" … (cut: the {what} exceed the budget of {tokens} tokens)"
    return [t if len(t) <= cap else t[:max(0, cap - len(note))] + note for t in texts]


def status_label(source: NumberedSource) -> str:
    """A passage's label with whether it holds now: a superseded one is read as history."""
    place = source.title + (f" > {source.section}" if source.section else "")
    return f"{place} [{'superseded: history, not the rule in force' if is_history(source.text) else 'current'}]"


# --- the plan -----------------------------------------------------------------------------------


class PlanInput(BaseModel):
    topic: str
    outline: Outline
    research: list[QuestionAnswer] = Field(default_factory=list, description="what the research conversations found")


class SectionPlan(BaseModel):
    heading: str
    description: str = Field(description="one or two sentences: what the section covers and which evidence it needs")


class PlanOutput(BaseModel):
    sections: list[SectionPlan]


class PlanSections(Step[PlanInput, PlanOutput]):
    name = "report.react.plan"
    role = "outline"
    Input = PlanInput
    Output = PlanOutput
    instructions = """\
You plan a research report whose sections are given. For every section, in order and with its heading
unchanged, write a description of one or two sentences: what the section must cover for this topic,
which questions it answers and which kind of evidence it needs (facts, dates, rules in force and the
ones they replaced, people's views). Base the descriptions on what the research found, and keep the
sections from overlapping."""

    @classmethod
    def render_input(cls, inp: PlanInput) -> str:
        outline = "\n".join(f"- {s.heading}" + "".join(f"\n  - {x}" for x in s.subsections)
                            for s in inp.outline.sections)
        talk = within_budget([f"Q: {t.question}\nA: {strip_citations(t.answer)}" for t in inp.research],
                             PLAN_RESEARCH_TOKENS, "research notes")
        return f"Topic: {inp.topic}\n\nSections:\n{outline}\n\nWhat the research found:\n{chr(10).join(talk) or '(nothing)'}"

    @classmethod
    def check(cls, inp: PlanInput, out: PlanOutput) -> str | None:
        missing = [s.heading for s in inp.outline.sections if s.heading not in {p.heading for p in out.sections}]
        return f"no description for {', '.join(repr(h) for h in missing[:3])}: describe every section" if missing else None

    @classmethod
    def extract(cls, inp: PlanInput, nlp: TextToolkit) -> PlanOutput:
        plans = []
        for s in inp.outline.sections:
            st = section_type(s.heading)
            what = f"What the sources say about the {s.heading.lower()} of {inp.topic}"
            what += f" ({st.cue})" if st else ""
            what += f", in parts: {'; '.join(s.subsections)}." if s.subsections else "."
            plans.append(SectionPlan(heading=s.heading, description=what))
        return PlanOutput(sections=plans)


# --- the section, written with every observation in view ---------------------------------------


class ReactWriteInput(BaseModel):
    topic: str
    heading: str
    description: str = ""
    subsections: list[str] = Field(default_factory=list)
    other_headings: list[str] = Field(default_factory=list)
    earlier: list[SectionDigest] = Field(default_factory=list, description="the sections written before, in full")
    observations: list[str] = Field(default_factory=list, description="each tool call and what it returned")
    sources: list[NumberedSource] = Field(description="every passage the tools returned, no repeats")


class WriteReactSection(Step[ReactWriteInput, SectionOutput]):
    name = "report.react.write"
    role = "article"  # the article's writer, as in STORM's flow
    Input = ReactWriteInput
    Output = SectionOutput
    instructions = """\
You write one section of a research report, now that your tools have gathered the evidence. You see
every tool call you made and what it returned, and every passage they found, numbered. Write neutral,
factual prose from them, as informative as they allow, and put the number of the passage after every
sentence, like [3]. A passage marked superseded is history: say what held before and what replaced it,
never state it as the rule in force. Cover the subsections in order, each under a line "### <subsection>".
Do not repeat what the sections written before already say, and leave out what belongs to the report's
other sections. No section heading and no references list."""

    @classmethod
    def render_input(cls, inp: ReactWriteInput) -> str:
        earlier = within_budget([f"## {s.heading}\n{strip_citations(s.text)}" for s in inp.earlier],
                                EARLIER_TOKENS, "earlier sections")
        observed = within_budget(inp.observations, OBSERVATION_TOKENS, "observations")
        sources = within_budget([numbered_source(s.n, status_label(s), s.text) for s in inp.sources],
                                SOURCE_TOKENS, "passages")
        return (f"Topic: {inp.topic}\nSection: {inp.heading}\nWhat it covers: {inp.description or '(not planned)'}\n"
                f"Subsections: {'; '.join(inp.subsections) or '(none)'}\n"
                f"Other sections: {'; '.join(inp.other_headings) or '(none)'}\n\n"
                f"Sections written before:\n{chr(10).join(earlier) or '(none)'}\n\n"
                f"Your tool calls and what they returned:\n{chr(10).join(observed) or '(none)'}\n\n"
                f"Passages to cite:\n{chr(10).join(sources) or '(no sources)'}")

    @classmethod
    def check(cls, inp: ReactWriteInput, out: SectionOutput) -> str | None:
        return part_citation_problem(out.text, [s.n for s in inp.sources], what="the section")

    @classmethod
    def extract(cls, inp: ReactWriteInput, nlp: TextToolkit) -> SectionOutput:
        # the extractive writer reads the first SECTION_FACTS passages as STORM's section writer would
        return WriteSection.extract(SectionInput(topic=inp.topic, heading=inp.heading, subsections=inp.subsections,
                                                 other_headings=inp.other_headings,
                                                 sources=inp.sources[:SECTION_FACTS]), nlp)


# --- the model's own questions -------------------------------------------------------------------


class EvidencePlace(BaseModel):
    title: str
    heading: str = ""


class SubQuestionsInput(BaseModel):
    topic: str
    query: str
    places: list[EvidencePlace] = Field(default_factory=list, description="where the first search found evidence")
    n: int = Field(4, ge=3, le=5)


class QuestionsOutput(BaseModel):
    questions: list[str] = Field(description="the questions, most important first")


class SubQuestions(Step[SubQuestionsInput, QuestionsOutput]):
    name = "report.react.sub_questions"
    role = "react"
    Input = SubQuestionsInput
    Output = QuestionsOutput
    instructions = """\
Break a research query into `n` sub-questions (three to five) that together answer it for the report's
topic: each about one thing (a fact, a cause, a date, a change, an effect, a view), answerable from the
documents named, and none repeating another. The first may be the query itself."""

    @classmethod
    def render_input(cls, inp: SubQuestionsInput) -> str:
        places = "\n".join(f"- {p.title}" + (f" > {p.heading}" if p.heading else "") for p in inp.places)
        return f"Topic: {inp.topic}\nQuery: {inp.query}\nn: {inp.n}\n\nWhere evidence was found:\n{places or '(nowhere yet)'}"

    @classmethod
    def check(cls, inp: SubQuestionsInput, out: QuestionsOutput) -> str | None:
        asked = [q for q in out.questions if q.strip()]
        return None if 3 <= len(asked) <= 5 else f"{len(asked)} sub-questions: write three to five"

    @classmethod
    def extract(cls, inp: SubQuestionsInput, nlp: TextToolkit) -> QuestionsOutput:
        """The query, then one question per distinct place the evidence sits in."""
        questions = [inp.query]
        for p in inp.places:
            q = f"What does {p.title.split(':')[0]} say about {(p.heading or p.title).lower()} for {inp.topic}?"
            if q not in questions:
                questions.append(q)
            if len(questions) == inp.n:
                break
        while len(questions) < 3:
            questions.append(f"What changed about {inp.query}?" if len(questions) == 1
                             else f"Who is affected by {inp.query}?")
        return QuestionsOutput(questions=questions)


INTERVIEW_QUESTIONS = (
    "What did you find out about {topic}?",
    "Which rules or facts about {topic} changed over time, and what holds now?",
    "What should a reader not miss about {topic}?",
)


class InterviewQuestionsInput(BaseModel):
    topic: str = Field(description="what the interview is about")
    report_topic: str
    personas: list[str] = Field(default_factory=list, description="who is interviewed: their perspectives")


class InterviewQuestions(Step[InterviewQuestionsInput, QuestionsOutput]):
    name = "report.react.interview_questions"
    role = "interview"
    quotes_documents = False  # the topics and the personas' perspectives
    Input = InterviewQuestionsInput
    Output = QuestionsOutput
    instructions = """\
You are about to interview researchers who studied a report's topic from the perspectives given. Write
three questions on the subject of the interview that draw out what each found: specific findings, what
changed over time and what holds now, and what a reader should not miss. One question, one thing."""

    @classmethod
    def render_input(cls, inp: InterviewQuestionsInput) -> str:
        who = "\n".join(f"- {p}" for p in inp.personas) or "(none)"
        return f"Report topic: {inp.report_topic}\nInterview subject: {inp.topic}\n\nResearchers:\n{who}"

    @classmethod
    def check(cls, inp: InterviewQuestionsInput, out: QuestionsOutput) -> str | None:
        return None if any(q.strip() for q in out.questions) else "no question: write three"

    @classmethod
    def extract(cls, inp: InterviewQuestionsInput, nlp: TextToolkit) -> QuestionsOutput:
        return QuestionsOutput(questions=[q.format(topic=inp.topic) for q in INTERVIEW_QUESTIONS])
