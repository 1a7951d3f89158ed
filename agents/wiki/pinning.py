"""Turn a written statement and the passage it cites into a claim pinned to the exact lines."""

from __future__ import annotations

import re

from agents.wiki.claims import (
    Claim,
    Evidence,
    narrow,
    normalize,
    pin,
    read_lines,
    sha256_lines,
)
from retrieval.documents import Part
from retrieval.graph.current import without_history

_MARKERS = re.compile(r"\s*\[\d+(?:\s*[,–-]\s*\d+)*\]")


def plain(statement: str) -> str:
    """The statement without its [n] markers."""
    return " ".join(_MARKERS.sub("", statement).split())


def core(statement: str) -> str:
    """What the source itself says: no markers, no history framing."""
    return without_history(plain(statement))


class LineCache:
    """Files (and a PDF's pages, a deck's slides, a workbook's sheets) read once per build or check."""

    def __init__(self):
        self.files: dict[tuple[str, Part | None], list[str] | None] = {}

    def lines(self, path: str, part: Part | None = None) -> list[str] | None:
        if (path, part) not in self.files:
            self.files[(path, part)] = read_lines(path, part)
        return self.files[(path, part)]


def pin_statement(statement: str, source: str, path: str, line_start: int, line_end: int,
                  heading_path: list[str], cache: LineCache, passage_sha256: str | None = None,
                  part: Part | None = None) -> Evidence | None:
    """Evidence for `statement` inside lines line_start..line_end of `path`: the fewest lines holding its
    words; when no lines hold them (a paraphrase), the whole range, if the file still has the passage's
    text there (`passage_sha256`). None when neither holds: the source changed since it was read.
    `part`: the page, slide or sheet the lines count within."""
    lines = cache.lines(path, part)
    if lines is None or line_end > len(lines):
        return None
    words = core(statement)
    if normalize(words) and normalize(words) in normalize(" ".join(lines[line_start - 1: line_end])):
        a, b = narrow(lines, line_start, line_end, words)
    elif passage_sha256 is not None and sha256_lines(lines[line_start - 1: line_end]) == passage_sha256:
        a, b = line_start, line_end
    else:
        return None
    return pin(source, path, lines, a, b, heading_path, part)


def make_claim(claim_id: str, statement: str, section: str, evidence: list[Evidence | None]) -> Claim | None:
    kept = [e for e in evidence if e is not None]
    return Claim(id=claim_id, text=plain(statement), section=section, evidence=kept) if kept else None
