"""Find the headings a body of evidence supports: the extractive model's outline sense.

Candidates come from three places, in order of preference:

1. the heading structure of the related corpus documents, when they have one;
2. the lexicon of common encyclopedia section types (`lexicon.py`), with a prior
   for the usual sections of the article kind the topic looks like;
3. short key phrases of clusters of evidence that no candidate fits.

Each usable evidence sentence goes to the candidate it is most similar to (when
similar enough); a candidate with enough sentences becomes a heading. Lexicon
sections that usually sit under another become its subsections.
"""

from __future__ import annotations

import re
from typing import Literal, Sequence

import numpy as np
from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.storm.evidence import EvidenceSentence, Excerpt, similarity, vectors, without_topic_words
from agents.storm.topicality import topical_sentences
from agents.storm.lexicon import ARTICLE_KINDS, SECTION_TYPES, ArticleKind, kind_text, section_type

HeadingSource = Literal["document", "lexicon", "keywords"]

ASSIGN_THRESHOLD = 0.20  # a sentence less similar than this to every candidate stays unassigned
KIND_PRIOR = 0.12  # bonus for the usual sections of the topic's article kind
PREFERRED_PRIOR = 0.04  # bonus for headings the caller prefers (a draft outline)
UNDER_HEADING = 0.12  # bonus for a document heading from the sentences written under it
DOCUMENT_TOPIC = 1.0  # weight of how related a document heading (in its document) is to the topic
MIN_SHARE = 0.02  # a heading needs this share of the sentences (and at least MIN_SUPPORT)
MIN_SUPPORT = 2
SENTENCES_PER_HEADING = 6
SYNONYM = 0.8  # headings this similar name one section
MIN_HEADINGS = 4
MIN_FITTING = 3  # fewer fitting headings than this and key phrases name the rest
_NOT_CONTENT = re.compile(r"^(references|see also|notes|external links|further reading|bibliography|sources|"
                          r"citations|footnotes|contents|table of contents)$", re.IGNORECASE)


class Heading(BaseModel):
    heading: str
    source: HeadingSource
    cue: str = ""  # what the section is about, when known
    support: int = 0  # evidence sentences assigned to it
    parent: str | None = None
    evidence: list[int] = Field(default_factory=list, description="indices of its sentences")


class DocumentHeading(BaseModel):
    heading: str
    title: str = ""  # of the document it is from


class HeadingPlan(BaseModel):
    kind: str
    headings: list[Heading]  # in reading order; children right after their parent
    sentences: list[EvidenceSentence]


def is_reference_heading(heading: str) -> bool:
    return bool(_NOT_CONTENT.match(heading.strip().rstrip(":")))


def clean_heading(heading: str) -> str:
    """A document heading without its numbering ("Step 3. Inspection" → "Inspection") or end punctuation."""
    h = re.sub(r"^\s*(?:(?:section|rule|step|part|article|chapter|appendix)\s+)?(?:\d+(?:\.\d+)*[.):]?|[IVX]+\.)\s+",
               "", heading.strip(), flags=re.IGNORECASE)
    return h.strip(" :.-#*").strip()


def article_kind(topic: str, texts: Sequence[str], nlp: TextToolkit) -> ArticleKind:
    """The article kind whose description best fits the topic (and the evidence, if any)."""
    kinds = [kind_text(k) for k in ARTICLE_KINDS]
    score = similarity([topic], kinds, nlp)[0]
    if texts:
        centroid = vectors(list(texts), nlp, kinds).mean(axis=0)
        centroid /= max(float(np.linalg.norm(centroid)), 1e-9)
        score = 0.5 * score + 0.5 * (vectors(kinds, nlp, texts) @ centroid if nlp.has_embeddings
                                     else similarity([" ".join(texts)], kinds, nlp)[0])
    return ARTICLE_KINDS[int(np.argmax(np.round(score, 6)))]


