"""Find the headings a body of evidence supports: the extractive model's outline sense.

Candidates come from these places, in order of preference:

1. the heading structure of the related corpus documents, when they have one;
2. the lexicon of common encyclopedia section types (`lexicon.py`), with a prior
   for the usual sections of the article kind the topic looks like;
3. what the corpus itself keeps naming across its sources: places and other names
   (`entity_*`), and common-noun phrases (`phrase_*`);
4. short key phrases of clusters of evidence that no candidate fits.

Each usable evidence sentence goes to the candidate it is most similar to (when
similar enough); a candidate with enough sentences becomes a heading, and so does a
usual section of the article kind with enough sentences close to it, even where
other candidates took them (`kind_claim`). Lexicon
sections that usually sit under another become its subsections. A heading may
then have to pass a small logistic filter over what is known of it
(`heading_features`), its coefficients chosen by cross-validation.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from agents.lm.nlp import TextToolkit
from agents.storm.evidence import EvidenceSentence, similarity, stands_alone, without_topic_words
from agents.storm.heading_filter import heading_features, passes_filter
from agents.storm.heading_models import (
    ConsideredHeading, DocumentHeading, Heading, HeadingPlan)
from agents.storm.outline_params import OUTLINE_PARAMS, OutlineParams
from agents.storm.topicality import topical_sentences
from agents.storm.lexicon import SECTION_TYPES, ArticleKind, article_kind, kind_fit, section_type
from retrieval.cjk import has_cjk
from retrieval.documents import PassageText

_NOT_CONTENT = re.compile(r"^(references|see also|notes|external links|further reading|bibliography|sources|"
                          r"citations|footnotes|contents|table of contents)$", re.IGNORECASE)


def is_reference_heading(heading: str) -> bool:
    return bool(_NOT_CONTENT.match(heading.strip().rstrip(":")))


def clean_heading(heading: str) -> str:
    """A document heading without its numbering ("Step 3. Inspection" → "Inspection") or end punctuation."""
    h = re.sub(r"^\s*(?:(?:section|rule|step|part|article|chapter|appendix)\s+)?(?:\d+(?:\.\d+)*[.):]?|[IVX]+\.)\s+",
               "", heading.strip(), flags=re.IGNORECASE)
    return h.strip(" :.-#*").strip()


def plan_headings(topic: str, texts: Sequence[str | PassageText], nlp: TextToolkit, *,
                  document_headings: Sequence[str | DocumentHeading] = (), preferred: Sequence[str] = (),
                  max_headings: int | None = None, params: OutlineParams | None = None) -> HeadingPlan:
    """Headings the sentences of `texts` support, at most `max_headings` in all."""
    p = params or OUTLINE_PARAMS
    max_headings = p.max_headings if max_headings is None else max_headings
    excerpts = [t if isinstance(t, PassageText) else PassageText(text=t) for t in texts]
    sentences = topical_sentences(topic, excerpts, nlp, p.topicality())
    kind = article_kind(topic, [s.text for s in sentences[:200]], nlp, p.kind_evidence, p.person_evidence)
    if not sentences:
        return HeadingPlan(kind=kind.name, headings=[], sentences=[])
    docs = [d if isinstance(d, DocumentHeading) else DocumentHeading(heading=d) for d in document_headings]
    fit = kind_fit(kind, [s.text for s in sentences[:200]], nlp)
    preferred = [h for h in preferred if h not in p.dropped_sections]
    lexicon = [s.heading for s in SECTION_TYPES] if p.lexicon_scope == "all" else list(kind.sections)
    candidates, places = _candidates(docs, preferred, [h for h in lexicon if h not in p.dropped_sections])
    texts_c = [heading_text(c, topic, nlp) for c in candidates]
    sim = similarity([s.text for s in sentences], texts_c, nlp)
    sim += _under_heading([excerpts[s.source].section for s in sentences], candidates, p.under_heading)
    prior = np.array([_prior(c, kind, preferred, p) for c in candidates], dtype=np.float32)
    prior += p.document_topic * _document_relevance(topic, candidates, places, nlp)
    score = np.round(sim + prior, 6)
    best = score.argmax(axis=1) if candidates else np.zeros(len(sentences), dtype=int)
    assigned = (sim[np.arange(len(sentences)), best] >= p.assign_threshold if candidates
                else np.zeros(len(sentences), dtype=bool))  # no candidate at all: the evidence names itself
    for i in np.flatnonzero(assigned):
        candidates[int(best[i])].evidence.append(int(i))
    need = max(p.min_support, int(np.ceil(p.min_share * len(sentences))))
    chosen = [c for c in candidates if len(c.evidence) >= need]
    if p.kind_claim < 1:  # a usual section of the kind keeps the sentences close to it that others took
        for j, c in enumerate(candidates):
            if c.heading not in kind.sections or len(c.evidence) >= need:
                continue
            close = np.flatnonzero(sim[:, j] >= p.kind_claim)
            if len(close) >= need:
                c.evidence = sorted(set(c.evidence) | {int(i) for i in close})
                chosen.append(c)
    if len(chosen) < p.min_fitting:  # nothing fits: name the evidence by its own words
        chosen += _keyword_headings(topic, sentences, [i for i in range(len(sentences)) if not assigned[i]],
                                    need, nlp)
    if p.entity_headings:
        taken = {c.heading.lower() for c in chosen}
        chosen += [e for e in _entity_headings(topic, sentences, excerpts, need, p, nlp)
                   if e.heading.lower() not in taken]
    if p.phrase_headings and fit < p.phrase_max_fit:
        taken = {c.heading.lower() for c in chosen}
        chosen += [h for h in _phrase_headings(topic, sentences, excerpts, need, p, nlp)
                   if h.heading.lower() not in taken]
    for c in chosen:
        c.support = len(c.evidence)
    chosen.sort(key=lambda c: (-c.support, c.heading))
    chosen = _distinct(chosen, nlp, p.synonym)
    cohesion = _cohesion(topic, chosen, sentences, nlp)
    features = heading_features(chosen, cohesion, kind, fit, len(sentences))
    considered = [ConsideredHeading(heading=c.heading, features=f.tolist()) for c, f in zip(chosen, features)]
    keep = np.array([p.min_cohesion <= 0 or x >= p.min_cohesion for x in cohesion], dtype=bool)
    if p.heading_filter:
        keep &= passes_filter(features, p.heading_filter, p.filter_threshold)
    keep &= _writable(chosen, sentences, excerpts, topic, nlp, p.writable_fit)
    if chosen and not keep.any():  # some evidence always keeps a heading: the most cohesive
        keep[int(np.argmax(cohesion))] = True
    chosen = [c for c, k in zip(chosen, keep) if k]
    # thin evidence makes a short outline: about `sentences_per_heading` sentences for each heading
    chosen = chosen[:min(max_headings, max(p.min_headings, len(sentences) // p.sentences_per_heading))]
    return HeadingPlan(kind=kind.name, headings=_order(chosen, kind, candidates), sentences=sentences,
                       considered=considered)


def _candidates(document_headings: Sequence[DocumentHeading], preferred: Sequence[str], lexicon: Sequence[str]
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
    for name in [*preferred, *lexicon]:
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
        out[j] = float(r)
    return out


def _distinct(chosen: list[Heading], nlp: TextToolkit, synonym: float) -> list[Heading]:
    """Without near-synonyms ("Flood deductible" beside "Flood rider deductible"): the better
    supported keeps the other's evidence."""
    if len(chosen) < 2:
        return chosen
    sim = similarity([c.heading for c in chosen], [c.heading for c in chosen], nlp)
    kept: list[int] = []
    for i, c in enumerate(chosen):  # best supported first
        twin = next((j for j in kept if sim[i, j] >= synonym and chosen[j].parent != c.heading
                     and c.parent != chosen[j].heading), None)
        if twin is None:
            kept.append(i)
        else:
            chosen[twin].evidence = sorted(set(chosen[twin].evidence) | set(c.evidence))
            chosen[twin].support = len(chosen[twin].evidence)
    return [chosen[i] for i in kept]


