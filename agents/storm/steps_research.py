"""The conversation steps of STORM: the writer's question, the expert's queries and answers.
Each is a typed `Step` with a prompt and an extractive twin.
"""

from __future__ import annotations

import re

import numpy as np
from pydantic import BaseModel, Field

from agents.lm.grounding import citation_problem
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.instructions import numbered_source
from agents.storm.citations import strip_citations
from agents.storm.evidence import content_overlap, similarity, stands_alone
from agents.storm.lexicon import section_type
from agents.storm.records import THANK_YOU, Persona
from agents.storm.topicality import topical_sentences
from retrieval.documents import PassageText
from retrieval.mmr import mmr

NOTHING_FOUND = "I could not find anything about this in the sources I searched."
ANSWER_SENTENCES = 4
ANSWER_MIN_RELEVANCE = 0.33  # below this a sentence is only used if it shares a word with the question
ANSWER_MIN_WITH_OVERLAP = 0.25
ANSWER_RELATIVE = 0.7  # and a sentence must be nearly as relevant as the best one


class NumberedSource(PassageText):
    """A passage as a model sees it, with the number to cite it by."""

    n: int = Field(description="the number to cite as [n]")


def render_sources(sources: list[NumberedSource]) -> str:
    if not sources:
        return "(no sources)"
    return "\n\n".join(numbered_source(s.n, s.title + (' > ' + s.section if s.section else ''), s.text) for s in sources)


# --- the writer's question ----------------------------------------------------------------------


class HistoryTurn(BaseModel):
    question: str
    answer: str  # "(answer omitted)" for turns older than the writer's window


class QuestionInput(BaseModel):
    topic: str
    persona: Persona
    history: list[HistoryTurn] = Field(default_factory=list)


class QuestionOutput(BaseModel):
    reasoning: str = Field("", description="think first, briefly: what the conversation has covered and what "
                                           "your focus still needs")
    question: str = Field(description=f"the next question, or exactly '{THANK_YOU}' when done",
                          json_schema_extra={"maxLength": 400})


class AskQuestion(Step[QuestionInput, QuestionOutput]):
    name = "storm.writer.ask"
    role = "question_asker"
    Input = QuestionInput
    Output = QuestionOutput
    instructions = f"""\
You are a writer researching a topic for an encyclopedia article, talking to an expert who can search
a document collection. You speak as the persona given, and ask one question at a time: specific, about
a single thing, building on what the expert already said and never repeating a question. Follow the
persona's focus list. When you have no more useful questions, reply with exactly
"{THANK_YOU}" as the question."""

    @classmethod
    def render_input(cls, inp: QuestionInput) -> str:
        # the expert's [n] point into sources the writer never sees: its answers are read without them
        turns = "\n\n".join(f"You: {t.question}\nExpert: {strip_citations(t.answer)}" for t in inp.history)
        focus = "; ".join(inp.persona.focus) or "(any aspect of the topic)"
        return (f"Topic: {inp.topic}\nYour persona: {inp.persona.perspective}\nYour focus: {focus}\n\n"
                f"Conversation so far:\n{turns or '(none yet)'}\n\nYour next question:")

    @classmethod
    def extract(cls, inp: QuestionInput, nlp: TextToolkit) -> QuestionOutput:
        asked = len(inp.history)
        if asked >= len(inp.persona.focus):
            return QuestionOutput(question=THANK_YOU)
        return QuestionOutput(question=aspect_question(inp.topic, inp.persona.focus[asked]))


def aspect_question(topic: str, aspect: str) -> str:
    st = section_type(aspect)
    what = aspect if aspect[:2].isupper() else aspect[:1].lower() + aspect[1:]
    question = f"What is known about the {what} of {topic}?"
    return f"{question} That is: {st.cue}." if st else question


# --- the expert's queries -----------------------------------------------------------------------


class QueriesInput(BaseModel):
    topic: str
    question: str
    max_queries: int = Field(3, ge=1)


class QueriesOutput(BaseModel):
    queries: list[str] = Field(description="search queries, most important first",
                               json_schema_extra={"maxItems": 3, "items": {"type": "string", "maxLength": 120}})


