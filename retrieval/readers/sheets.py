"""Excel (.xlsx, openpyxl): one sheet after another; a line is a row, numbered as Excel numbers it.

The first non-empty row is the header; every later row reads "Header: value; Header: value".
Formulas give their cached values (the workbook is opened read-only with `data_only`), and rows
are streamed, so a sheet of 100,000 rows is read without loading the workbook's cells at once.
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


def _sheet_lines(sheet) -> list[str]:
    lines: list[str] = []
    header: list[str] | None = None
    for row in sheet.iter_rows(values_only=True):  # read-only sheets yield empty rows in gaps too
        cells = [cell_text(v) for v in row]
        if header is None:
            if any(cells):
                header = cells
                lines.append(clean_line("; ".join(c for c in cells if c)))
            else:
                lines.append("")
            continue
        pairs = [f"{h}: {v}" if h else v for h, v in zip(header + [""] * len(cells), cells) if v]
        lines.append(clean_line("; ".join(pairs)))
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _sheets(book) -> list:
    return [ws for ws in book.worksheets if hasattr(ws, "iter_rows")]  # chart sheets have no cells


def extract(path: Path) -> Extracted:
    book = _open(path)
    title = " ".join((book.properties.title or "").split()) or None

    def parts() -> Iterator[PartLines]:
        try:
            for number, sheet in enumerate(_sheets(book), start=1):
                part = Part(kind="sheet", number=number, name=sheet.title)
                yield PartLines(part, _sheet_lines(sheet), {}, [(1, sheet.title)])
        finally:
            book.close()

    return Extracted(title, parts())


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
