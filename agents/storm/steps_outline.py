"""The outline steps: a draft from the topic alone, then one refined from the research."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agents.lm.grounding import schema_echo
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.instructions import numbered_source
from agents.storm.citations import strip_citations
from agents.storm.headings import DocumentHeading, is_reference_heading, plan_headings
from agents.storm.outline_params import OUTLINE_PARAMS, OutlineParams
from agents.storm.lexicon import article_kind, section_type
from agents.storm.records import Outline, OutlineSection
from retrieval.documents import PassageText

MAX_SECTIONS = OUTLINE_PARAMS.max_headings  # headings in all, subsections included (the extractive outline's cap)
# What a chat model refines the outline from: every collected snippet, whole, until this many words of
# them (about 16k tokens; STORM refines from every conversation, ~5,000 words, with no cap). Sources take
# turns (one snippet of each, then a second of each, ...), so a budget that binds cuts every source a
# little rather than the last sources whole.
OUTLINE_EVIDENCE_WORDS = 12000


class DraftOutlineInput(BaseModel):
    topic: str


class DraftOutline(Step[DraftOutlineInput, Outline]):
    name = "storm.outline.draft"
    role = "outline"
    quotes_documents = False  # the topic alone
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
    reading: list[PassageText] = Field(default_factory=list, description=(
        "more of the corpus, found by the topic and the draft's headings, for a chat model to read beside "
        "the research; the extractive outline counts the research's evidence only (its knobs were "
        "cross-validated on that)"))
    max_headings: int = Field(MAX_SECTIONS, ge=1, description="the extractive outline's cap on headings; a chat "
                              "model is not capped (STORM's is not)")
    params: OutlineParams | None = Field(None, description="the extractive outline's knobs (None: OUTLINE_PARAMS)")


class RefineOutline(Step[RefineOutlineInput, Outline]):
    name = "storm.outline.refine"
    role = "outline"
    Input = RefineOutlineInput
    Output = Outline
    instructions = """\
Improve the draft outline of an encyclopedia article using what the research found: the writers'
conversations with an expert, the headings of the source documents, every snippet the research
collected and more passages found by the topic and the draft's headings (grouped by source). Read all of it. Keep the draft's sections that the research covers, add
a section for each important aspect the research found that the draft misses, and give a broad section
subsections where the sources discuss distinct parts of it. The article should cover everything
important the snippets say, so prefer a complete outline to a short one. Headings are short (one to four
words) and name what a section covers. No introduction, summary, conclusion or references sections."""

    @classmethod
    def render_input(cls, inp: RefineOutlineInput) -> str:
        draft = "\n".join(f"- {s.heading}" + "".join(f"\n  - {x}" for x in s.subsections) for s in inp.draft.sections)
        talk = "\n\n".join(f"Q: {t.question}\nA: {strip_citations(t.answer)}" for t in inp.conversation)
        shown, left = outline_evidence([*inp.evidence, *inp.reading], OUTLINE_EVIDENCE_WORDS)
        snippets = "\n\n".join(numbered_source(i, e.title + (f" > {e.section}" if e.section else ""), e.text)
                                for i, e in enumerate(shown, start=1))
        note = (f"\n\n({left} more snippets left out: the prompt's budget is {OUTLINE_EVIDENCE_WORDS} words of "
                "snippets)") if left else ""
        return (f"Topic: {inp.topic}\n\nDraft outline:\n{draft or '(empty)'}\n\n"
                f"Source document headings: {'; '.join(d.heading for d in inp.document_headings) or '(none)'}\n\n"
                f"Conversations:\n{talk or '(none)'}\n\n"
                f"Snippets ({len(shown)} of {len(inp.evidence)}, by source):\n{snippets or '(none)'}{note}")

    @classmethod
    def check(cls, inp, out: Outline) -> str | None:
        return schema_echo(out.headings(), cls.output_schema())

    @classmethod
    def extract(cls, inp: RefineOutlineInput, nlp: TextToolkit) -> Outline:
        return outline_from_evidence(inp, nlp, inp.params or OUTLINE_PARAMS)


def outline_evidence(evidence: list[PassageText], budget_words: int) -> tuple[list[PassageText], int]:
    """(the snippets a chat model reads, whole, grouped by source; how many were left out). Each source
    gives its first snippet, then its second, ... until `budget_words`; no snippet twice."""
    by_source: dict[str, list[PassageText]] = {}
    seen: set[str] = set()
    for e in evidence:
        key = " ".join(e.text.split())
        if key and key not in seen:
            seen.add(key)
            by_source.setdefault(e.title, []).append(e)
    chosen: set[int] = set()
    words = 0
    for turn in range(max((len(v) for v in by_source.values()), default=0)):
        for items in by_source.values():
            if turn < len(items) and words + len(items[turn].text.split()) <= budget_words:
                chosen.add(id(items[turn]))
                words += len(items[turn].text.split())
    shown = [e for items in by_source.values() for e in items if id(e) in chosen]
    return shown, len(seen) - len(shown)


def outline_from_evidence(inp: RefineOutlineInput, nlp: TextToolkit, params: OutlineParams) -> Outline:
    """The extractive refined outline under `params` (`scripts/calibrate/cv_outline.py` chooses them)."""
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
