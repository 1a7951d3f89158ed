"""The writing steps: one section from its snippets, the lead, and the de-duplicating polish."""

from __future__ import annotations

import re

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agents.lm.grounding import citation_problem, part_citation_problem
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.storm.citations import strip_citations
from agents.storm.evidence import EvidenceSentence, rounded, similarity, stands_alone, without_topic_words
from agents.storm.headings import clean_heading
from agents.storm.topicality import topical_sentences
from agents.storm.lexicon import section_type
from agents.storm.steps_research import NumberedSource, render_sources
from retrieval.mmr import mmr

SECTION_SENTENCES = 6  # a section without subsections
INTRO_SENTENCES = 3  # the part of a section above its subsections
SUBSECTION_SENTENCES = 4
MIN_FIT = 0.25  # a sentence less similar than this to its heading is not used for it
RELATIVE_FIT = 0.7  # nor one much less similar than the best sentence for it
MIN_HEADING_FIT = 0.3  # and the heading itself (not only the topic) must fit it this well
DUPLICATE = 0.9  # sentences this similar say the same thing
TOPIC_WEIGHT = 0.3
HOME_MARGIN = 0.05  # a sentence fitting another heading better than this is left to that one
OWN_HEADING = 0.3  # a sentence written under a heading of the section's name belongs to it


def heading_text(heading: str) -> str:
    """What a sentence is matched against for a heading: the heading and its lexicon cue, if any. Not the
    topic: every snippet is about the topic, and its name would pull in whichever sentence repeats it."""
    st = section_type(heading.strip())
    return f"{heading}: {st.cue}" if st else heading


def _cited(sentence: EvidenceSentence, sources: list[NumberedSource]) -> str:
    return f"{sentence.text}[{sources[sentence.source].n}]"


def _paragraph(picked: list[int], sentences: list[EvidenceSentence], sources: list[NumberedSource]) -> str:
    # Source order, then place in the source: sentences of one passage stay in their own order.
    ordered = sorted(picked, key=lambda i: (sentences[i].source, sentences[i].position))
    return " ".join(_cited(sentences[i], sources) for i in ordered)


# --- a section ----------------------------------------------------------------------------------


class SubsectionSources(BaseModel):
    heading: str
    sources: list[int] = Field(default_factory=list, description="the [n] of the sources retrieved for it")


class SectionInput(BaseModel):
    topic: str
    heading: str
    subsections: list[str] = Field(default_factory=list)
    other_headings: list[str] = Field(default_factory=list, description="the article's other sections")
    sources: list[NumberedSource]
    by_subsection: list[SubsectionSources] = Field(
        default_factory=list, description="which of `sources` were retrieved for each subsection (STORM "
                                          "retrieves per subsection); the extractive writer fits every "
                                          "sentence to every heading itself and reads `sources` whole")


class SectionOutput(BaseModel):
    text: str = Field(description="the section body in markdown: paragraphs, '### Subheading' lines, [n] citations")


