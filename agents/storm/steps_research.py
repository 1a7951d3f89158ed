"""The research steps of STORM: perspectives, the writer's questions, the expert's
queries and answers. Each is a typed `Step` with a prompt and an extractive twin.
"""

from __future__ import annotations

import re

import numpy as np
from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.storm.evidence import Excerpt, content_overlap, mmr, sentences_of, similarity
from agents.storm.headings import DocumentHeading, on_topic, plan_headings
from agents.storm.lexicon import ARTICLE_KINDS, section_type
from agents.storm.records import THANK_YOU, Persona, RelatedDocument

NOTHING_FOUND = "I could not find anything about this in the sources I searched."
ANSWER_SENTENCES = 4
ANSWER_MIN_RELEVANCE = 0.33  # below this a sentence is only used if it shares a word with the question
ANSWER_MIN_WITH_OVERLAP = 0.25
ANSWER_RELATIVE = 0.7  # and a sentence must be nearly as relevant as the best one


class NumberedSource(BaseModel):
    n: int = Field(description="the number to cite as [n]")
    title: str
    section: str = Field("", description="the heading path of the passage inside its document")
    text: str


def render_sources(sources: list[NumberedSource]) -> str:
    if not sources:
        return "(no sources)"
    return "\n\n".join(f"[{s.n}] {s.title}{' > ' + s.section if s.section else ''}\n{s.text}" for s in sources)


# --- perspectives -----------------------------------------------------------------------------


class PerspectivesInput(BaseModel):
    topic: str
    related: list[RelatedDocument] = Field(description="related corpus documents and their headings")
    excerpts: list[Excerpt] = Field(description="passages retrieved for the topic")
    max_personas: int = Field(ge=0)
    questions_per_persona: int = Field(ge=1)


class PerspectivesOutput(BaseModel):
    relevant: bool = Field(True, description="false when the excerpts say nothing about the topic at all")
    basic_focus: list[str] = Field(default_factory=list,
                                   description="aspects the basic fact writer should ask about")
    personas: list[Persona] = Field(default_factory=list, json_schema_extra={"maxItems": 8})


class FindPerspectives(Step[PerspectivesInput, PerspectivesOutput]):
    name = "storm.perspectives"
    stage = "question_asker"
    Input = PerspectivesInput
    Output = PerspectivesOutput
    instructions = """\
You plan research for an encyclopedia article on the topic. From the related documents' headings and
the excerpts, choose the aspects the article must cover, then up to `max_personas` personas: distinct
kinds of readers or specialists whose questions together cover those aspects (for example a historian,
a person affected, a regulator). Give each persona a short name, a one-sentence description of what it
cares about, and a `focus` list of up to `questions_per_persona` aspects (a few words each) it will ask
about. Also give `basic_focus`: the basic aspects a writer of plain facts would ask about first.
Use only aspects the excerpts can speak to. If the excerpts say nothing about the topic at all, set
`relevant` to false and leave the lists empty."""

    @classmethod
    def render_input(cls, inp: PerspectivesInput) -> str:
        related = "\n".join(f"- {d.title}: {'; '.join(d.headings) or '(no headings)'}" for d in inp.related)
        excerpts = "\n\n".join(f"({e.section}) {e.text}" if e.section else e.text for e in inp.excerpts[:12])
        return (f"Topic: {inp.topic}\nmax_personas: {inp.max_personas}\n"
                f"questions_per_persona: {inp.questions_per_persona}\n\nRelated documents and their headings:\n"
                f"{related or '(none)'}\n\nExcerpts:\n{excerpts or '(none)'}")

    @classmethod
    def extract(cls, inp: PerspectivesInput, nlp: TextToolkit) -> PerspectivesOutput:
        if not covers_topic(inp.topic, [*(d.title for d in inp.related), *(e.text for e in inp.excerpts)], nlp):
            return PerspectivesOutput(relevant=False)
        per = inp.questions_per_persona
        plan = plan_headings(inp.topic, inp.excerpts, nlp,
                             document_headings=[DocumentHeading(heading=h, title=d.title)
                                                for d in inp.related for h in d.headings],
                             max_headings=per * (inp.max_personas + 1))
        aspects = [h.heading for h in plan.headings]
        # Too few supported aspects for every question: ask what an article of this kind usually covers;
        # the expert says so when the corpus has nothing on it.
        wanted = per * (inp.max_personas + 1)
        kind = next(k for k in ARTICLE_KINDS if k.name == plan.kind)
        for heading in kind.sections:
            if len(aspects) >= wanted:
                break
            if heading.lower() not in {a.lower() for a in aspects}:
                aspects.append(heading)
        basic, rest = aspects[:per], aspects[per:]
        if not rest or inp.max_personas == 0:
            return PerspectivesOutput(basic_focus=basic)
        groups = _group_aspects(rest, min(inp.max_personas, len(rest)), per, nlp)
        personas = [_persona(inp.topic, group) for group in groups]
        return PerspectivesOutput(basic_focus=basic, personas=personas)


