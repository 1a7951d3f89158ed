"""PowerPoint (.pptx, python-pptx): one slide after another; a line is a text line of a slide.

A slide's lines are its title, then the text of its shapes in order (text frames line by line,
tables row by row as "Header: value; ..."), then its speaker notes under "Speaker notes".
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Iterator

from retrieval.documents import Part
from retrieval.readers.lines import Extracted, PartLines, clean_line
from retrieval.readers.word import office_unreadable, row_lines
from retrieval.readers.zipguard import check_archive

NOTES = "Speaker notes"


def _open(path: Path):
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    try:
        check_archive(path)  # before python-pptx reads a part whole
        return Presentation(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise office_unreadable(path, "PowerPoint", exc) from exc


def _frame_lines(frame) -> list[str]:
    return [clean_line(" ".join(p.text.replace("\v", " ").split("\n"))) for p in frame.paragraphs]


def _shape_lines(shape) -> list[str]:
    if shape.shape_type is not None and hasattr(shape, "shapes"):  # a group: its shapes in order
        return [line for inner in shape.shapes for line in _shape_lines(inner)]
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[" ".join(c.text.split()) for c in row.cells] for row in shape.table.rows]
        return [clean_line(x) for x in row_lines(rows)]
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        return _frame_lines(shape.text_frame)
    return []


def _slide(slide, number: int) -> PartLines:
    title_shape = slide.shapes.title
    lines: list[str] = []
    headings: dict[int, int] = {}
    implied: list[tuple[int, str]] = []
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None and \
        title_shape.has_text_frame else ""
    if title:
        lines.append(clean_line(title))
        headings[1] = 1
    else:
        implied.append((1, f"Slide {number}"))
    for shape in slide.shapes:
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        lines += _shape_lines(shape)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = _frame_lines(slide.notes_slide.notes_text_frame)
        if any(n.strip() for n in notes):
            lines.append(NOTES)
            headings[len(lines)] = 2
            lines += notes
    return PartLines(Part(kind="slide", number=number), lines, headings, implied)


def extract(path: Path) -> Extracted:
    deck = _open(path)
    title = " ".join((deck.core_properties.title or "").split()) or None

    def parts() -> Iterator[PartLines]:
        for number, slide in enumerate(deck.slides, start=1):
            yield _slide(slide, number)

    return Extracted(title, parts())


def part_lines(path: Path, part: Part | None) -> list[str] | None:
    if part is None or part.kind != "slide":
        return None
    slides = list(_open(path).slides)
    return _slide(slides[part.number - 1], part.number).lines if 1 <= part.number <= len(slides) else None