def plan_headings(topic: str, texts: Sequence[str | Excerpt], nlp: TextToolkit, *,
                  document_headings: Sequence[str | DocumentHeading] = (), preferred: Sequence[str] = (),
                  max_headings: int = 12) -> HeadingPlan:
    """Headings the sentences of `texts` support, at most `max_headings` in all."""
    excerpts = [t if isinstance(t, Excerpt) else Excerpt(text=t) for t in texts]
    sentences = topical_sentences(topic, excerpts, nlp)
    kind = article_kind(topic, [s.text for s in sentences[:200]], nlp)
    if not sentences:
        return HeadingPlan(kind=kind.name, headings=[], sentences=[])
    docs = [d if isinstance(d, DocumentHeading) else DocumentHeading(heading=d) for d in document_headings]
    candidates, places = _candidates(docs, preferred)
    texts_c = [c.cue and f"{c.heading}: {c.cue}" or without_topic_words(c.heading, topic, nlp) for c in candidates]
    sim = similarity([s.text for s in sentences], texts_c, nlp)
    sim += _under_heading([excerpts[s.source].section for s in sentences], candidates)
    prior = np.array([_prior(c, kind, preferred) for c in candidates], dtype=np.float32)
    prior += _document_relevance(topic, candidates, places, nlp)
    score = np.round(sim + prior, 6)
    best = score.argmax(axis=1)
    assigned = sim[np.arange(len(sentences)), best] >= ASSIGN_THRESHOLD
    for i in np.flatnonzero(assigned):
        candidates[int(best[i])].evidence.append(int(i))
    need = max(MIN_SUPPORT, int(np.ceil(MIN_SHARE * len(sentences))))
    chosen = [c for c in candidates if len(c.evidence) >= need]
    if len(chosen) < MIN_FITTING:  # nothing fits: name the evidence by its own words
        chosen += _keyword_headings(topic, sentences, [i for i in range(len(sentences)) if not assigned[i]],
                                    need, nlp)
    for c in chosen:
        c.support = len(c.evidence)
    chosen.sort(key=lambda c: (-c.support, c.heading))
    chosen = _distinct(chosen, nlp)
    # thin evidence makes a short outline: about SENTENCES_PER_HEADING sentences for each heading
    chosen = chosen[:min(max_headings, max(MIN_HEADINGS, len(sentences) // SENTENCES_PER_HEADING))]
    return HeadingPlan(kind=kind.name, headings=_order(chosen, kind, candidates), sentences=sentences)


def _candidates(document_headings: Sequence[DocumentHeading], preferred: Sequence[str]
                ) -> tuple[list[Heading], dict[str, str]]:
    """The candidates, and for each document heading the text that places it (title: heading)."""
    out: dict[str, Heading] = {}
    places: dict[str, str] = {}
    for d in document_headings:
        h = clean_heading(d.heading)
        # a question ("Does my policy cover flood?") heads an FAQ entry, not an article section
        if h and not is_reference_heading(h) and len(h.split()) <= 8 and not h.endswith("?") and h.lower() not in out:
            out[h.lower()] = Heading(heading=h, source="document")
            places[h] = f"{d.title}: {h}" if d.title else h
    for name in [*preferred, *(s.heading for s in SECTION_TYPES)]:
        st = section_type(name)
        if name.lower() in out:
            continue
        if st is not None:
            out[name.lower()] = Heading(heading=st.heading, source="lexicon", cue=st.cue, parent=st.parent)
        elif not is_reference_heading(name):
            out[name.lower()] = Heading(heading=name, source="document")
            places[name] = name
    return list(out.values()), places


def _document_relevance(topic: str, candidates: list[Heading], places: dict[str, str],
                        nlp: TextToolkit) -> np.ndarray:
    """A prior for document headings: how related each is (in its document) to the topic, centred on
    the median, so a heading of the document about the topic beats one of a glossary."""
    out = np.zeros(len(candidates), dtype=np.float32)
    docs = [j for j, c in enumerate(candidates) if c.source == "document" and c.heading in places]
    if not docs:
        return out
    rel = similarity([topic], [places[candidates[j].heading] for j in docs], nlp)[0]
    centred = rel - float(np.median(rel))
    for j, r in zip(docs, centred):
        out[j] = DOCUMENT_TOPIC * float(r)
    return out


def _distinct(chosen: list[Heading], nlp: TextToolkit) -> list[Heading]:
    """Without near-synonyms ("Flood deductible" beside "Flood rider deductible"): the better
    supported keeps the other's evidence."""
    if len(chosen) < 2:
        return chosen
    sim = similarity([c.heading for c in chosen], [c.heading for c in chosen], nlp)
    kept: list[int] = []
    for i, c in enumerate(chosen):  # best supported first
        twin = next((j for j in kept if sim[i, j] >= SYNONYM and chosen[j].parent != c.heading
                     and c.parent != chosen[j].heading), None)
        if twin is None:
            kept.append(i)
        else:
            chosen[twin].evidence = sorted(set(chosen[twin].evidence) | set(c.evidence))
            chosen[twin].support = len(chosen[twin].evidence)
    return [chosen[i] for i in kept]


def _under_heading(sections: list[str], candidates: list[Heading]) -> np.ndarray:
    """UNDER_HEADING where a sentence's own section path names a document-heading candidate."""
    bonus = np.zeros((len(sections), len(candidates)), dtype=np.float32)
    paths = [{clean_heading(h).lower() for h in section.split(" > ") if h} for section in sections]
    for j, c in enumerate(candidates):
        if c.source == "document":
            key = c.heading.lower()
            for i, path in enumerate(paths):
                if key in path:
                    bonus[i, j] = UNDER_HEADING
    return bonus


def _prior(c: Heading, kind: ArticleKind, preferred: Sequence[str]) -> float:
    p = 0.0
    if c.heading in kind.sections:
        p += KIND_PRIOR
    if c.heading in preferred:
        p += PREFERRED_PRIOR
    return p


def _keyword_headings(topic: str, sentences: list[EvidenceSentence], left: list[int], need: int,
                      nlp: TextToolkit) -> list[Heading]:
    """Headings for evidence no candidate fits: a key phrase for each big enough cluster."""
    if len(left) < need:
        return []
    groups = nlp.cluster([sentences[i].text for i in left], max(1, len(left) // max(need * 2, 1)))
    topic_words = {w for w in nlp.content_tokens(topic)}
    out = []
    for g in groups:
        if len(g) < need:
            continue
        members = [left[i] for i in g]
        text = " ".join(sentences[i].text for i in members)
        phrase = next((p for p in nlp.keyphrases(text, k=10, max_words=3)
                       if not set(nlp.content_tokens(p)) <= topic_words and 1 <= len(p.split()) <= 3
                       and not any(ch.isdigit() for ch in p)), None)
        if phrase:
            out.append(Heading(heading=phrase[:1].upper() + phrase[1:], source="keywords", evidence=members))
    return out


def _order(chosen: list[Heading], kind: ArticleKind, candidates: list[Heading]) -> list[Heading]:
    """Reading order: the kind's usual order, then by where their evidence first appears;
    a lexicon child right after its parent (the parent added when it has any evidence)."""
    by_name = {c.heading: c for c in chosen}
    pool = {c.heading: c for c in candidates}
    for c in list(chosen):
        if c.parent and c.parent not in by_name and c.parent in pool and pool[c.parent].evidence:
            parent = pool[c.parent]
            parent.support = len(parent.evidence)
            by_name[parent.heading] = parent
    for c in by_name.values():
        if c.parent and c.parent not in by_name:
            c.parent = None

    def key(c: Heading) -> tuple:
        first = min(c.evidence) if c.evidence else 10**6
        if c.heading in kind.sections:
            return (0, kind.sections.index(c.heading), first)
        return (1, first, c.heading)

    tops = sorted((c for c in by_name.values() if not c.parent), key=key)
    out: list[Heading] = []
    for top in tops:
        out.append(top)
        out += sorted((c for c in by_name.values() if c.parent == top.heading), key=key)
    return out
