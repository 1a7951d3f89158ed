"""The outline steps: a draft from the topic alone, then one refined from the research."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agents.lm.grounding import schema_echo
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.storm.citations import strip_citations
from agents.storm.headings import DocumentHeading, is_reference_heading, plan_headings
from agents.storm.outline_params import OUTLINE_PARAMS, OutlineParams
from agents.storm.lexicon import article_kind, section_type
from agents.storm.records import Outline, OutlineSection
from retrieval.documents import PassageText

MAX_SECTIONS = OUTLINE_PARAMS.max_headings  # headings in all, subsections included


class DraftOutlineInput(BaseModel):
    topic: str


class DraftOutline(Step[DraftOutlineInput, Outline]):
    name = "storm.outline.draft"
    role = "outline"
    Input = DraftOutlineInput
    Output = Outline
    instructions = """\
Write the outline of an encyclopedia article on the topic, from what such articles usually contain:
its sections in reading order, each with optional subsections. Headings are short (one to four words),
like "Background", "Reception" or "Legal proceedings". No introduction, summary, conclusion or
references sections."""

    @classmethod
    def render_input(cls, inp: DraftOutlineInput) -> str:
        return f"Topic: {inp.topic}"

    @classmethod
    def check(cls, inp, out: Outline) -> str | None:
        return schema_echo(out.headings(), cls.output_schema())

    @classmethod
    def extract(cls, inp: DraftOutlineInput, nlp: TextToolkit) -> Outline:
        kind = article_kind(inp.topic, [], nlp)
        sections: list[OutlineSection] = []
        for heading in kind.sections:
            st = section_type(heading)
            parent = next((s for s in sections if st and s.heading == st.parent), None)
            if parent is not None:
                parent.subsections.append(heading)
            else:
                sections.append(OutlineSection(heading=heading))
        return Outline(sections=sections)


class QuestionAnswer(BaseModel):
    question: str
    answer: str


class RefineOutlineInput(BaseModel):
    topic: str
    draft: Outline
    conversation: list[QuestionAnswer] = Field(description="the writers' questions and the expert's answers")
    document_headings: list[DocumentHeading] = Field(default_factory=list,
                                         description="headings of the corpus documents the sources come from")
    evidence: list[PassageText] = Field(description="the collected source snippets")
    max_headings: int = Field(MAX_SECTIONS, ge=1)
    params: OutlineParams | None = Field(None, description="the extractive outline's knobs (None: OUTLINE_PARAMS)")


class RefineOutline(Step[RefineOutlineInput, Outline]):
    name = "storm.outline.refine"
    role = "outline"
    Input = RefineOutlineInput
    Output = Outline
    instructions = """\
Improve the draft outline of an encyclopedia article using what the research found: the writers'
conversations with an expert, the headings of the source documents and the collected snippets.
Keep sections the research can support, drop those it cannot, and add sections for important
findings the draft misses. Headings are short (one to four words) and name what a section covers; at
most `max_headings` headings in all, subsections included. No introduction, summary, conclusion or
references sections."""

    @classmethod
    def render_input(cls, inp: RefineOutlineInput) -> str:
        draft = "\n".join(f"- {s.heading}" + "".join(f"\n  - {x}" for x in s.subsections) for s in inp.draft.sections)
        talk = "\n\n".join(f"Q: {t.question}\nA: {strip_citations(t.answer)}" for t in inp.conversation)
        snippets = "\n".join(f"- {' '.join(e.text.split()[:60])}" for e in inp.evidence[:40])
        return (f"Topic: {inp.topic}\nmax_headings: {inp.max_headings}\n\nDraft outline:\n{draft or '(empty)'}\n\n"
                f"Source document headings: {'; '.join(d.heading for d in inp.document_headings) or '(none)'}\n\n"
                f"Conversations:\n{talk or '(none)'}\n\nSnippets (first words):\n{snippets or '(none)'}")

    @classmethod
    def check(cls, inp, out: Outline) -> str | None:
        return schema_echo(out.headings(), cls.output_schema())

    @classmethod
    def extract(cls, inp: RefineOutlineInput, nlp: TextToolkit) -> Outline:
        return outline_from_evidence(inp, nlp, inp.params or OUTLINE_PARAMS)


def outline_from_evidence(inp: RefineOutlineInput, nlp: TextToolkit, params: OutlineParams) -> Outline:
    """The extractive refined outline under `params` (`scripts/cv_outline.py` chooses them)."""
    # The expert's answers come first: they are the sentences picked as most relevant.
    texts = [PassageText(text=strip_citations(t.answer)) for t in inp.conversation] + list(inp.evidence)
    plan = plan_headings(inp.topic, texts, nlp, document_headings=inp.document_headings,
                         preferred=inp.draft.headings(), max_headings=inp.max_headings, params=params)
    sections: list[OutlineSection] = []
    for h in plan.headings:
        parent = next((s for s in sections if s.heading == h.parent), None)
        if parent is not None:
            parent.subsections.append(h.heading)
        else:
            sections.append(OutlineSection(heading=h.heading))
    return clean_outline(Outline(sections=sections))


def clean_outline(outline: Outline, topic: str | None = None) -> Outline:
    """Without reference-like or empty headings, the topic as a heading, or a heading twice."""
    seen: set[str] = set()
    out: list[OutlineSection] = []

    def fresh(h: str) -> bool:
        key = h.strip().lower()
        ok = bool(key) and not is_reference_heading(h) and key not in seen and key != (topic or "").strip().lower()
        seen.add(key)
        return ok

    for s in outline.sections:
        if fresh(s.heading):
            out.append(OutlineSection(heading=s.heading.strip(),
                                      subsections=[x.strip() for x in s.subsections if fresh(x)]))
    return Outline(sections=out)
