"""`[n]` citations: find them, keep only those that point somewhere, renumber them.

Every text a step writes cites its own numbered source list. Before it joins the
article its markers are mapped to the article's one index (one number per source
URL, in order of first appearance); a marker that points nowhere is removed,
never printed. Replies cut off mid-sentence lose the unfinished tail.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

CITATION = re.compile(r"\[(\d+(?:\s*[,–-]\s*\d+)*)\]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
# Chinese and Japanese 。！？ end a sentence too, with their own closing brackets and no space after
_CJK_STOP = r"[。！？｡．][」』”’）)】〕〉》\]\"']*"
_ENDS_SENTENCE = re.compile(r"(?:[.!?…][\"'”’)\]]*|" + _CJK_STOP + ")$")


def cited_numbers(text: str) -> list[int]:
    """Every number cited in `text`, in order of first appearance ("[2, 4]" and "[2-4]" count)."""
    seen: list[int] = []
    for m in CITATION.finditer(text):
        for n in _expand(m.group(1)):
            if n not in seen:
                seen.append(n)
    return seen


def _expand(group: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*,\s*", group):
        bounds = re.split(r"\s*[–-]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            lo, hi = int(bounds[0]), int(bounds[1])
            out += list(range(lo, hi + 1)) if 0 < hi - lo < 20 else [lo, hi]
        elif part.isdigit():
            out.append(int(part))
    return out


def remap(text: str, mapping: Callable[[int], int | None]) -> str:
    """`text` with each cited number n replaced by `mapping(n)`; None drops it. "[1, 3]" → "[4][7]"."""
    def replace(m: re.Match) -> str:
        numbers: list[int] = []
        for n in _expand(m.group(1)):
            new = mapping(n)
            if new is not None and new not in numbers:
                numbers.append(new)
        return "".join(f"[{n}]" for n in numbers)

    out = CITATION.sub(replace, text)
    out = re.sub(r"[ \t]+(?=\n|$)", "", out)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", re.sub(r"[ \t]{2,}", " ", out))


def keep_valid(text: str, count: int) -> str:
    """Drop markers outside 1..count."""
    return remap(text, lambda n: n if 1 <= n <= count else None)


def strip_citations(text: str) -> str:
    return remap(text, lambda n: None).strip()


def cut_unfinished(text: str) -> str:
    """`text` without a trailing sentence that was cut off (no end punctuation before its citations)."""
    text = text.rstrip()
    if not text:
        return text
    body = CITATION.sub("", text).rstrip()
    if _ENDS_SENTENCE.search(body):
        return text
    # find the last sentence end followed by whitespace or citations, and cut after it
    last = None
    for m in re.finditer(r"(?:[.!?…][\"'”’)\]]*(?:\s*\[\d+(?:\s*[,–-]\s*\d+)*\])*(?=\s|$)|"
                         + _CJK_STOP + r"(?:\s*\[\d+(?:\s*[,–-]\s*\d+)*\])*)", text):
        last = m
    if last is None:
        return ""
    return text[: last.end()].rstrip()


class CitationRegistry:
    """The article's one index: source URL → number, assigned in order of first use."""

    def __init__(self, order: Sequence[str] = ()):
        self._index: dict[str, int] = {}
        for url in order:
            self.number(url)

    def number(self, url: str) -> int:
        if url not in self._index:
            self._index[url] = len(self._index) + 1
        return self._index[url]

    def get(self, url: str) -> int | None:
        return self._index.get(url)

    def as_dict(self) -> dict[str, int]:
        return dict(self._index)
