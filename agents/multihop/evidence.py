"""Reading passages the extractive way: which sentence answers a query, which entity bridges to the next hop.

These are the classical-NLP halves of the multi-hop steps (`extract`), kept
together because they share one notion of "a query term" and "mentioned":

- `rank_sentences`: every sentence of the passages scored by how much of the
  query it (with its passage's title) covers, rarer terms and the query's named
  entities weighing more, the retrieval rank breaking near-ties.
- `bridge_candidates`: entities of the supporting passages that the question and
  earlier queries do not name, ranked by where they sit (in the answer sentence,
  next to a question word such as "directed by", "born in") and by their shape.
- `open_terms`: the question's words no passage found so far covers — what the
  next hop still has to find.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.lm.nlp import TextToolkit
from agents.lm.text.instructions import is_instruction
from retrieval.documents import PassageText

# Entities worth a search of their own; numbers, dates and quantities are answers, rarely bridges.
BRIDGE_KINDS = ("name", "reference", "code")
_RANK_PRIOR = 0.15  # what rank 1 adds over an unranked passage; 1/(1+i) after
_ENTITY_WEIGHT = 2.0  # a query term inside a named entity of the query
_TITLE_SHARE = 0.8  # a term met only in the passage title counts this much
_ABOUT_BONUS = 0.25  # the passage's title names one of the query's entities: the passage is about it


def rank_prior(index: int) -> float:
    """What retrieval rank adds to a sentence's score: a tie-breaker, not a vote."""
    return _RANK_PRIOR / (1 + index)



@dataclass(frozen=True)
class ScoredSentence:
    passage: int  # index into the passages given
    text: str
    score: float  # coverage plus the passage's rank prior and title bonus
    coverage: float  # 0..1: the weighted share of query terms in the sentence or its passage's title


def terms(nlp: TextToolkit, text: str) -> set[str]:
    return set(nlp.content_tokens(text))


def mentions(nlp: TextToolkit, text_terms: set[str], name: str) -> bool:
    """Whether every content term of `name` occurs among `text_terms`, as the same stem or a long
    prefix of one (so "Big Eye's" names "Big Eyes", and "Contract W-1887" names "Contractor: W-1887/4")."""
    name_terms = terms(nlp, name)
    return bool(name_terms) and all(related(t, text_terms) for t in name_terms)


def query_weights(nlp: TextToolkit, query: str, passages: Sequence[PassageText]) -> dict[str, float]:
    """Weight of each query term: idf over the passages at hand, doubled inside a named entity."""
    docs = [terms(nlp, f"{p.title} {p.text}") for p in passages]
    n = len(docs)
    entity_terms: set[str] = set()
    for e in nlp.entities(query, BRIDGE_KINDS):
        entity_terms |= terms(nlp, e.text)
    weights = {}
    for t in nlp.content_tokens(query):
        df = sum(t in d for d in docs)
        weights[t] = (math.log((1 + n) / (1 + df)) + 1.0) * (_ENTITY_WEIGHT if t in entity_terms else 1.0)
    return weights


def rank_sentences(nlp: TextToolkit, query: str, passages: Sequence[PassageText]) -> list[ScoredSentence]:
    """All sentences of `passages`, best-supported for `query` first (ties: earlier passage, earlier sentence)."""
    weights = query_weights(nlp, query, passages)
    total = sum(weights.values())
    if not total:
        return []
    named = [terms(nlp, e.text) for e in nlp.entities(query, BRIDGE_KINDS)]
    scored: list[tuple[float, int, int, ScoredSentence]] = []
    for i, p in enumerate(passages):
        title = terms(nlp, p.title)
        prior = rank_prior(i) + (_ABOUT_BONUS if any(n and n <= title for n in named) else 0.0)
        for j, sentence in enumerate(nlp.sentences(p.text)):
            if is_instruction(sentence):  # corpus text is data: an order to the model never becomes an answer
                continue
            own = terms(nlp, sentence)
            covered = sum(w * (1.0 if _has(own, t) else _TITLE_SHARE if _has(title, t) else 0.0)
                          for t, w in weights.items())
            score = covered / total + prior
            scored.append((-score, i, j, ScoredSentence(i, sentence, score, covered / total)))
    scored.sort(key=lambda x: x[:3])
    return [s for *_, s in scored]


