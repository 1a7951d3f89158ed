"""Excel (.xlsx, openpyxl): one sheet after another; a line is a row, numbered as Excel numbers it.

The first non-empty row is the header; every later row reads "Header: value; Header: value".
Formulas give their cached values (the workbook is opened read-only with `data_only`), and rows
are streamed, so a sheet of 100,000 rows is read without loading the workbook's cells at once; it comes
in pieces of ROWS_PER_PIECE rows, so a long workbook shows its progress as a PDF shows its pages.
"""

from __future__ import annotations

import datetime
import zipfile
from pathlib import Path
from typing import Iterator

from retrieval.documents import Part
from retrieval.readers.lines import Extracted, PartLines, clean_line
from retrieval.readers.word import office_unreadable
from retrieval.readers.zipguard import check_archive

ROWS_PER_PIECE = 5000  # a sheet is read and reported in pieces of this many rows


def _open(path: Path):
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        check_archive(path)  # before openpyxl inflates a part
        return openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise office_unreadable(path, "Excel", exc) from exc


def cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.15g}"
    if isinstance(value, datetime.datetime) and value.time() == datetime.time(0):
        return value.date().isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return " ".join(str(value).split())


def _sheet_pieces(sheet) -> Iterator[list[str]]:
    """The sheet's lines, ROWS_PER_PIECE at a time (blank rows at its end dropped)."""
    piece: list[str] = []
    blanks = 0  # blank rows held back: dropped if nothing follows them
    header: list[str] | None = None
    for row in sheet.iter_rows(values_only=True):  # read-only sheets yield empty rows in gaps too
        cells = [cell_text(v) for v in row]
        if header is None:
            line = ""
            if any(cells):
                header = cells
                line = clean_line("; ".join(c for c in cells if c))
        else:
            pairs = [f"{h}: {v}" if h else v for h, v in zip(header + [""] * len(cells), cells) if v]
            line = clean_line("; ".join(pairs))
        if not line:
            blanks += 1
            continue
        piece += [""] * blanks + [line]
        blanks = 0
        if len(piece) >= ROWS_PER_PIECE:
            yield piece
            piece = []
    if piece:
        yield piece


def _sheet_lines(sheet) -> list[str]:
    return [line for piece in _sheet_pieces(sheet) for line in piece]


def _sheets(book) -> list:
    return [ws for ws in book.worksheets if hasattr(ws, "iter_rows")]  # chart sheets have no cells


def extract(path: Path) -> Extracted:
    book = _open(path)
    title = " ".join((book.properties.title or "").split()) or None

    def parts() -> Iterator[PartLines]:
        try:
            for number, sheet in enumerate(_sheets(book), start=1):
                part, first = Part(kind="sheet", number=number, name=sheet.title), 1
                for piece in _sheet_pieces(sheet):
                    yield PartLines(part, piece, {}, [(1, sheet.title)], first)
                    first += len(piece)
        finally:
            book.close()

    return Extracted(title, parts(), _pieces(book))


def _pieces(book) -> int | None:
    """How many pieces the workbook will come in, from each sheet's declared dimensions (None: a sheet
    declares none), so a reader of 300,000 rows shows its progress piece by piece."""
    rows = [sheet.max_row for sheet in _sheets(book)]
    return None if any(r is None for r in rows) else sum(max(1, -(-r // ROWS_PER_PIECE)) for r in rows)


def part_lines(path: Path, part: Part | None) -> list[str] | None:
    if part is None or part.kind != "sheet":
        return None
    book = _open(path)
    try:
        sheets = _sheets(book)
        # by name, so a sheet moved to another place in the workbook is still found
        match = [s for s in sheets if s.title == part.name] or \
            ([sheets[part.number - 1]] if part.name is None and 1 <= part.number <= len(sheets) else [])
        return _sheet_lines(match[0]) if match else None
    finally:
        book.close()