class WriteSection(Step[SectionInput, SectionOutput]):
    name = "storm.article.section"
    role = "article"
    Input = SectionInput
    Output = SectionOutput
    instructions = """\
You write one section of an encyclopedia article from numbered sources. Write neutral, factual prose
using only what the sources say, and put the number of the source after every sentence, like [3].
Be as informative as the sources allow: use as many of them as are relevant, with their names, dates
and figures. Cover the section's subsections in order, each under a line "### <subsection>", written
mainly from the sources listed for it under "Sources by subsection"; every subsection cites its own
sources. Leave out what belongs to the article's other sections. Do not repeat the section heading and
do not add a references list."""

    @classmethod
    def render_input(cls, inp: SectionInput) -> str:
        subs = "; ".join(inp.subsections) or "(none)"
        others = "; ".join(inp.other_headings) or "(none)"
        plan = "".join(f"\n- {p.heading}: " + (" ".join(f"[{n}]" for n in p.sources) or "(none)")
                       for p in inp.by_subsection)
        plan = f"\nSources by subsection:{plan}" if plan else ""
        return (f"Topic: {inp.topic}\nSection: {inp.heading}\nSubsections: {subs}\nOther sections: {others}{plan}\n\n"
                f"Sources:\n{render_sources(inp.sources)}")

    @classmethod
    def check(cls, inp: SectionInput, out: SectionOutput) -> str | None:
        return part_citation_problem(out.text, [s.n for s in inp.sources], what="the section")

    @classmethod
    def extract(cls, inp: SectionInput, nlp: TextToolkit) -> SectionOutput:
        # a chronology entry's later sentences lose its date out of it ("- **2011** — The river floods. Around
        # 4,000 homes are damaged."): the second would read as what is true now, so only the dated one is used
        sentences = [x for x in topical_sentences(inp.topic, inp.sources, nlp) if stands_alone(x.text)
                     and not (in_dated_entry(inp.sources[x.source].text, x.text) and not _DATED_ENTRY.match(x.text))]
        if not sentences:
            return SectionOutput(text="")
        texts = [s.text for s in sentences]
        own = [inp.heading, *inp.subsections]
        targets = [heading_text(without_topic_words(h, inp.topic, nlp)) for h in [*own, *inp.other_headings]]
        # what a sentence says must fit the heading, and be about the topic: of two sentences that fit
        # "Coverage" alike, the one about the topic's coverage wins
        on_heading = similarity(texts, targets, nlp)
        # a sentence written under a heading of the same name belongs to that heading
        for j, h in enumerate([*own, *inp.other_headings]):
            key = clean_heading(h).lower()
            for i, x in enumerate(sentences):
                if key in {clean_heading(p).lower() for p in inp.sources[x.source].section.split(" > ")}:
                    on_heading[i, j] += OWN_HEADING
        fit = np.round(on_heading + TOPIC_WEIGHT * similarity(texts, [inp.topic], nlp), 6)
        pairwise = similarity(texts, texts, nlp)
        best = fit.max(axis=1)  # a sentence belongs where it fits best, or nearly as well
        used: set[int] = set()

        def pick(target: int, k: int) -> list[int]:
            floor = max(MIN_FIT, RELATIVE_FIT * float(fit[:, target].max()))
            mine = [i for i in range(len(texts)) if fit[i, target] >= max(floor, best[i] - HOME_MARGIN)
                    and on_heading[i, target] >= MIN_HEADING_FIT and i not in used]
            chosen = mmr(fit[:, target], pairwise, k, candidates=mine)
            used.update(chosen)
            return chosen

        parts: list[str] = []
        intro = pick(0, INTRO_SENTENCES if inp.subsections else SECTION_SENTENCES)
        subs = [(h, pick(j + 1, SUBSECTION_SENTENCES)) for j, h in enumerate(inp.subsections)]
        if not intro and not any(p for _, p in subs):
            # Nothing fits better here than elsewhere: the best-fitting snippets were still retrieved for
            # this heading, so say what they say rather than leave the section empty.
            intro = mmr(fit[:, 0], pairwise, min(2, len(texts)),
                        candidates=[i for i in range(len(texts)) if on_heading[i, 0] >= MIN_HEADING_FIT])
        if intro:
            parts.append(_paragraph(intro, sentences, inp.sources))
        for heading, picked in subs:
            if picked:
                parts.append(f"### {heading}\n\n{_paragraph(picked, sentences, inp.sources)}")
        return SectionOutput(text="\n\n".join(parts))


# --- the lead -----------------------------------------------------------------------------------


class SectionDigest(BaseModel):
    heading: str
    text: str


class LeadInput(BaseModel):
    topic: str
    sections: list[SectionDigest] = Field(description="the article's sections, [n] in the article's numbering")
    sources: list[NumberedSource] = Field(description="snippets most related to the topic as a whole (the "
                                                      "extractive lead is picked from these)")
    cited: list[NumberedSource] = Field(default_factory=list, description="the sources the sections cite, "
                                        "under their article numbers, so the lead may cite what they cite")


class LeadOutput(BaseModel):
    lead: str = Field(description="the lead: up to four paragraphs with [n] citations")