def heading_text(c: Heading, topic: str, nlp: TextToolkit) -> str:
    """What a candidate is matched to evidence by: its name and cue, or its name less the topic's words."""
    return c.cue and f"{c.heading}: {c.cue}" or without_topic_words(c.heading, topic, nlp)


def _cohesion(topic: str, chosen: list[Heading], sentences: list[EvidenceSentence], nlp: TextToolkit
              ) -> list[float]:
    """For each heading, how similar its sentences are on average to its own text: low when the
    evidence went to it for want of a better heading."""
    return [float(similarity([sentences[i].text for i in c.evidence], [heading_text(c, topic, nlp)],
                             nlp).mean()) if c.evidence else 0.0 for c in chosen]


def _writable(chosen: list[Heading], sentences: list[EvidenceSentence], excerpts: Sequence[PassageText], topic: str,
              nlp: TextToolkit, floor: float) -> np.ndarray:
    """For each heading, whether the section writer could write it from this evidence: some sentence
    stands alone and fits the heading at least `floor` (the writer's `steps_article.MIN_HEADING_FIT`),
    or was written under a heading of that name. The writer leaves a section no sentence fits empty,
    and the report drops it; left out here, the heading does not take the place of one it can write."""
    if floor <= 0 or not chosen:
        return np.ones(len(chosen), dtype=bool)
    usable = [s for s in sentences if stands_alone(s.text)]
    if not usable:
        return np.zeros(len(chosen), dtype=bool)
    fit = np.round(similarity([s.text for s in usable], [heading_text(c, topic, nlp) for c in chosen], nlp), 6)
    ok = fit.max(axis=0) >= floor
    paths = [{clean_heading(h).lower() for h in excerpts[s.source].section.split(" > ") if h} for s in usable]
    return ok | np.array([any(c.heading.lower() in path for path in paths) for c in chosen], dtype=bool)


