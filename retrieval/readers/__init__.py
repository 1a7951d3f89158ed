"""Files that are not text (PDF, Word, PowerPoint, Excel) read as numbered lines, part by part.

Each format says what a line is: a line of one PDF page's extracted text, a Word paragraph or
table row, a text line of one slide, a spreadsheet row. A file is a sequence of `PartLines`
(pages, slides or sheets, each numbering its own lines; a Word file is one part), and the
extraction is deterministic: `part_lines` extracts one part again, so a citation's lines can be
re-read and hashed long after ingest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from retrieval.documents import Part, Segment
from retrieval.readers.lines import Extracted, PageProgress, PartLines, Unreadable, clean_line

__all__ = ["Extracted", "PageProgress", "PartLines", "SUFFIXES", "Unreadable", "clean_line", "segments_of"]


def segments_of(parts: Iterable[PartLines], on_part: Callable[[PartLines], None] | None = None
                ) -> list[Segment]:
    """Every non-blank line as a segment under its heading path; heading lines as headings.

    A PDF's headings run on across pages; a part's implied headings (a sheet's name, a slide's
    title when it has no title line) start its path afresh."""
    segments: list[Segment] = []
    stack: list[tuple[int, str]] = []
    for pl in parts:
        if on_part:
            on_part(pl)
        for level, title in pl.implied:
            stack = [s for s in stack if s[0] < level] + [(level, title)]
        for n, line in enumerate(pl.lines, start=pl.first):
            if not line.strip():
                continue
            level = pl.headings.get(n)
            if level:
                stack = [s for s in stack if s[0] < level] + [(level, line.strip())]
                segments.append(Segment(text=line.strip(), line_start=n, line_end=n, is_heading=True,
                                        heading_path=[t for _, t in stack], part=pl.part))
            else:
                segments.append(Segment(text=line, line_start=n, line_end=n,
                                        heading_path=[t for _, t in stack], part=pl.part))
    return segments


def _readers() -> dict[str, object]:
    from retrieval.readers import pdf, sheets, slides, word  # the libraries load on first use

    return {".pdf": pdf, ".docx": word, ".pptx": slides, ".xlsx": sheets, ".xlsm": sheets}


SUFFIXES = {".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx"}


def extract(path: Path) -> Extracted:
    """The file's title and parts; `Unreadable` when it cannot be read at all."""
    return _readers()[path.suffix.lower()].extract(path)


def part_lines(path: str | Path, part: Part | None) -> list[str] | None:
    """The lines of one part extracted again as ingest extracted them (None: gone or unreadable)."""
    path = Path(path)
    reader = _readers().get(path.suffix.lower())
    if reader is None or not path.is_file():
        return None
    try:
        return reader.part_lines(path, part)
    except Unreadable:
        return None