class LeadParams(BaseModel):
    """Every knob of the extractive lead (`extract_lead`), as one printable value. The defaults were
    chosen by 5-fold cross-validation by article against the 40 FreshWiki articles' real leads (mean
    content-word ROUGE-1 F1 plus mean MiniLM cosine, `python -m scripts.calibrate.bench_lead score --work DIR
    --grid ...`), never by hand for an article. The hand-set knobs before (3 sentences, topic 0.6,
    headings 0.4, no body fit, naming 0.2, MMR 0.6, and only sentences the sections do not already
    say): ROUGE-1 0.278, cosine 0.729. A first grid (sentences 2-4, fresh on/off, the relevance mix,
    opening, naming, min_fit) chose the same setting in all five folds: held out 0.391 / 0.806. A
    second grid around it (body fit 0.3-1.0, MMR 0.6/0.8, ...) held out 0.402 / 0.809; this setting,
    in-sample 0.415 / 0.814. A third (body fit 1.5-2.5, MMR 0.9) held out 0.413 / 0.816: no gain, so
    not taken. The "fresh" filter cost most: a lead sums up what the sections say, and filtering that
    out left the sentences the sections had found peripheral. Four sentences is the step's own upper
    bound ("two to four"), not a fitted value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sentences: int = Field(4, ge=1)
    topic_fit: float = Field(1.0, ge=0, description="weight of a sentence's fit to the topic in its relevance")
    heading_fit: float = Field(0.4, ge=0, description="... of its mean fit to '<topic> <heading>', first sections")
    body_fit: float = Field(1.0, ge=0, description="... of its mean fit to the sections' sentences (what the "
                            "article says as a whole)")
    headings: int = Field(6, ge=1, description="how many of the first sections' headings count")
    opening: float = Field(0.05, description="preference for the first sentence of a passage")
    naming: float = Field(0.0, description="preference for sentences using the topic's words (times the share used)")
    min_fit: float = Field(0.25, description="a sentence less relevant than this is not used")
    fresh: bool = Field(False, description="prefer sentences the sections do not already say")
    mmr_lambda: float = Field(0.8, ge=0, le=1, description="relevance against diversity")


LEAD_PARAMS = LeadParams()


class WriteLead(Step[LeadInput, LeadOutput]):
    name = "storm.article.lead"
    role = "polish"
    Input = LeadInput
    Output = LeadOutput
    instructions = """\
Write the lead section of an encyclopedia article. It stands on its own as a concise overview: it
says what the topic is and establishes its context, explains why it is notable, and sums up the most
important points, including any prominent controversies, as the article's sections cover them. At
most four well-composed paragraphs. Use only facts the sources or the sections state, and put the
number of the source after every sentence, like [2]: the sections' own [n] and the numbered sources
share one numbering. No heading."""

    @classmethod
    def render_input(cls, inp: LeadInput) -> str:
        body = "\n\n".join(f"## {s.heading}\n{s.text}" for s in inp.sections)
        cited = f"Sources the sections cite:\n{render_sources(inp.cited)}\n\n" if inp.cited else ""
        return (f"Topic: {inp.topic}\n\nArticle sections:\n{body or '(none)'}\n\n{cited}"
                f"More sources on the topic as a whole:\n{render_sources(inp.sources)}")

    @classmethod
    def check(cls, inp: LeadInput, out: LeadOutput) -> str | None:
        return citation_problem(out.lead, [s.n for s in [*inp.cited, *inp.sources]], what="the lead")

    @classmethod
    def extract(cls, inp: LeadInput, nlp: TextToolkit) -> LeadOutput:
        return LeadOutput(lead=extract_lead(inp, nlp, LEAD_PARAMS))


_DATED_ENTRY = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?:1[6-9]|20)\d\d(?:\*\*|__)?\s*(?:[—–:-]|\|)")


def in_dated_entry(text: str, sentence: str) -> bool:
    """Whether `sentence` sits on a line of `text` that opens with a year: an entry of a chronology."""
    at = text.find(sentence[:60])
    if at < 0:
        return False
    line = text[text.rfind("\n", 0, at) + 1:]
    return bool(_DATED_ENTRY.match(line))


def extract_lead(inp: LeadInput, nlp: TextToolkit, p: LeadParams) -> str:
    """The extractive lead: the snippets' sentences that best say what the topic is, diverse (MMR)."""
    # a lead sentence must stand on its own: no list entry, nothing pointing back, and no sentence of a
    # dated chronology entry ("- **2011** — ... Around 4,000 homes are damaged"), which tells a past year
    # in the present tense and would read as what is true now
    sentences = [s for s in topical_sentences(inp.topic, inp.sources, nlp)
                 if not s.text.startswith("**") and stands_alone(s.text)
                 and not in_dated_entry(inp.sources[s.source].text, s.text)]
    if not sentences:
        return ""
    texts = [s.text for s in sentences]
    body = [strip_citations(s) for sec in inp.sections for s in nlp.sentences(sec.text)
            if not s.startswith("#")]
    queries = [inp.topic] + [f"{inp.topic} {sec.heading}" for sec in inp.sections[:p.headings]]
    fit = similarity(texts, queries, nlp)
    on_headings = fit[:, 1:].mean(axis=1) if fit.shape[1] > 1 else fit[:, 0]
    said = similarity(texts, body, nlp) if body else None
    on_body = said.mean(axis=1) if said is not None else fit[:, 0]
    relevance = p.topic_fit * fit[:, 0] + p.heading_fit * on_headings + p.body_fit * on_body
    # the opening sentence of a passage tends to say what it is about, and a lead names its topic
    topic_words = set(nlp.content_tokens(inp.topic))
    naming = np.array([len(topic_words & set(nlp.content_tokens(t))) / max(1, len(topic_words)) for t in texts])
    opening = np.array([p.opening if s.position == 0 else 0.0 for s in sentences])
    relevance = np.round(relevance + opening + p.naming * naming, 6)
    relevant = [i for i in range(len(texts)) if relevance[i] >= p.min_fit]
    fresh = relevant
    if said is not None and p.fresh:  # what the sections do not already say (off: it pushes the lead to the periphery)
        repeat = said.max(axis=1)
        fresh = [i for i in relevant if repeat[i] < DUPLICATE] or relevant
    chosen = mmr(relevance, similarity(texts, texts, nlp), p.sentences, lambda_=p.mmr_lambda, candidates=fresh)
    return " ".join(_cited(sentences[i], inp.sources) for i in chosen)


