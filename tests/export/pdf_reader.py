"""Reading a PDF back as a reader's viewer would (pypdfium2 over PDFium): each page's text, and each link
annotation with the text under it and the page and height it jumps to."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as raw


@dataclass
class PdfLink:
    page: int  # where the link is
    text: str  # the text under its rectangle
    target_page: int  # where it jumps
    target_y: float | None  # the height on that page (PDF points from the bottom), if the link says


def _target(doc, link) -> tuple[int, float | None] | None:
    dest = raw.FPDFLink_GetDest(doc.raw, link)
    if not dest:
        action = raw.FPDFLink_GetAction(link)
        if not action or raw.FPDFAction_GetType(action) != raw.PDFACTION_GOTO:
            return None
        dest = raw.FPDFAction_GetDest(doc.raw, action)
    index = raw.FPDFDest_GetDestPageIndex(doc.raw, dest)
    has_x, has_y, has_zoom = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    x, y, zoom = ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    raw.FPDFDest_GetLocationInPage(dest, has_x, has_y, has_zoom, x, y, zoom)
    return index, (y.value if has_y.value else None)


def read_pdf(path: Path) -> tuple[list[str], list[PdfLink]]:
    doc = pdfium.PdfDocument(str(path))
    texts, links = [], []
    for i in range(len(doc)):
        page = doc[i]
        textpage = page.get_textpage()
        texts.append(textpage.get_text_range())
        pos, link = ctypes.c_int(0), raw.FPDF_LINK()
        while raw.FPDFLink_Enumerate(page.raw, pos, link):
            rect = raw.FS_RECTF()
            raw.FPDFLink_GetAnnotRect(link, rect)
            target = _target(doc, link)
            if target is not None:
                under = textpage.get_text_bounded(rect.left, rect.bottom, rect.right, rect.top).strip()
                links.append(PdfLink(i, under, target[0], target[1]))
    return texts, links


def reference_tops(path: Path, page: int) -> dict[int, float]:
    """The height of each reference entry "[n] ..." below the References heading of `page`: where its
    first glyph's top is (PDF points from the bottom)."""
    doc = pdfium.PdfDocument(str(path))
    textpage = doc[page].get_textpage()
    found = textpage.search("References", match_case=True, match_whole_word=True).get_next()
    below = textpage.get_charbox(found[0])[1] if found else doc[page].get_height()
    text = textpage.get_text_range()
    tops: dict[int, float] = {}
    left = min((textpage.get_charbox(i)[0] for i in range(textpage.count_chars()) if not text[i].isspace()),
               default=0.0)
    for i in range(len(text) - 3):
        if text[i] == "[" and (i == 0 or text[i - 1] in "\r\n"):
            close = text.find("] ", i)
            box = textpage.get_charbox(i)
            if close > i and text[i + 1:close].isdigit() and box[3] < below and abs(box[0] - left) < 2:
                tops.setdefault(int(text[i + 1:close]), box[3])
    return tops
