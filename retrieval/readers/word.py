"""Word (.docx, python-docx): a line is a paragraph or a table row, in the body's order.

Heading styles make the heading path; a table row reads "Header: value; Header: value" under its
header row. The whole file is one part: lines are numbered from the first paragraph to the last.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from retrieval.documents import Part
from retrieval.readers.lines import Extracted, PartLines, Unreadable, clean_line
from retrieval.readers.zipguard import check_archive

OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # a compound file: an encrypted OOXML file, or a pre-2007 one


def office_unreadable(path: Path, kind: str, exc: Exception) -> Unreadable:
    """The one line a skipped Office file gets."""
    try:
        head = path.read_bytes()[:4]
    except OSError:
        head = b""
    if head == OLE_MAGIC:
        return Unreadable(f"password-protected, or an old binary {kind} file: save it as {path.suffix.lower()}")
    return Unreadable(f"corrupt or not a {kind} file ({type(exc).__name__}: {exc})")


def row_lines(rows: list[list[str]]) -> list[str]:
    """A table as lines: its first row as the header, each other row as "Header: value; ..."."""
    if not rows:
        return []
    header = rows[0]
    out = ["; ".join(c for c in header if c)]
    for cells in rows[1:]:
        pairs = [f"{h}: {v}" if h else v for h, v in zip(header + [""] * len(cells), cells) if v]
        out.append("; ".join(pairs))
    return out


def _cell_texts(row) -> list[str]:
    seen, out = set(), []
    for cell in row.cells:  # a merged cell comes back once per grid column it spans
        if id(cell._tc) not in seen:
            seen.add(id(cell._tc))
            out.append(" ".join(cell.text.split()))
    return out


def _heading_level(style_name: str) -> int | None:
    if style_name == "Title":
        return 1
    tail = style_name.removeprefix("Heading ").strip()
    return int(tail) if style_name.startswith("Heading ") and tail.isdigit() else None


def _read(path: Path):
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        check_archive(path)  # before python-docx reads a part whole
        return docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise office_unreadable(path, "Word", exc) from exc


def _lines(document) -> tuple[list[str], dict[int, int], str | None]:
    from docx.table import Table

    lines: list[str] = []
    headings: dict[int, int] = {}
    title = None
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            lines += [clean_line(x) for x in row_lines([_cell_texts(r) for r in block.rows])]
            continue
        text = clean_line(" ".join(block.text.split("\n")))
        lines.append(text)
        style = block.style.name if block.style is not None else ""
        level = _heading_level(style or "")
        if level and text.strip():
            headings[len(lines)] = level
            if style == "Title" and title is None:
                title = text.strip()
    return lines, headings, title


def extract(path: Path) -> Extracted:
    document = _read(path)
    lines, headings, title_line = _lines(document)
    title = " ".join((document.core_properties.title or "").split()) or title_line
    return Extracted(title, iter([PartLines(None, lines, headings, [])]))


def part_lines(path: Path, part: Part | None) -> list[str] | None:
    return _lines(_read(path))[0] if part is None else None
