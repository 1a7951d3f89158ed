"""Sentences an extractive step may copy into prose, and similarity between texts.

A sentence is usable when it reads as prose on its own: not a table row, a
heading or a label line, long enough to say something, and finished. List
markers are cut from the front, so what is kept is still an exact substring
of the source (a citation can always be checked against the passage).

Similarity is the cosine of dense embeddings when the toolkit has an embedder,
else of tf-idf bags over the texts compared; numpy does the matrix work.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np
from pydantic import BaseModel

from agents.lm.nlp import TextToolkit
from agents.lm.text.instructions import is_instruction
from agents.lm.text.tokens import word_count
from retrieval.cjk import CJK_RUN

MIN_WORDS = 6
MAX_WORDS = 80
_LIST_MARKER = re.compile(r"^(?:[-*+•]\s+|\d{1,2}[.)]\s+)")
_FINISHED = re.compile(r"(?:[.!?…][\"'”’)\]]*|[。！？｡．][」』”’）)】〕〉》\]\"']*)$")
_CJK_OPENING = "「『（【《"
_LABEL_LINE = re.compile(r"^\*\*[^*]{1,40}:\*\*")
# "**Term** — definition", "**Item**, more items": a glossary or list entry, not prose; a dated
# entry ("**2012** — The rider is introduced") reads fine and keeps its date.
_BOLD_LEAD = re.compile(r"^\*\*(?!(?:1[5-9]|20)\d\d\*\*)[^*]+\*\*")


class EvidenceSentence(BaseModel):
    text: str  # an exact substring of its source's text
    source: int  # index into the list of sources it was cut from
    position: int  # order within that source


def usable(sentence: str) -> str | None:
    """`sentence` trimmed for prose, or None when it would not read on its own."""
    s = _LIST_MARKER.sub("", sentence.strip()).strip()
    if not (MIN_WORDS <= word_count(s) <= MAX_WORDS):
        return None
    if "|" in s or s.startswith("#") or _LABEL_LINE.match(s) or _BOLD_LEAD.match(s) or "\n" in s.strip():
        return None
    if not _FINISHED.search(s) or not (s[0].isupper() or s[0].isdigit() or s[0] in "\"'“(*" or _caseless(s[0])):
        return None
    if is_instruction(s):  # corpus text is data: an order to the model is never written as a finding
        return None
    return s


def _caseless(c: str) -> bool:
    """A letter of a script without case (a Chinese or Japanese character), or its opening bracket: it
    may start a sentence, as a capital does in English."""
    return c in _CJK_OPENING or (c.isalpha() and not c.isupper() and not c.islower())


_POINTS_BACK = re.compile(
    r"^(?:it|its|this|these|that|those|they|their|them|he|she|his|her|both|such|the latter|the former|"
    r"there|here|then|also|however|but|and|or|yet|so)\b", re.IGNORECASE)
_PERSONAL = re.compile(r"\b(?:he|she|they|him|her|them|his|hers|their)\b", re.IGNORECASE)


def stands_alone(sentence: str) -> bool:
    """Whether a sentence makes sense out of its paragraph: it does not open by pointing back ("It",
    "This", "However") nor name its subject only as "he" or "she" early on."""
    if _POINTS_BACK.match(sentence):
        return False
    return not _PERSONAL.search(" ".join(sentence.split()[:6]))


def sentences_of(texts: Sequence[str], nlp: TextToolkit) -> list[EvidenceSentence]:
    """Usable sentences of each text, each sentence once (first occurrence wins)."""
    seen: set[str] = set()
    out: list[EvidenceSentence] = []
    for i, text in enumerate(texts):
        for j, raw in enumerate(nlp.sentences(text)):
            s = usable(raw)
            key = " ".join(s.lower().split()) if s else None
            if s and key not in seen:
                seen.add(key)
                out.append(EvidenceSentence(text=s, source=i, position=j))
    return out


def vectors(texts: Sequence[str], nlp: TextToolkit, vocabulary_from: Sequence[str] = ()) -> np.ndarray:
    """Unit rows for `texts`: dense embeddings, or tf-idf over `texts` + `vocabulary_from`."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    if nlp.embeds([*texts, *vocabulary_from]):
        m = np.asarray(nlp.embed(list(texts)), dtype=np.float32)
    else:
        tokens = [nlp.content_tokens(t) for t in texts]
        background = [nlp.content_tokens(t) for t in vocabulary_from]
        vocab = {w: i for i, w in enumerate(sorted({w for ts in tokens + background for w in ts}))}
        docs = tokens + background
        df = np.zeros(max(1, len(vocab)))
        for ts in docs:
            for w in set(ts):
                df[vocab[w]] += 1
        idf = np.log((1 + len(docs)) / (1 + df)) + 1.0
        m = np.zeros((len(texts), max(1, len(vocab))), dtype=np.float32)
        for r, ts in enumerate(tokens):
            for w in ts:
                m[r, vocab[w]] += 1.0
        m = np.where(m > 0, 1.0 + np.log(np.maximum(m, 1.0)), 0.0) * idf
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def similarity(a: Sequence[str], b: Sequence[str], nlp: TextToolkit) -> np.ndarray:
    """|a| × |b| cosine matrix."""
    if not a or not b:
        return np.zeros((len(a), len(b)), dtype=np.float32)
    if nlp.embeds([*a, *b]):
        return vectors(a, nlp) @ vectors(b, nlp).T
    both = vectors([*a, *b], nlp)
    return both[: len(a)] @ both[len(a):].T


def content_overlap(a: str, b: str, nlp: TextToolkit, ignore: Sequence[str] = ()) -> int:
    """How many content stems `a` and `b` share, not counting those of `ignore` (e.g. the topic)."""
    skip = {t for text in ignore for t in nlp.content_tokens(text)}
    return len((set(nlp.content_tokens(a)) & set(nlp.content_tokens(b))) - skip)


def words(text: str) -> int:
    return len(text.split())


def rounded(x: float) -> float:
    """Scores are compared rounded, so float noise can never reorder near-ties between runs."""
    return math.floor(x * 1e6 + 0.5) / 1e6


def without_topic_words(text: str, topic: str, nlp: TextToolkit) -> str:
    """`text` less the words of `topic`: every piece of evidence is about the topic, so in a heading
    ("Flood rider deductible" for a flood topic) they only pull in every sentence naming it."""
    for run in CJK_RUN.findall(topic):  # unspaced words: the topic's runs go as written ("X图书馆借阅规则")
        text = text.replace(run, " ") if len(run) > 1 and text.replace(run, "").strip() else text
    topic_stems = set(nlp.content_tokens(topic))
    kept = [w for w in text.split() if not (set(nlp.content_tokens(w)) & topic_stems)]
    return " ".join(kept) if any(not nlp.is_stopword(w.strip(",.:;")) for w in kept) else text