class PlanQueries(Step[QueriesInput, QueriesOutput]):
    name = "storm.expert.queries"
    role = "conv_simulator"
    Input = QueriesInput
    Output = QueriesOutput
    instructions = """\
You are an expert on a topic who answers a writer's question by searching a document collection.
Turn the question into at most `max_queries` short search queries (a few keywords each) that together
find what is needed to answer it. Include the topic's key names in each query."""

    @classmethod
    def render_input(cls, inp: QueriesInput) -> str:
        return f"Topic: {inp.topic}\nQuestion: {inp.question}\nmax_queries: {inp.max_queries}"

    @classmethod
    def extract(cls, inp: QueriesInput, nlp: TextToolkit) -> QueriesOutput:
        asked, _, detail = inp.question.partition(" That is: ")
        # the question's own words, in order, as a keyword query; then its detail with the topic
        words = [w for w in nlp.words(asked) if not nlp.is_stopword(w) and len(w) > 1]
        queries = [" ".join(dict.fromkeys(words))]
        if detail:
            queries.append(f"{inp.topic} {' '.join(nlp.keywords(detail, k=8))}")
        unique = [q for i, q in enumerate(queries) if q and q not in queries[:i]]
        return QueriesOutput(queries=unique[: inp.max_queries] or [inp.topic])


# --- the expert's answer ------------------------------------------------------------------------


class AnswerInput(BaseModel):
    topic: str
    question: str
    sources: list[NumberedSource]


class AnswerOutput(BaseModel):
    answer: str = Field(description="the answer, each sentence followed by the [n] of its source(s)")


class AnswerQuestion(Step[AnswerInput, AnswerOutput]):
    name = "storm.expert.answer"
    role = "conv_simulator"
    Input = AnswerInput
    Output = AnswerOutput
    instructions = f"""\
You are an expert on a topic answering a writer's question from numbered sources, for an encyclopedia
article. Make the answer as informative as possible: draw on as many different sources as are relevant,
with their names, dates, figures and differing views, in as many sentences as that takes. Use only what
the sources say, and put the number of the source after every sentence, like [2]. If the sources answer
only part of the question, answer that part and say which part they leave open. Only if they say nothing
about it at all, reply exactly: "{NOTHING_FOUND}" """

    @classmethod
    def render_input(cls, inp: AnswerInput) -> str:
        return f"Topic: {inp.topic}\nQuestion: {inp.question}\n\nSources:\n{render_sources(inp.sources)}"

    @classmethod
    def check(cls, inp: AnswerInput, out: AnswerOutput) -> str | None:
        if out.answer.strip().rstrip(".") == NOTHING_FOUND.rstrip("."):
            return None
        return citation_problem(out.answer, [s.n for s in inp.sources])

    @classmethod
    def extract(cls, inp: AnswerInput, nlp: TextToolkit) -> AnswerOutput:
        # only sources about the topic itself: one retrieved for a shared common word may be about another thing
        sentences = [x for x in topical_sentences(inp.topic, inp.sources, nlp) if stands_alone(x.text)]
        if not sentences:
            return AnswerOutput(answer=NOTHING_FOUND)
        texts = [s.text for s in sentences]
        # A list item or a short sentence often says what it is about only in its heading.
        relevance = question_relevance(inp.topic, inp.question, texts, nlp)
        in_context = [f"{inp.sources[x.source].section}: {x.text}" for x in sentences]
        if any(s.section for s in inp.sources):
            relevance = np.round(0.5 * relevance + 0.5 * question_relevance(inp.topic, inp.question, in_context, nlp), 6)
        floor = ANSWER_RELATIVE * float(relevance.max())
        keep = [i for i, s in enumerate(texts) if relevance[i] >= floor and (
                relevance[i] >= ANSWER_MIN_RELEVANCE
                or (relevance[i] >= ANSWER_MIN_WITH_OVERLAP
                    and content_overlap(inp.question, s, nlp, ignore=[inp.topic, "sources say mean"]) > 0))]
        if not keep:
            return AnswerOutput(answer=NOTHING_FOUND)
        chosen = mmr(relevance, similarity(texts, texts, nlp), ANSWER_SENTENCES, candidates=keep)
        return AnswerOutput(answer=" ".join(f"{texts[i]}[{inp.sources[sentences[i].source].n}]" for i in chosen))


def question_relevance(topic: str, question: str, texts: list[str], nlp: TextToolkit) -> np.ndarray:
    """How well each text answers `question`: half the question as asked, half the question without
    the topic's name, since every retrieved passage is about the topic and only some about the question."""
    pattern = re.compile(re.escape(topic), re.IGNORECASE)
    bare = pattern.sub("it", question)
    sim = similarity([question, bare], texts, nlp)
    return np.round(0.5 * sim[0] + 0.5 * sim[1], 6)
