"""What ingest produces: `Document`s read from sources and the `Passage`s cut from them.

A passage keeps everything a citation (and later a claim) needs to point back at
its source: the file or URL, the title, the heading path, the exact 1-based line
range in the source file, and the sha256 of its text.
"""

from __future__ import annotations

import hashlib
import uuid

from pydantic import BaseModel, Field

# Fixed namespace so point ids are the same on every machine and every run.
_ID_NAMESPACE = uuid.UUID("6f1c0b7e-2f59-4f43-9a55-6d0f4f6e9b21")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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

    @property
    def source(self) -> str:
        return self.url or self.path

    @staticmethod
    def make_id(path: str, record: int | None, line_start: int, line_end: int, sha256: str) -> str:
        """A Qdrant point id derived from content and place, stable across runs."""
        key = f"{path}\n{record}\n{line_start}-{line_end}\n{sha256}"
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
