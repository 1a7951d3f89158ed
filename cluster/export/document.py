"""A finished report read back as a structure every export format renders: sections, paragraphs and tables
whose `[n]` are links, and the references each `[n]` points at (source, page/slide/sheet, lines, URL).

report.md is the text of record (what the reader saw); url_to_info.json gives each reference's exact places,
which report.md only holds as one formatted line. Text is unescaped here (report.md escapes Markdown and
HTML in document text) and escaped again by each renderer for its own format.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from retrieval.documents import Part
from retrieval.errors import RaystormError

CITE = re.compile(r"\[(\d+)\]")
_ESCAPED = re.compile(r"\\([\\`*_\[\]])")
_STRONG_MARK = re.compile(r"(?<!\\)\*\*(.+?)(?<!\\)\*\*")
_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
_STRONG = re.compile(r"[^\W\d_]")  # a letter of any script


class ExportError(RaystormError):
    """A run that cannot be exported, or a renderer that is missing; the message says what to do."""


class Inline(BaseModel):
    text: str = ""
    cite: int | None = None  # a citation marker [cite]; text is then empty
    strong: bool = False  # **bold** in report.md (sources' own emphasis, copied with their sentences)


class Block(BaseModel):
    kind: Literal["p", "h3", "table"]
    inlines: list[Inline] = Field(default_factory=list)  # p and h3
    rows: list[list[list[Inline]]] = Field(default_factory=list)  # table: rows of cells; the first is the header

    @property
    def plain(self) -> str:
        return "".join(i.text for i in self.inlines)


class Section(BaseModel):
    heading: str
    blocks: list[Block] = Field(default_factory=list)


class Reference(BaseModel):
    n: int
    title: str
    url: str | None = None  # an http(s) URL, where the source has one
    source: str  # the file (its name) or the URL a reader looks for
    places: list[str] = Field(default_factory=list)  # "p. 3, lines 12–18", "lines 4–9"


class ReportDocument(BaseModel):
    title: str
    lead: list[Block] = Field(default_factory=list)
    sections: list[Section] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)

    def cited(self) -> list[int]:
        """Every [n] of the text, in order of first appearance."""
        seen: dict[int, None] = {}
        for block in self.lead + [b for s in self.sections for b in s.blocks]:
            cells = [c for row in block.rows for c in row]
            for inline in block.inlines + [i for c in cells for i in c]:
                if inline.cite is not None:
                    seen.setdefault(inline.cite, None)
        return list(seen)


def is_rtl(text: str) -> bool:
    """Does `text` start (its first letter) in a right-to-left script (Arabic, Hebrew, Syriac, Thaana)?"""
    first = _STRONG.search(text)
    return bool(first and _RTL.match(first.group(0)))


def unescape(text: str) -> str:
    """Text of report.md as a reader reads it: Markdown escapes and HTML entities undone."""
    return html.unescape(_ESCAPED.sub(r"\1", text))


def inlines(text: str) -> list[Inline]:
    out = []
    for piece in re.split(r"((?<!\\)\[\d+\](?!\())", text):
        number = CITE.fullmatch(piece)
        if number:
            out.append(Inline(cite=int(number.group(1))))
        elif piece:
            for i, part in enumerate(_STRONG_MARK.split(piece)):  # odd parts were between ** and **
                if part:
                    out.append(Inline(text=unescape(part), strong=i % 2 == 1))
    return out


def _table(chunk: str) -> Block | None:
    lines = [ln.strip() for ln in chunk.splitlines()]
    if len(lines) < 2 or not all(ln.startswith("|") for ln in lines) or not re.fullmatch(r"\|[\s:|-]+\|?", lines[1]):
        return None
    rows = []
    for ln in [lines[0], *lines[2:]]:
        cells = re.split(r"(?<!\\)\|", ln.strip().strip("|"))
        rows.append([inlines(c.strip()) for c in cells])
    return Block(kind="table", rows=rows)


def parse_blocks(text: str) -> list[Block]:
    blocks = []
    for chunk in re.split(r"\n\s*\n", text.strip()):
        chunk = chunk.strip()
        if not chunk:
            continue
        sub = re.fullmatch(r"#{3,6}\s+(.+)", chunk)
        if sub:
            blocks.append(Block(kind="h3", inlines=inlines(sub.group(1))))
            continue
        blocks.append(_table(chunk) or Block(kind="p", inlines=inlines(" ".join(chunk.split()))))
    return blocks


def _places(snippets: list[dict]) -> list[str]:
    from agents.wiki.changes import line_ranges

    return line_ranges([(Part.model_validate(s["part"]) if s.get("part") else None, s["line_start"], s["line_end"])
                        for s in snippets])


def reference_of(citation: dict) -> Reference:
    """A reference from one of url_to_info.json's citations."""
    snippets = citation.get("snippets") or []
    url = citation["url"] if re.match(r"(?i)https?://", citation["url"]) else None
    path = snippets[0]["path"] if snippets else citation["url"]
    return Reference(n=citation["index"], title=citation["title"], url=url,
                     source=Path(path).name if url is None or path != citation["url"] else citation["url"],
                     places=_places(snippets))


def read_report(run_dir: str | Path) -> ReportDocument:
    """The report of the run folder `run_dir` (report.md and url_to_info.json)."""
    import json

    folder = Path(run_dir).expanduser()
    md, info = folder / "report.md", folder / "url_to_info.json"
    if not md.is_file():
        raise ExportError(f"{folder} holds no report.md: pass a report's run folder (OUT/<topic_slug>), "
                          "or finish the report with `raystorm report` first")
    try:
        text = md.read_text(encoding="utf-8")
        citations = json.loads(info.read_text(encoding="utf-8")).get("citations", []) if info.is_file() else []
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExportError(f"{folder}: the report's files are unreadable ({exc}); rerun `raystorm report`") from None
    title_match = re.match(r"#\s+(.+)\n", text)
    if title_match is None:
        raise ExportError(f"{md} does not start with a '# title' line: is it a raystorm report?")
    parts = re.split(r"(?m)^## (.+)$", text[title_match.end():])
    doc = ReportDocument(title=unescape(title_match.group(1).strip()), lead=parse_blocks(parts[0]))
    for i in range(1, len(parts) - 1, 2):
        heading = unescape(parts[i].strip())
        if heading == "References" and i == len(parts) - 2:
            continue  # rebuilt from url_to_info.json below, with each place as a value
        doc.sections.append(Section(heading=heading, blocks=parse_blocks(parts[i + 1])))
    by_n = {c["index"]: c for c in citations}
    missing = [n for n in doc.cited() if n not in by_n]
    if missing:
        raise ExportError(f"{folder}: report.md cites {', '.join(f'[{n}]' for n in missing)}, which "
                          "url_to_info.json does not hold; rerun `raystorm report` to rewrite both")
    doc.references = [reference_of(by_n[n]) for n in sorted(doc.cited())]
    return doc