TOPIC_SIMILARITY = 0.5
TOPIC_WORD_SHARE = 0.5


def covers_topic(topic: str, texts: list[str], nlp: TextToolkit) -> bool:
    """Whether `texts` are about `topic` at all: they use most of its content words, or some text is
    close to it in meaning. Sharing one common word ("history", "insurance") is not enough."""
    if not texts:
        return False
    topic_words = set(nlp.content_tokens(topic))
    found = topic_words & {w for t in texts for w in nlp.content_tokens(t)}
    if topic_words and len(found) >= TOPIC_WORD_SHARE * len(topic_words):
        return True
    return float(similarity([topic], texts, nlp).max()) >= TOPIC_SIMILARITY


def _group_aspects(aspects: list[str], n: int, per: int, nlp: TextToolkit) -> list[list[str]]:
    """`n` groups of related aspects, at most `per` each, in the aspects' order."""
    texts = [_aspect_text(a) for a in aspects]
    sim = similarity(texts, texts, nlp)
    groups: list[list[int]] = [[i] for i in range(n)]  # seeds: the n best-supported aspects
    for i in range(n, len(aspects)):
        open_groups = [g for g in groups if len(g) < per]
        if not open_groups:
            break
        best = max(open_groups, key=lambda g: (round(float(np.mean(sim[i, g])), 6), -groups.index(g)))
        best.append(i)
    return [[aspects[i] for i in sorted(g)] for g in groups]


def _aspect_text(aspect: str) -> str:
    st = section_type(aspect)
    return f"{aspect}: {st.cue}" if st else aspect


def _persona(topic: str, focus: list[str]) -> Persona:
    names = [f.lower() for f in focus]
    what = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return Persona(name=f"{focus[0]} researcher",
                   description=f"wants to know about the {what} of {topic}", focus=focus)


# --- the writer's question ----------------------------------------------------------------------


class HistoryTurn(BaseModel):
    question: str
    answer: str  # "(answer omitted)" for turns older than the writer's window


class QuestionInput(BaseModel):
    topic: str
    persona: Persona
    history: list[HistoryTurn] = Field(default_factory=list)


class QuestionOutput(BaseModel):
    question: str = Field(description=f"the next question, or exactly '{THANK_YOU}' when done",
                          json_schema_extra={"maxLength": 400})


class AskQuestion(Step[QuestionInput, QuestionOutput]):
    name = "storm.writer.ask"
    stage = "question_asker"
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
        turns = "\n\n".join(f"You: {t.question}\nExpert: {t.answer}" for t in inp.history)
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
    question = f"What do the sources say about the {what} of {topic}?"
    return f"{question} I mean: {st.cue}." if st else question


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
    stage = "conv_simulator"
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
        asked = re.split(r"\s+I mean:\s+", inp.question, maxsplit=1)
        queries = [asked[0].rstrip("?").strip()]
        if len(asked) > 1:
            queries.append(f"{inp.topic} {' '.join(nlp.keywords(asked[1], k=8))}")
        else:
            queries.append(" ".join(nlp.keywords([inp.question], k=8)))
        unique = [q for i, q in enumerate(queries) if q and q not in queries[:i]]
        return QueriesOutput(queries=unique[: inp.max_queries])


# --- the expert's answer ------------------------------------------------------------------------


class AnswerInput(BaseModel):
    topic: str
    question: str
    sources: list[NumberedSource]


class AnswerOutput(BaseModel):
    answer: str = Field(description="the answer, each sentence followed by the [n] of its source(s)")


class AnswerQuestion(Step[AnswerInput, AnswerOutput]):
    name = "storm.expert.answer"
    stage = "conv_simulator"
    Input = AnswerInput
    Output = AnswerOutput
    instructions = f"""\
You are an expert on a topic answering a writer's question from numbered sources. Use only what the
sources say; put the number of the source after every sentence, like [2]. Be concise (at most five
sentences). If the sources do not answer the question, say only: "{NOTHING_FOUND}" """

    @classmethod
    def render_input(cls, inp: AnswerInput) -> str:
        return f"Topic: {inp.topic}\nQuestion: {inp.question}\n\nSources:\n{render_sources(inp.sources)}"

    @classmethod
    def extract(cls, inp: AnswerInput, nlp: TextToolkit) -> AnswerOutput:
        # only sources about the topic itself: one retrieved for a shared common word may be about another thing
        about = on_topic(inp.topic, [Excerpt(text=s.text, title=s.title, section=s.section) for s in inp.sources], nlp)
        sentences = [x for x in sentences_of([s.text for s in inp.sources], nlp) if about[x.source]]
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
