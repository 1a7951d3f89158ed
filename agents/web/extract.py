"""A fetched page's main text: HTML through trafilatura, PDF through our PDF reader, plain text as is.

HTML and text are decoded by their declared charset (the Content-Type header, else a BOM,
else the page's `<meta charset>` / `http-equiv`), else as UTF-8 when they are valid UTF-8, else
by charset detection, else windows-1252 (what browsers assume; `iso-8859-1` and `ascii` labels
mean it too, as the WHATWG encoding standard says). Nothing is executed: trafilatura parses
with lxml and drops `<script>`/`<style>`; a page trafilatura finds no main text in falls back to
our own HTML loader's visible text (`retrieval.formats.html_segments`), which drops them too.

The text keeps its line structure: one paragraph per line with blank lines between, headings
as `#` lines (trafilatura's Markdown output), a PDF's lines as its pages give them.

    page = extract_text(body, "text/html; charset=windows-1252", "https://example.org/a")
    page.title, page.text
"""

from __future__ import annotations

import codecs
import re
import tempfile
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from retrieval import formats, readers
from retrieval.readers.lines import clean_line


class ExtractedPage(NamedTuple):
    title: str
    text: str


class ExtractionFailed(Exception):
    """The body could not be read as its content type; the message is the one-line reason."""


HTML_TYPES = ("text/html", "application/xhtml+xml")
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]{1,40})""", re.I)
_WINDOWS_1252_LABELS = {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii", "cp819",
                        "iso_8859-1", "ibm819"}


def media_type(content_type: str) -> str:
    return content_type.split(";")[0].strip().lower()


def declared_charset(content_type: str) -> str | None:
    match = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", content_type, re.I)
    return match.group(1) if match else None


def _codec(label: str | None) -> str | None:
    """A Python codec for an encoding label, or None when the label names none we know."""
    if not label:
        return None
    label = label.strip().lower()
    if label in _WINDOWS_1252_LABELS:
        return "cp1252"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode(body: bytes, content_type: str, html: bool) -> str:
    """`body` as text, by the declared charset first (see the module's docstring)."""
    for bom, codec in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                       (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return body.decode(codec, errors="replace")
    declared = _codec(declared_charset(content_type))
    if declared is None and html:
        match = _META_CHARSET.search(body[:4096])
        declared = _codec(match.group(1).decode("ascii")) if match else None
    if declared:
        return body.decode(declared, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes  # installed with httpx/requests; only for undeclared pages

    best = from_bytes(body[:200_000]).best()
    return body.decode(best.encoding if best else "cp1252", errors="replace")


def _title_from_url(url: str) -> str:
    parts = urlsplit(url)
    name = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])
    return name or parts.hostname or url


def _html(body: bytes, content_type: str, url: str) -> ExtractedPage:
    import trafilatura  # loaded on the first page, not when raystorm is imported

    source = decode(body, content_type, html=True)
    # lxml refuses a str that still declares its encoding; the text is decoded already
    source = re.sub(r"^\s*<\?xml[^>]*\?>", "", source)
    text = trafilatura.extract(source, url=url, output_format="markdown", include_comments=False,
                               include_tables=True, include_images=False, include_links=False,
                               favor_recall=True)
    meta = trafilatura.extract_metadata(source)
    html_title = None
    if not text or not text.strip():
        segments, html_title = formats.html_segments(source)
        text = "\n\n".join(("#" * len(s.heading_path) + " " + s.text) if s.is_heading else s.text
                           for s in segments)
    title = (meta.title if meta and meta.title else None) or html_title or _title_from_url(url)
    return ExtractedPage(" ".join(title.split()), _tidy(text))


def _plain(body: bytes, content_type: str, url: str) -> ExtractedPage:
    text = _tidy(decode(body, content_type, html=False))
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    title = first if 0 < len(first.split()) <= 15 else _title_from_url(url)
    return ExtractedPage(title, text)


def _pdf(body: bytes, url: str) -> ExtractedPage:
    # our PDF reader reads files: the body goes to a temporary one, removed when read
    with tempfile.TemporaryDirectory(prefix="raystorm-pdf-") as tmp:
        path = Path(tmp) / "page.pdf"
        path.write_bytes(body)
        try:
            extracted = readers.extract(path)
            pages = ["\n".join(part.lines).strip("\n") for part in extracted.parts]
        except readers.Unreadable as exc:
            raise ExtractionFailed(f"unreadable PDF: {exc}") from None
    text = _tidy("\n\n".join(p for p in pages if p.strip()))
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    title = extracted.title or (first if 0 < len(first.split()) <= 15 else _title_from_url(url))
    return ExtractedPage(" ".join(title.split()), text)


def _tidy(text: str) -> str:
    """Lines cleaned of control characters, runs of blank lines cut to one, no blank edges."""
    lines = [clean_line(line) for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line if line.strip() else "")
    return "\n".join(out).strip("\n")


def extract_text(body: bytes, content_type: str, url: str) -> ExtractedPage:
    """The page's title and main text. `content_type`: the response's Content-Type header, whole
    (its charset is used). Raises `ExtractionFailed` for a body that is not what it says it is."""
    kind = media_type(content_type)
    if kind in HTML_TYPES:
        return _html(body, content_type, url)
    if kind == "application/pdf":
        return _pdf(body, url)
    if kind == "text/plain":
        return _plain(body, content_type, url)
    raise ExtractionFailed(f"no extractor for content type {kind or '(none)'}")
