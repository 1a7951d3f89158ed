"""Sentence splitting that returns spans, so every sentence is an exact substring.

Rule-based, in the Punkt tradition without its training: a sentence ends at
. ! ? (or …), or at Chinese and Japanese 。！？ whatever follows them,
after any closing quotes/brackets and citation marks like "[3]",
when whitespace and an upper-case letter, digit or opening quote follow (bold or not), unless
the word before the period is a known abbreviation, an initial ("J. Smith") or
dotted initials ("U.S."). Decimals ("3.5") never qualify, having no space after
the dot. Blank lines, markdown headings (each one sentence), list items, lines
opening in bold ("**Issued:** ...") and short title lines end a sentence too.
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt ft vs v e.g i.e cf al approx ca est fig figs no nos vol vols "
    "p pp ed eds eq ref refs sec art ch op inc ltd co corp dept univ assn bros gen col lt sgt capt "
    "cmdr adm gov sen rep rev hon messrs jan feb mar apr jun jul aug sep sept oct nov dec".split()
)

_CITES = r"(?:\s?\[\d+(?:[,–-]\s*\d+)*\])*"
_END = re.compile(r"[.!?…]+[\"'”’)\]]*" + _CITES)
_NEXT_STARTS = re.compile(r"\s+(?=(?:\*\*)?[\"'“‘(\[]?[A-Z0-9À-Ý])")  # "**2024** — ..." starts one too
# Chinese and Japanese end a sentence at 。！？ (or the half-width ｡ and the full-width ．), then their
# closing brackets and quotes; no space follows and there is no case, so whatever comes next starts one.
_CJK_END = re.compile(r"[。！？｡．]+[」』”’）)】〕〉》\]\"']*" + _CITES)
_CJK_NEXT = re.compile(r"\s*(?=\S)")
_BLOCK_LINE = re.compile(r"^\s*(?:#{1,6}\s|[-*+•]\s|\d+[.)]\s|>\s?|\||\*\*)")
_TERMINAL = re.compile(r"[.!?…:;,\"'”’)\]]$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, whitespace trimmed, in order."""
    spans: list[tuple[int, int]] = []
    for start, end in _blocks(text):
        if text.startswith("#", start):  # a heading is one sentence, "## Section 1. Purpose" too
            spans.append((start, end))
            continue
        cut = start
        for m, after in _ends(text, start, end):
            if m.start() < cut or after is None or _is_abbreviation(text, cut, m.start(), m.group()):
                continue
            spans.append((cut, m.end()))
            cut = after.end()
        spans.append((cut, end))
    return [s for s in (_trim(text, a, b) for a, b in spans) if s[0] < s[1]]


def _ends(text: str, start: int, end: int) -> list[tuple[re.Match, re.Match | None]]:
    """Each sentence ending in text[start:end], in order, with the match of what may start the next
    sentence (None: nothing that may)."""
    found = [(m, _NEXT_STARTS.match(text, m.end(), end)) for m in _END.finditer(text, start, end)]
    found += [(m, _CJK_NEXT.match(text, m.end(), end)) for m in _CJK_END.finditer(text, start, end)]
    return sorted(found, key=lambda f: f[0].start())


def sentences(text: str) -> list[str]:
    """The sentences of `text`, each exactly `text[start:end]` for its span."""
    return [text[a:b] for a, b in sentence_spans(text)]


def _blocks(text: str) -> list[tuple[int, int]]:
    """Spans that no sentence crosses: paragraphs, headings, list items, title lines."""
    blocks: list[tuple[int, int]] = []
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]*(?:\n|$)", text) if m.end() > m.start()]
    start: int | None = None
    for i, (a, b) in enumerate(lines):
        line = text[a:b].strip()
        if not line:  # blank line: paragraph break
            if start is not None:
                blocks.append((start, a))
                start = None
            continue
        if _BLOCK_LINE.match(text[a:b]) and start is not None:
            blocks.append((start, a))
            start = None
        if start is None:
            start = a
        following = text[lines[i + 1][0]:lines[i + 1][1]].strip() if i + 1 < len(lines) else ""
        if _ends_block(line, following):
            blocks.append((start, b))
            start = None
    if start is not None:
        blocks.append((start, len(text)))
    return blocks


def _ends_block(line: str, following: str) -> bool:
    if line.startswith("#"):
        return True
    # a short line with no closing punctuation before a capitalised line is a title
    return bool(following) and len(line) < 50 and not _TERMINAL.search(line) and following[:1].isupper()


def _is_abbreviation(text: str, sentence_start: int, dot: int, ending: str) -> bool:
    if not ending.startswith(".") or ending.startswith(".."):
        return False
    word_start = dot
    while word_start > sentence_start and not text[word_start - 1].isspace() and text[word_start - 1] not in "([\"'“":
        word_start -= 1
    word = text[word_start:dot]
    if word.lower() in ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isupper():  # an initial
        return True
    return bool(re.fullmatch(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,2}", word))  # U.S., e.g., Ph.D


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b
