"""Which lines of a PDF page are headings: the outline's, else the type's size, else the numbering.

A file with an outline (bookmarks) names its headings; each is matched to the line that shows it.
Without one, a short line set clearly larger than the body text is a heading (its level by how much
larger), and so is a numbered title-like line ("4.2 Flood deductible", "Section 9. Additional
Coverages"). The body size is the size of most lines read so far, so a page of a long file is
judged by the file, not by itself alone.
"""

from __future__ import annotations

import re
from collections import Counter

_NUMBERED = re.compile(r"^\s*(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+([A-Z][^.!?;:]*?)\s*$")
# "Section 9. Additional Coverages", "Rule 1. Waiting period", "Part A. Small-Business Policy (SB-5)"
_NAMED = re.compile(r"^\s*(?:Section|Rule|Part|Article|Chapter|Schedule|Appendix|Step)\s+[0-9A-Z]{1,4}"
                    r"(?:\.\d{1,2})*[.:]\s+[A-Z][^!?;]*?[^.!?;:\s]\s*$")
_MAX_HEADING_WORDS = 12
_BULLETS = ("•", "◦", "▪", "-", "–", "*", "→")  # a list item, however large, is not a heading
# a line this many times the body size is a heading of level 1, 2, 3
_SIZE_LEVELS = ((1.6, 1), (1.35, 2), (1.15, 3))


def _title_like(lines: list[str], sizes: list[float | None], n: int) -> bool:
    """Line `n` (1-based) reads as a title, not a large sentence: it starts with a capital (or a
    digit or sign), holds letters, ends without a comma or full stop, and the next line does not
    carry its sentence on in the same size and lower case."""
    line = lines[n - 1].strip()
    if sum(ch.isalpha() for ch in line) < 2 or line[0].islower() or line.endswith((".", ",", ";")):
        return False
    following = next((k for k in range(n, len(lines)) if lines[k].strip()), None)
    return following is None or not (sizes[following] == sizes[n - 1] and lines[following].lstrip()[0].islower())


def _key(text: str) -> str:
    return re.sub(r"\W+", "", text).lower()


class PageHeadings:
    """Headings page by page for one file; keeps the body size seen so far."""

    def __init__(self, outline: dict[int, list[tuple[int, str]]]):
        self.outline = outline
        self.sizes: Counter[float] = Counter()  # type size -> lines set in it

    def page(self, index: int, lines: list[str], sizes: list[float | None]
             ) -> tuple[dict[int, int], list[tuple[int, str]]]:
        """(line number -> level, implied headings) of page `index` (0-based); `sizes`: each line's size."""
        if self.outline:
            return self._from_outline(lines, self.outline.get(index, []))
        for line, size in zip(lines, sizes):  # lines, not characters: a slide's title can outweigh its
            if size and len(line.split()) > 1:  # few short lines in characters, never in lines
                self.sizes[size] += 1
        body = self.sizes.most_common(1)[0][0] if self.sizes else None
        headings: dict[int, int] = {}
        for n, (line, size) in enumerate(zip(lines, sizes), start=1):
            if not line.strip() or len(line.split()) > _MAX_HEADING_WORDS or line.lstrip().startswith(_BULLETS):
                continue
            numbered = _NUMBERED.match(line)
            level = next((lv for ratio, lv in _SIZE_LEVELS if body and size and size >= ratio * body), None)
            if level and not _title_like(lines, sizes, n):
                level = None
            if level is None and numbered:
                level = min(numbered.group(1).count(".") + 1, 3)
            elif level is None and _NAMED.match(line):
                level = 1
            if level:
                headings[n] = level
        return headings, []

    @staticmethod
    def _from_outline(lines: list[str], marks: list[tuple[int, str]]) -> tuple[dict[int, int], list[tuple[int, str]]]:
        headings: dict[int, int] = {}
        implied: list[tuple[int, str]] = []
        start = 1
        for level, title in marks:
            want = _key(title)
            found = next((n for n in range(start, len(lines) + 1) if want and _key(lines[n - 1]) == want), None)
            if found is None:
                implied.append((level, title))  # a bookmark with no line of its own holds from the page top
            else:
                headings[found] = level
                start = found + 1
        return headings, implied