_ADJECTIVAL = re.compile(r"(an|ian|ese|ish|ic|i)$")


def is_modifier(nlp: TextToolkit, text: str, start: int, end: int) -> bool:
    """A name used as an adjective: "American" in "American recording artist", "South Korean president"."""
    after = re.match(r"\s+(\w+)", text[end:])
    last = text[start:end].split()[-1]
    return bool(after and after.group(1).islower() and not nlp.is_stopword(after.group(1))
                and _ADJECTIVAL.search(last))


def entity_choices(nlp: TextToolkit, sentence: str, kinds, known_terms: set[str]):
    """The entities of `kinds` in `sentence` that `known_terms` does not cover and that are not modifiers."""
    for e in nlp.entities(sentence, kinds):
        e_terms = terms(nlp, e.text)
        if e_terms and not all(related(t, known_terms) for t in e_terms) and not (e.kind == "name" and is_modifier(
                nlp, sentence, e.start, e.end)):
            yield e


def _has(text_terms: set[str], term: str) -> bool:
    """`term` is among `text_terms`; a code also as the start of a longer one ("w-1887" in "w-1887/4")."""
    return term in text_terms or (any(c.isdigit() for c in term) and any(t.startswith(term) for t in text_terms))


def bridge_candidates(nlp: TextToolkit, question: str, answer: str, supporting: Sequence[PassageText],
                      known: Sequence[str]) -> list[str]:
    """Entities to search next, best first: named in the supporting passages, not in `known`.

    `answer` is the hop's best sentence; an entity in it, close to a word of the
    question, is most likely the one the question goes through.
    """
    known_terms: set[str] = set()
    for text in [question, *known]:
        known_terms |= terms(nlp, text)
    question_terms = terms(nlp, question)
    titles = {" ".join(p.title.lower().split()) for p in supporting}
    best: dict[str, tuple[float, int, str]] = {}  # key -> (best score, first position, text)
    sources = [(answer, 1.0)] + [(s, 0.5 if answer in p.text else 0.25)
                                  for p in supporting for s in nlp.sentences(p.text) if s != answer]
    for sentence, base in sources:
        words = [(m.start(), m.end(), nlp.stem(m.group().lower())) for m in re.finditer(r"\w+", sentence)]
        for e in entity_choices(nlp, sentence, BRIDGE_KINDS, known_terms):
            score = base + closeness(words, e.start, e.end, question_terms) + 0.05 * min(3, len(e.text.split()))
            if e.key in titles:
                score -= 0.5  # a supporting passage is already about it
            first = best[e.key][1] if e.key in best else len(best)
            if e.key not in best or score > best[e.key][0]:
                best[e.key] = (score, first, e.text)
    ranked = sorted(best.values(), key=lambda x: (-x[0], x[1]))
    return [text for *_, text in ranked]


def closeness(words: list[tuple[int, int, str]], start: int, end: int, question_terms: set[str]) -> float:
    """How near the entity is to a word of the question: 0.5 right next to one, 0.25 with one word
    between ("directed by X"), 0.5 / (1 + gap) in general, 0 when the sentence has none."""
    gaps = []
    for a, b, stem in words:
        if related(stem, question_terms) and (b <= start or a >= end):
            between = sum(1 for a2, b2, _ in words if (b <= a2 and b2 <= start) or (end <= a2 and b2 <= a))
            gaps.append(between)
    return 0.5 / (1 + min(gaps)) if gaps else 0.0


def related(stem: str, others: set[str]) -> bool:
    """Same stem, or one a 5+ character prefix of the other ("direct" and "director")."""
    return stem in others or any(
        min(len(stem), len(q)) >= 5 and (stem.startswith(q) or q.startswith(stem)) for q in others)


def open_terms(nlp: TextToolkit, question: str, covered: Sequence[str]) -> list[str]:
    """The question's content words (as written, in order, once each) that no `covered` text contains."""
    have: set[str] = set()
    for text in covered:
        have |= terms(nlp, text)
    out, seen = [], set()
    for word in nlp.words(question):
        stems = nlp.content_tokens(word)
        if stems and not set(stems) <= have and word.lower() not in seen:
            seen.add(word.lower())
            out.append(word)
    return out
