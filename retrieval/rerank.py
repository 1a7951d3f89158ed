"""A second stage after hybrid retrieval: re-order a deeper candidate list by finer evidence.

No cross-encoder can be installed offline with its weights inside a PyPI package (searched:
the ms-marco MiniLM and jina rerankers are published on the Hugging Face hub only, FlashRank
downloads them at run time), so this reranker is built from what raystorm already has: the
MiniLM embedder and plain term statistics. Each candidate gets six features, standardised
over the candidate list of its query, and a weighted sum orders them:

- `first`: the first stage's own order (1 / rank);
- `passage`: cosine of the query and the whole passage (title and text);
- `sentence`: the best cosine of the query and one sentence of the passage, which a long
  passage's average hides;
- `terms`: the IDF-weighted share of the query's words the passage text holds (IDF over the
  candidates: a word every candidate has tells none apart);
- `title`: the IDF-weighted share of the query's words the title holds; a question names the
  entities its evidence is about, and a passage's title usually is its entity;
- `proximity`: how close together the query's words sit in the passage.

The weights are chosen by cross-validation on the multi-hop dev sets (`scripts/calibrate/cv_rerank.py`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from retrieval.documents import Passage
from retrieval.stopwords import STOPWORDS

FEATURES = ("first", "passage", "sentence", "terms", "title", "proximity")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“(])")


class RerankSettings(BaseModel):
    """How the second stage re-orders: how deep it reads and how it weighs each feature.

    The weights are the ones `python -m scripts.calibrate.cv_rerank` chose on all 100 dev questions (in-sample
    R@2/R@5 0.535/0.680 MuSiQue, 0.700/0.840 HotpotQA, against 0.480/0.650 and 0.690/0.830 for the
    first stage). Chosen on 4 folds and scored on the 5th they give 0.490/0.638 and 0.670/0.830: no
    gain on unseen questions, so `SearchSettings.rerank` is off by default."""

    model_config = ConfigDict(frozen=True)

    depth: int = Field(4, ge=1, description="rerank k * depth first-stage candidates")
    first: float = 1.0
    passage: float = 0.5
    sentence: float = 1.0
    terms: float = 1.0
    title: float = 1.0
    proximity: float = 0.5

    def weights(self) -> np.ndarray:
        return np.array([getattr(self, f) for f in FEATURES], dtype=np.float64)


def words(text: str) -> list[str]:
    """Lowercase content words, a possessive and a plural's trailing s cut ("bulletins" meets "bulletin")."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in STOPWORDS or len(w) < 2:
            continue
        w = re.sub(r"['’]s$", "", w)  # the possessive: "Curie's" is Curie
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def sentences(text: str, max_sentences: int = 12) -> list[str]:
    parts = [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]
    return parts[:max_sentences] or [text]


def _unit(rows) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


def _proximity(query_words: set[str], text_words: list[str]) -> float:
    """1 / the shortest span (in words) that holds two distinct query words; 0 if none does."""
    best = math.inf
    last: dict[str, int] = {}
    for i, w in enumerate(text_words):
        if w in query_words:
            others = [j for q, j in last.items() if q != w]
            if others:
                best = min(best, i - max(others) + 1)
            last[w] = i
    return 0.0 if best == math.inf else 1.0 / best


def features(query: str, passages: Sequence[Passage], embed) -> np.ndarray:
    """|passages| x len(FEATURES) raw features, in the first stage's order. `embed(texts)` -> vectors."""
    n = len(passages)
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    q_words = set(words(query))
    bags = [words(p.text) for p in passages]
    titles = [set(words(p.title)) for p in passages]
    df = {w: sum(w in set(b) or w in t for b, t in zip(bags, titles)) for w in q_words}
    idf = {w: math.log((n + 1) / (df[w] + 0.5)) for w in q_words}
    total = sum(idf.values()) or 1.0
    splits = [sentences(p.text) for p in passages]
    flat = [s for group in splits for s in group]
    vectors = _unit(embed([query, *(f"{p.title}\n{p.text}" for p in passages), *flat]))
    q, whole, sent = vectors[0], vectors[1:n + 1], vectors[n + 1:]
    sent_cos = sent @ q
    out = np.zeros((n, len(FEATURES)))
    at = 0
    for i, p in enumerate(passages):
        bag = set(bags[i])
        out[i] = (1.0 / (i + 1), float(whole[i] @ q), float(sent_cos[at:at + len(splits[i])].max()),
                  sum(idf[w] for w in q_words & bag) / total, sum(idf[w] for w in q_words & titles[i]) / total,
                  _proximity(q_words, bags[i]))
        at += len(splits[i])
    return out


def standardise(x: np.ndarray) -> np.ndarray:
    """Each feature centred and scaled over the candidate list (a constant feature becomes 0)."""
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd < 1e-9, 1.0, sd)


def order(x: np.ndarray, settings: RerankSettings) -> list[int]:
    """Candidate indices, best first (ties keep the first stage's order)."""
    if len(x) == 0:
        return []
    score = np.round(standardise(x) @ settings.weights(), 9)
    return sorted(range(len(x)), key=lambda i: (-score[i], i))


class Reranker:
    """Re-orders first-stage candidates; `embed` is the collection's dense embedder's `embed`."""

    def __init__(self, embed, settings: RerankSettings | None = None):
        self.embed = embed
        self.settings = settings or RerankSettings()

    def rerank(self, query: str, passages: Sequence[Passage], k: int | None = None) -> list[int]:
        """Indices into `passages` of the best `k` (all if None), best first."""
        ranked = order(features(query, passages, self.embed), self.settings)
        return ranked if k is None else ranked[:k]
