"""PDF: the text layer, one page at a time (pypdfium2); a line is a line of one page's text.

pypdfium2 was chosen by measurement: on the STORM slides it extracts ~7x faster than pypdf and
keeps words apart that pypdf runs together ("Jiang Theodore", not "JiangTheodore"); pdfplumber
is ~20-100x slower. Headings: `pdf_headings` (the outline, else type size and numbering). Each
page is opened, read and closed in turn, so memory stays bounded however many pages a file has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pypdfium2 as pdfium

import retrieval.readers.ocr as ocr
from retrieval.documents import Part
from retrieval.readers.lines import Extracted, PartLines, Unreadable, clean_line
from retrieval.readers.pdf_headings import PageHeadings

NO_TEXT = "no text layer; scanned? OCR is not enabled"
NO_TEXT_OCR = "no text layer, and OCR read no text on its pages"


def _open(path: Path) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise Unreadable("password-protected") from exc
        raise Unreadable(f"corrupt or not a PDF ({exc})") from exc


def _page_text(doc: pdfium.PdfDocument, index: int, sizes: bool = False
               ) -> tuple[list[str], list[float | None]]:
    """A page's lines, and (with `sizes`) each line's type size: the median height of its letters'
    font boxes (the nominal font size lies where a file scales its text matrix instead)."""
    page = doc[index]
    try:
        textpage = page.get_textpage()
        try:
            text = textpage.get_text_range()
            heights = _char_heights(textpage, text) if sizes else None
        finally:
            textpage.close()
        if not text.strip() and ocr.available():  # a scanned page: what OCR reads on it
            read = [clean_line(x) for x in ocr.page_lines(page)]
            return read, [None] * len(read)
    finally:
        page.close()
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = [clean_line(x) for x in raw]
    while lines and not lines[-1]:
        lines.pop()
    line_sizes: list[float | None] = [None] * len(lines)
    if heights is not None:  # char i of the text page is character i of its text, "\r\n" included
        at = 0
        for n, (piece, line) in enumerate(zip(text.split("\r\n"), lines)):
            found = sorted(h for h, ch in zip(heights[at: at + len(piece)], piece) if h > 0 and not ch.isspace())
            line_sizes[n] = found[len(found) // 2] if found else None
            at += len(piece) + 2
    return lines, line_sizes


def _char_heights(textpage, text: str) -> list[float] | None:
    """The font-box height of each character of `text` (a character beyond the BMP is two of the
    text page's characters), or None when the two do not line up."""
    units = [2 if ord(ch) > 0xFFFF else 1 for ch in text]
    if textpage.count_chars() != sum(units) or "\r\n" not in text and "\r" in text:
        return None  # no sizes rather than wrong ones
    out, index = [], 0
    for width in units:
        left, bottom, right, top = textpage.get_charbox(index, loose=True)
        out.append(round(top - bottom, 1))
        index += width
    return out


def _outline(doc: pdfium.PdfDocument) -> dict[int, list[tuple[int, str]]]:
    """Page index -> the bookmarks pointing into it, in outline order, as (level, title)."""
    by_page: dict[int, list[tuple[int, str]]] = {}
    try:
        for mark in doc.get_toc(max_depth=8):
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join(mark.get_title().split())
            if index is not None and title:
                by_page.setdefault(index, []).append((mark.level + 1, title))
    except pdfium.PdfiumError:
        return {}
    return by_page


def _title(doc: pdfium.PdfDocument) -> str | None:
    try:
        title = " ".join(str(doc.get_metadata_dict().get("Title") or "").split())
    except pdfium.PdfiumError:
        return None
    return title or None


def extract(path: Path) -> Extracted:
    doc = _open(path)
    pages = len(doc)
    if pages == 0:
        doc.close()
        raise Unreadable("a PDF with no pages")
    headings_of = PageHeadings(_outline(doc))
    title = _title(doc)

    def parts() -> Iterator[PartLines]:
        any_text = False
        try:
            for index in range(pages):
                lines, sizes = _page_text(doc, index, sizes=not headings_of.outline)
                any_text = any_text or any(line.strip() for line in lines)
                headings, implied = headings_of.page(index, lines, sizes)
                yield PartLines(Part(kind="page", number=index + 1), lines, headings, implied)
        finally:
            doc.close()
        if not any_text:
            raise Unreadable(NO_TEXT_OCR if ocr.available() else NO_TEXT)

    return Extracted(title, parts(), pages)


def part_lines(path: Path, part: Part | None) -> list[str] | None:
    if part is None or part.kind != "page":
        return None
    doc = _open(path)
    try:
        return _page_text(doc, part.number - 1)[0] if 1 <= part.number <= len(doc) else None
    finally:
        doc.close()