# --- polish: remove repetition ------------------------------------------------------------------


class PolishInput(BaseModel):
    topic: str
    heading: str
    text: str = Field(description="the section body, [n] citations in the article's numbering")
    earlier: list[str] = Field(default_factory=list, description="sentences the article already says above")


class PolishOutput(BaseModel):
    text: str


class PolishSection(Step[PolishInput, PolishOutput]):
    name = "storm.article.polish"
    role = "polish"
    Input = PolishInput
    Output = PolishOutput
    instructions = """\
You edit one section of an encyclopedia article. Delete every sentence that repeats something the
section or the earlier text already says; change nothing else. Keep the remaining sentences word for
word, with their [n] citations and '### ' subheading lines."""

    @classmethod
    def render_input(cls, inp: PolishInput) -> str:
        earlier = "\n".join(f"- {s}" for s in inp.earlier) or "(nothing yet)"
        return f"Topic: {inp.topic}\nSection: {inp.heading}\n\nEarlier text:\n{earlier}\n\nSection text:\n{inp.text}"

    @classmethod
    def extract(cls, inp: PolishInput, nlp: TextToolkit) -> PolishOutput:
        blocks = [b for b in re.split(r"\n\s*\n", inp.text) if b.strip()]
        units = [(bi, s) for bi, b in enumerate(blocks) if not b.startswith("#") for s in nlp.sentences(b)]
        plain = [strip_citations(s) for _, s in units]
        seen = list(inp.earlier)
        dropped: set[int] = set()
        if plain:
            sim = similarity(plain, [*plain, *seen], nlp)
            for i in range(len(plain)):
                before = [j for j in range(i) if j not in dropped] + [len(plain) + j for j in range(len(seen))]
                if any(rounded(float(sim[i, j])) >= DUPLICATE for j in before):
                    dropped.add(i)
        out: list[str] = []
        for bi, b in enumerate(blocks):
            if b.startswith("#"):
                out.append(b)
                continue
            kept = [s for k, (bj, s) in enumerate(units) if bj == bi and k not in dropped]
            if kept:
                out.append(" ".join(kept))
        # a subheading left with nothing under it goes too
        cleaned = [b for i, b in enumerate(out) if not (b.startswith("#") and (i + 1 == len(out) or out[i + 1].startswith("#")))]
        return PolishOutput(text="\n\n".join(cleaned))