def _under_heading(sections: list[str], candidates: list[Heading], weight: float) -> np.ndarray:
    """`weight` where a sentence's own section path names a document-heading candidate."""
    bonus = np.zeros((len(sections), len(candidates)), dtype=np.float32)
    paths = [{clean_heading(h).lower() for h in section.split(" > ") if h} for section in sections]
    for j, c in enumerate(candidates):
        if c.source == "document":
            key = c.heading.lower()
            for i, path in enumerate(paths):
                if key in path:
                    bonus[i, j] = weight
    return bonus


def _prior(c: Heading, kind: ArticleKind, preferred: Sequence[str], p: OutlineParams) -> float:
    bonus = 0.0
    if c.heading in kind.sections:
        bonus += p.kind_prior
    if c.heading in preferred:
        bonus += p.preferred_prior
    return bonus


PLACE_WORDS = ("country", "city")


def _entity_headings(topic: str, sentences: list[EvidenceSentence], excerpts: list[PassageText], need: int,
                     p: OutlineParams, nlp: TextToolkit) -> list[Heading]:
    """Names (places, parties, organisations) that many sentences from several sources mention: the
    corpus's own subjects, e.g. the countries a storm struck. Not the topic's own words."""
    topic_words = set(nlp.content_tokens(topic))
    mentions: dict[str, list[int]] = {}
    sources: dict[str, set[str]] = {}
    surface: dict[str, str] = {}
    for i, s in enumerate(sentences):
        for e in {e.text for e in nlp.entities(s.text, kinds=("name",))}:
            name = re.sub(r"['’]s$", "", e).strip()
            words = set(nlp.content_tokens(name))
            if not words or words & topic_words or len(name.split()) > 3:
                continue
            key = name.lower()
            surface.setdefault(key, name)
            if i not in mentions.setdefault(key, []):
                mentions[key].append(i)
            sources.setdefault(key, set()).add(excerpts[s.source].title or f"#{s.source}")
    need = max(need, int(np.ceil(p.entity_min_share * len(sentences))))
    found = [k for k in mentions if len(mentions[k]) >= need and len(sources[k]) >= p.entity_min_sources]
    if found and p.entity_place > 0:
        place = similarity([surface[k] for k in found], list(PLACE_WORDS), nlp).max(axis=1)
        found = [k for k, x in zip(found, place) if x >= p.entity_place]
    found.sort(key=lambda k: (-len(mentions[k]), k))
    return [Heading(heading=surface[k], source="entity", evidence=mentions[k]) for k in found[:p.entity_headings]]


