"""What ingest produces: `Document`s read from sources and the `Passage`s cut from them.

A passage keeps everything a citation (and later a claim) needs to point back at
its source: the file or URL, the title, the heading path, the exact 1-based line
range in the source file, and the sha256 of its text.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Fixed namespace so point ids are the same on every machine and every run.
_ID_NAMESPACE = uuid.UUID("6f1c0b7e-2f59-4f43-9a55-6d0f4f6e9b21")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Part(BaseModel):
    """The page, slide or sheet of a file that line numbers count within (PDF, PPTX, XLSX): a
    passage on page 3 cites lines of page 3's extracted text, which `retrieval.readers` re-extracts."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["page", "slide", "sheet"]
    number: int  # 1-based, in the file's order
    name: str | None = None  # a sheet's name

    def label(self) -> str:
        if self.kind == "sheet":
            return f'sheet "{self.name}"'
        return f"p. {self.number}" if self.kind == "page" else f"slide {self.number}"


def line_range(part: Part | None, line_start: int, line_end: int) -> str:
    """A range as a reader finds it: "p. 3, lines 12–18", 'sheet "2024", rows 4–9', "lines 2–5"."""
    unit = "row" if part is not None and part.kind == "sheet" else "line"
    lines = f"{unit} {line_start}" if line_start == line_end else f"{unit}s {line_start}–{line_end}"
    return f"{part.label()}, {lines}" if part is not None else lines


class Segment(BaseModel):
    """A run of source text with the 1-based line where it starts.

    Loaders emit segments; the splitter cuts passages from them without ever
    crossing a heading or a record boundary.
    """

    text: str
    line_start: int
    line_end: int
    heading_path: list[str] = Field(default_factory=list)
    is_heading: bool = False
    # a piece of one long line: its 0-based character span in that line (end exclusive)
    char_start: int | None = None
    char_end: int | None = None
    part: Part | None = None  # the page, slide or sheet whose lines line_start/line_end count


class Document(BaseModel):
    """One logical document: a file, or one record of a JSON/JSONL/CSV file."""

    doc_id: str
    path: str  # the file it was read from (resolved)
    url: str | None = None
    title: str
    record: int | None = None  # index of the record inside a JSON/JSONL/CSV file
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    segments: list[Segment]

    @property
    def source(self) -> str:
        """What a citation shows: the URL when the document has one, else the path. A URL alone
        does not identify a document (any file's front matter may claim it): `doc_id` derives
        from the path, and a citation names the file as well."""
        return self.url or self.path

    @staticmethod
    def make_id(path: str, record: int | None) -> str:
        return sha256_text(path if record is None else f"{path}#{record}")[:16]


class Passage(BaseModel):
    """A retrievable unit of text with its exact place in the source."""

    passage_id: str
    doc_id: str
    path: str
    url: str | None = None
    title: str
    heading_path: list[str] = Field(default_factory=list)
    line_start: int
    line_end: int
    text: str
    sha256: str
    tags: list[str] = Field(default_factory=list)
    record: int | None = None
    # set when the passage is a piece of one long line: its 0-based character span in that line
    char_start: int | None = None
    char_end: int | None = None
    part: Part | None = None  # the page, slide or sheet whose lines line_start/line_end count

    @property
    def source(self) -> str:
        return self.url or self.path

    def lines_label(self) -> str:
        """Where the passage sits in its file: "lines 3-9", or "line 1, chars 0-1043" for a piece
        of one long line."""
        if self.char_start is not None and self.char_end is not None:
            return f"line {self.line_start}, chars {self.char_start}-{self.char_end}"
        return f"lines {self.line_start}-{self.line_end}"

    @staticmethod
    def make_id(path: str, record: int | None, line_start: int, line_end: int, sha256: str,
                char_start: int | None = None, part: Part | None = None) -> str:
        """A Qdrant point id derived from content and place, stable across runs."""
        key = f"{path}\n{record}\n{line_start}-{line_end}\n{sha256}"
        if char_start is not None:  # pieces of one long line; other ids stay as they were
            key += f"\n@{char_start}"
        if part is not None:  # lines count within a page, slide or sheet
            key += f"\n{part.label()}"
        return str(uuid.uuid5(_ID_NAMESPACE, key))

    def embedding_text(self) -> str:
        """What the embedders see: title and headings give a passage its context."""
        context = " > ".join([self.title, *self.heading_path])
        return f"{context}\n{self.text}" if context else self.text


class PassageText(BaseModel):
    """A passage as a model sees it: its title, where it sits in its document (the heading
    path, " > "), and its text; nothing to copy by mistake (no ids, no lines)."""

    title: str = ""
    section: str = ""
    text: str

    @classmethod
    def of(cls, passage: Passage) -> "PassageText":
        return cls(title=passage.title, section=" > ".join(passage.heading_path), text=passage.text)

    def in_context(self) -> str:
        return " > ".join(x for x in (self.title, self.section) if x) + "\n" + self.text
