"""What the evidence graph is made of: typed nodes, typed edges, and the per-document record it is stored as.

Edges are stored once, in the direction their source document states them
(`supersedes`, `amends`, `refers_to`, `attaches_to`, `cites`); the inverses
(`superseded_by`, ...) are derived when the graph is read. Every edge says how it
was found (`via`) and the source lines it came from.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from retrieval.documents import Part

EdgeType = Literal["supersedes", "amends", "refers_to", "attaches_to", "cites"]
InverseType = Literal["superseded_by", "amended_by", "referred_by", "attached", "cited_by"]
Via = Literal["front matter", "header line", "reference text", "edition order", "claim evidence"]
NodeKind = Literal["document", "section", "passage", "claim", "external"]
PassageState = Literal["current", "superseded", "amended"]

EDGE_TYPES: tuple[str, ...] = ("supersedes", "amends", "refers_to", "attaches_to", "cites")
INVERSE: dict[str, str] = {"supersedes": "superseded_by", "amends": "amended_by", "refers_to": "referred_by",
                           "attaches_to": "attached", "cites": "cited_by"}
ALL_EDGE_NAMES: tuple[str, ...] = EDGE_TYPES + tuple(INVERSE.values())


class Reference(BaseModel):
    """A document named in another one's text, before it is resolved to a node."""

    text: str  # as written: "Bulletin 2021-04", "form FR-12", a URL
    key: str  # normalised identifier: "BULLETIN 2021-04", "FR-12", a URL, or "TITLE:<lowercased title>"
    sections: list[str] = Field(default_factory=list)  # "4", "5", or a quoted heading
    topic: str | None = None  # "waiting period" in "the waiting period stated in Bulletin 2021-04"


class StatedEdge(BaseModel):
    """An edge as its source document states it; the target is still a reference."""

    type: EdgeType
    source: str  # node id of the stating document or section
    target: Reference
    via: Via
    line_start: int
    line_end: int
    quote: str  # the line it was read from, trimmed
    reverse: bool = False  # "SUPERSEDED by X": the edge runs from the reference to `source`
    part: Part | None = None  # the PDF page (slide, sheet) its lines count within


class SectionRecord(BaseModel):
    node_id: str
    heading_path: list[str]
    line_start: int
    line_end: int


class PassageRecord(BaseModel):
    passage_id: str
    heading_path: list[str] = Field(default_factory=list)
    line_start: int
    line_end: int
    part: Part | None = None  # the PDF page, slide or sheet the lines count within


class DocumentRecord(BaseModel):
    """One document's part of the graph: its identity, sections, passages and the edges it states.

    Stored as one payload-only point, so re-ingesting a file rewrites only its own record."""

    node_id: str  # the URL, or the source path when there is none
    doc_id: str
    path: str
    url: str | None = None
    title: str
    record: int | None = None
    keys: list[str] = Field(default_factory=list)  # identifiers other documents may use for it
    family: str | None = None
    edition: str | None = None
    effective: str | None = None  # as written
    effective_date: date | None = None
    sections: list[SectionRecord] = Field(default_factory=list)
    passages: list[PassageRecord] = Field(default_factory=list)
    edges: list[StatedEdge] = Field(default_factory=list)
    digest: str = ""  # of everything above: an unchanged document is not rewritten


class ClaimPointer(BaseModel):
    path: str
    line_start: int
    line_end: int
    part: Part | None = None


class ClaimRecord(BaseModel):
    """A wiki claim as the graph keeps it: a node, with `cites` edges to the passages holding its lines."""

    id: str  # "claim:PAGE#cN"
    text: str
    wiki: str  # the wiki folder it belongs to
    evidence: list[ClaimPointer]


class Edge(BaseModel):
    """A resolved edge between two nodes (an unresolved target is an `external` node `ref:TEXT`)."""

    type: EdgeType
    source: str
    target: str
    via: Via
    path: str  # the file whose lines state it
    line_start: int
    line_end: int
    quote: str = ""
    effective: str | None = None  # when the source document takes effect
    part: Part | None = None  # the PDF page (slide, sheet) its lines count within

    def read_as(self, node: str) -> tuple[str, str]:
        """(edge name, other end) seen from `node`: the inverse name when `node` is the target."""
        return (self.type, self.target) if node == self.source else (INVERSE[self.type], self.source)


class Node(BaseModel):
    id: str
    kind: NodeKind
    title: str
    doc: str | None = None  # the document node it belongs to
    path: str | None = None
    heading_path: list[str] = Field(default_factory=list)
    line_start: int | None = None
    line_end: int | None = None


class PassageStatus(BaseModel):
    """Whether a passage still holds, by the graph: and if not, what replaced or changed it, from when."""

    state: PassageState = "current"
    by: list[str] = Field(default_factory=list)  # node ids of the superseding / amending documents
    by_titles: list[str] = Field(default_factory=list)
    effective: str | None = None  # when the newer rule takes effect, as written
    via_edges: list[Edge] = Field(default_factory=list)

    def line(self) -> str:
        if self.state == "current":
            return "current"
        who = "; ".join(self.by_titles or self.by)
        when = f", effective {self.effective}" if self.effective else ""
        return f"{self.state} by {who}{when}"
