"""Surface entities by pattern: names, references, codes, dates (and times), quantities, numbers.

No trained NER: capitalisation and shapes. That is what bridge-entity hops need —
a name ("Maria Okafor"), a document reference ("Bulletin 2022-11"), a code
("HM-204"), a date ("12 March 2021") or a quantity ("14 days") that a passage
mentions and the question did not. Where matches overlap, the longer wins, then
the kind listed first in `KINDS`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.lm.text.tokens import ALL_STOPWORDS

EntityKind = Literal["date", "reference", "code", "quantity", "name", "number"]
KINDS: tuple[EntityKind, ...] = ("date", "reference", "code", "quantity", "name", "number")


class Entity(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str  # exactly source[start:end]
    kind: EntityKind
    start: int
    end: int

    @property
    def key(self) -> str:
        """Case- and space-insensitive identity, for de-duplication and lookups."""
        return " ".join(self.text.lower().split())


_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
MONTHS = frozenset("january february march april may june july august september october november december "
                   "jan feb mar apr jun jul aug sep sept oct nov dec".split())
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_NUM = r"(?<![\w.,/-])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_IDENT = r"(?:No\.\s?)?\d+(?:[-./]\d+)*[A-Za-z]?\b|[A-Z]{1,6}-?\d+[A-Za-z0-9]*(?:-\d+)*\b"
# Capitalised words that start adverbial phrases rather than name a document series.
_NOT_LABELS = ALL_STOPWORDS | MONTHS | WEEKDAYS | frozenset(
    "about above after almost approximately around before between by circa during from nearly only "
    "over roughly since some under until up within".split()
)

_PATTERNS: dict[EntityKind, re.Pattern] = {
    "date": re.compile(
        rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|{_DAY}(?: of)? {_MONTH},? {_YEAR}|{_MONTH} {_DAY},? {_YEAR}"
        rf"|{_MONTH},? {_YEAR}|{_YEAR}-(?:0[1-9]|1[0-2])|{_YEAR}s?|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}"
        rf"|\d{{1,2}}:\d{{2}}(?:\s?[ap]\.m\.|\s?[AP]M)?)(?!\w)"
    ),
    "reference": re.compile(rf"\b[A-Z][A-Za-z]+\.? (?:{_IDENT})"),
    "code": re.compile(r"\b(?:[A-Z]{1,6}[-/]?\d+[A-Za-z0-9]*(?:[-./]\d+[A-Za-z0-9]*)*|\d+[A-Z]{1,3}\b(?:-\d+)?)\b"),
    "quantity": re.compile(rf"(?:[$€£]\s?)?(?:{_NUM})(?:\s?%|\s(?:per cent|percent)|\s[a-z][a-z-]{{1,20}})"
                           rf"(?:\s(?:million|billion|thousand))?"),
    "name": re.compile(r"\b[A-Z][\w'’-]*(?:\s(?:(?:of|the|for|de|da|di|van|von|der|del|la|le|al|bin)\s)*"
                       r"[A-Z][\w'’-]*)*"),
    "number": re.compile(rf"(?:[$€£]\s?)?(?:{_NUM})%?"),
}


def extract_entities(text: str, kinds: tuple[EntityKind, ...] = KINDS) -> list[Entity]:
    """Entities of `kinds` in `text`, in order of position, none overlapping."""
    found: list[Entity] = []
    for kind in kinds:
        for m in _PATTERNS[kind].finditer(text):
            entity = _accept(kind, text, m.start(), m.end())
            if entity is not None:
                found.append(entity)
    rank = {k: i for i, k in enumerate(KINDS)}
    found.sort(key=lambda e: (-(e.end - e.start), rank[e.kind], e.start))
    taken: list[Entity] = []
    for e in found:
        if all(e.end <= t.start or e.start >= t.end for t in taken):
            taken.append(e)
    return sorted(taken, key=lambda e: e.start)


def _accept(kind: EntityKind, text: str, start: int, end: int) -> Entity | None:
    span = text[start:end]
    if kind == "reference":
        label = span.split()[0].rstrip(".").lower()
        if label in _NOT_LABELS:
            return None
    elif kind == "quantity":
        unit = span.split()[-1].lower() if not span.endswith("%") else "%"
        if unit in ALL_STOPWORDS or re.match(rf"{_YEAR}\s", span):  # "in 2021 looked at": a year
            return None
    elif kind == "name":
        return _name(text, start, end)
    return Entity(text=span, kind=kind, start=start, end=end)


def _name(text: str, start: int, end: int) -> Entity | None:
    """A capitalised run, less leading stopwords ("The"); a lone sentence-initial word
    counts only if it is an acronym or is capitalised mid-sentence elsewhere."""
    for m in re.finditer(r"\S+", text[start:end]):
        if m.group().lower() not in ALL_STOPWORDS:
            start += m.start()
            break
    else:
        return None
    span = text[start:end]
    words = span.split()
    if len(words) == 1:
        word = words[0]
        if word.lower() in MONTHS or word.lower() in WEEKDAYS:
            return None
        if _sentence_initial(text, start) and not word.isupper() and not _capitalised_elsewhere(text, word, start):
            return None
    return Entity(text=span, kind="name", start=start, end=end)


def _capitalised_elsewhere(text: str, word: str, start: int) -> bool:
    return any(m.start() != start and not _sentence_initial(text, m.start())
               for m in re.finditer(rf"\b{re.escape(word)}\b", text))


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?:\n#-*•>|"
