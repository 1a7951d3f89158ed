"""Perspective discovery as a step: from related documents and excerpts, the aspects to research
and the personas who ask about them (the basic fact writer's aspects included)."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.storm.evidence import similarity
from agents.storm.headings import DocumentHeading, plan_headings
from agents.storm.lexicon import ARTICLE_KINDS, section_type
from agents.storm.outline_params import RESEARCH_PLAN_PARAMS
from agents.storm.records import Persona, RelatedDocument
from retrieval.documents import PassageText


# --- perspectives -----------------------------------------------------------------------------


class PerspectivesInput(BaseModel):
    topic: str
    related: list[RelatedDocument] = Field(description="related corpus documents and their headings")
    excerpts: list[PassageText] = Field(description="passages retrieved for the topic")
    max_personas: int = Field(ge=0)
    questions_per_persona: int = Field(ge=1)


class PerspectivesOutput(BaseModel):
    reasoning: str = Field("", description="think first, briefly: which aspects of the topic the related "
                                           "documents and excerpts cover, and which editors would cover them")
    relevant: bool = Field(True, description="false when the excerpts say nothing about the topic at all")
    basic_focus: list[str] = Field(default_factory=list,
                                   description="aspects the basic fact writer should ask about")
    personas: list[Persona] = Field(default_factory=list, json_schema_extra={"maxItems": 8})


class FindPerspectives(Step[PerspectivesInput, PerspectivesOutput]):
    name = "storm.perspectives"
    role = "question_asker"
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
        wanted = per * (inp.max_personas + 1)
        plan = plan_headings(inp.topic, inp.excerpts, nlp,
                             document_headings=[DocumentHeading(heading=h, title=d.title)
                                                for d in inp.related for h in d.headings],
                             max_headings=wanted, params=RESEARCH_PLAN_PARAMS)
        # What the excerpts support (document headings among them), then what an article of this kind
        # usually covers: the expert says so when the corpus has nothing on it.
        kind = next(k for k in ARTICLE_KINDS if k.name == plan.kind)
        aspects: list[str] = []
        for heading in [*(h.heading for h in plan.headings), *kind.sections]:
            if len(aspects) < wanted and heading.lower() not in {a.lower() for a in aspects}:
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
