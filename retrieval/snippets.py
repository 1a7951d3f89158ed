"""What an information table holds: snippets with their exact place, merged per source.

A source is a URL *and* the file it was read from: two files whose front matter
claim one URL stay two sources, so a citation always names the file and lines
its text came from (never another file that happens to share the URL).

Light on purpose (no Qdrant client): agents and the actors that only read and
write snippets import this; `retrieval.infotable` stores them in Qdrant.
"""

from __future__ import annotations

import re
import uuid
from typing import Sequence

from pydantic import BaseModel, Field

from retrieval.documents import Part, Passage, sha256_text
from retrieval.errors import RaystormError

_ID_NAMESPACE = uuid.UUID("2d0a4f1e-8b7c-4c39-a7f5-3f0e9c1d6b42")


class Snippet(BaseModel):
    """One piece of a source, with its exact place: what a citation points at."""

    url: str  # the passage's URL, or its path when it has none
    title: str
    text: str
    path: str
    line_start: int
    line_end: int
    passage_id: str
    heading_path: list[str] = Field(default_factory=list)
    record: int | None = None
    part: Part | None = None  # the PDF page, slide or sheet the lines count within

    @classmethod
    def from_passage(cls, p: Passage) -> "Snippet":
        return cls(url=p.source, title=p.title, text=p.text, path=p.path, line_start=p.line_start,
                   line_end=p.line_end, passage_id=p.passage_id, heading_path=p.heading_path, record=p.record,
                   part=p.part)

    @property
    def source_key(self) -> str:
        """The source's identity: its URL and its file (the path alone when it has no URL)."""
        return self.path if self.url == self.path else f"{self.url}\n{self.path}"

    @property
    def point_id(self) -> str:
        return str(uuid.uuid5(_ID_NAMESPACE, f"{self.source_key}\n{sha256_text(self.text)}"))

    def embedding_text(self) -> str:
        context = " > ".join([self.title, *self.heading_path])
        return f"{context}\n{self.text}"


class InfoEntry(BaseModel):
    """All snippets of one source (STORM's url_to_info value)."""

    url: str
    title: str
    description: str = ""
    snippets: list[Snippet]


def table_name(run_id: str) -> str:
    """The collection of a run's table; `run_id` is any stable text (e.g. topic slug + hash)."""
    if not run_id.strip():
        raise RaystormError("an empty run id cannot name a table")
    safe = re.sub(r"[^a-z0-9-]+", "-", run_id.lower()).strip("-")[:80].strip("-")
    if safe != run_id:  # letters were dropped or folded: the hash keeps two run ids apart
        safe = f"{safe}-{sha256_text(run_id)[:12]}".strip("-")
    return f"infotable-{safe}"


def group_by_url(snippets: Sequence[Snippet]) -> dict[str, InfoEntry]:
    """Snippets merged per source, first-seen order, no snippet twice.

    Keyed by URL as STORM's url_to_info is; when several files claim one URL, each
    is its own entry, keyed "URL (path)"."""
    by_source: dict[str, InfoEntry] = {}
    seen: set[str] = set()  # point ids (a point id includes its source: no snippet twice in one entry)
    for s in snippets:
        entry = by_source.setdefault(s.source_key, InfoEntry(url=s.url, title=s.title, snippets=[],
                                                             description=" > ".join(s.heading_path)))
        point = s.point_id  # (a hash of the text: computed once per snippet, not once per pair)
        if point not in seen:
            seen.add(point)
            entry.snippets.append(s)
    claims: dict[str, int] = {}
    for entry in by_source.values():
        claims[entry.url] = claims.get(entry.url, 0) + 1
    return {(e.url if claims[e.url] == 1 else f"{e.url} ({e.snippets[0].path})"): e for e in by_source.values()}
