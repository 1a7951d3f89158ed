"""What every reader produces: a file as parts of numbered lines (`Extracted`, `PartLines`), the one-line
reason a file cannot be read (`Unreadable`), and one extracted line cleaned (`clean_line`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from retrieval.documents import Part


class Unreadable(Exception):
    """A file that cannot be read, with one line saying why (shown as the reason it was skipped)."""


class PartLines(NamedTuple):
    """One page, slide or sheet (or a whole Word file) as lines, 1-based in `lines`."""

    part: Part | None
    lines: list[str]
    headings: dict[int, int] = {}  # line number -> heading level (1 = top)
    implied: list[tuple[int, str]] = []  # (level, heading) that hold from the part's start, on no line
    first: int = 1  # the number of its first line: a long sheet comes in pieces, each numbering on


class Extracted(NamedTuple):
    title: str | None
    parts: Iterator[PartLines]  # produced one part at a time: a long PDF is never held whole
    count: int | None = None  # how many parts, when known before reading them (a PDF's pages)


PageProgress = Callable[[Path, int, "int | None"], None]  # (file, parts read so far, parts in all)


def clean_line(text: str) -> str:
    """One extracted line with control characters dropped and trailing blanks trimmed."""
    return "".join(ch for ch in text if ch == "\t" or ch >= " ").replace("\ufffe", "").rstrip()