_DETERMINERS = {"the", "a", "an", "its", "their", "his", "her", "this", "these", "those", "our", "each"}


def _phrase_headings(topic: str, sentences: list[EvidenceSentence], excerpts: list[PassageText], need: int,
                     p: OutlineParams, nlp: TextToolkit) -> list[Heading]:
    """Common-noun phrases (one or two words, lower case as written) that sentences from many sources use:
    what the corpus itself keeps talking about, e.g. the kinds of equipment an article on gear covers.
    Not the topic's own words; ranked by how many sources use them."""
    topic_words = set(nlp.content_tokens(topic))
    mentions: dict[str, list[int]] = {}
    sources: dict[str, set[str]] = {}
    forms: dict[str, dict[str, int]] = {}
    named: dict[str, int] = {}  # mentions right after a determiner ("the rope"): a noun, not a verb
    for i, s in enumerate(sentences):
        for phrase in nlp.keyphrases(s.text, k=100, max_words=2):
            if not phrase.islower() or not phrase.replace(" ", "").isalpha() or len(phrase) < 4:
                continue
            words = nlp.content_tokens(phrase)
            if not words or set(words) & topic_words:
                continue
            key = " ".join(words)
            if i not in mentions.setdefault(key, []):
                mentions[key].append(i)
                before = s.text[:s.text.find(phrase)].split()
                named[key] = named.get(key, 0) + (bool(before) and before[-1].lower() in _DETERMINERS)
            sources.setdefault(key, set()).add(excerpts[s.source].title or f"#{s.source}")
            forms.setdefault(key, {}).setdefault(phrase, 0)
            forms[key][phrase] += 1
    need = max(need, int(np.ceil(p.phrase_min_share * len(sentences))))
    found = [k for k in mentions if len(mentions[k]) >= need and len(sources[k]) >= p.phrase_min_sources
             and named.get(k, 0) >= p.phrase_noun_share * len(mentions[k])]
    found.sort(key=lambda k: (-len(sources[k]), -len(mentions[k]), k))
    out = []
    for k in found[:p.phrase_headings]:
        surface = max(forms[k], key=lambda f: (forms[k][f], f))
        out.append(Heading(heading=surface[:1].upper() + surface[1:], source="phrase", evidence=mentions[k]))
    return out


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
                       if not set(nlp.content_tokens(_past_topic(p, topic, nlp))) <= topic_words
                       and 1 <= len(p.split()) <= 3
                       and not any(ch.isdigit() for ch in p)), None)
        if phrase:
            out.append(Heading(heading=phrase[:1].upper() + phrase[1:], source="keywords", evidence=members))
    return out


def _past_topic(phrase: str, topic: str, nlp: TextToolkit) -> str:
    """A Chinese or Japanese phrase less the topic as written: its bigrams that straddle the topic's end
    ("…図書館は" gives "館は") would otherwise pass for words of its own. Other phrases as they are."""
    return without_topic_words(phrase, topic, nlp) if has_cjk(phrase) else phrase


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
