"""Claims and their evidence: a statement, the exact source lines behind it, and their hashes.

`Evidence` pins `path` lines `line_start`-`line_end` by the sha256 of exactly those
lines (joined by "\\n", as the file has them) and keeps the hashes of the nearest
non-blank lines before and after, so text that moved can be found again and text
that was edited in place can be told from text that is gone.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from retrieval.documents import Part
from retrieval.errors import RaystormError

CONTEXT_LINES = 2
SIDECAR_SUFFIX = ".claims.json"
ClaimState = Literal["ok", "relocated", "stale", "unresolved"]


def sha256_lines(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


class Evidence(BaseModel):
    source: str  # what a reader sees: the URL, or the path
    path: str  # the file the lines are read from
    line_start: int
    line_end: int
    sha256: str  # of exactly lines line_start..line_end
    before_sha256: str | None = None  # of the CONTEXT_LINES non-blank lines just before
    after_sha256: str | None = None  # and just after
    heading_path: list[str] = Field(default_factory=list)
    part: Part | None = None  # the PDF page, slide or sheet the lines count within

    @property
    def pointer(self) -> str:
        where = f"{self.part.label()}:" if self.part is not None else ""
        return f"{self.source}#{where}L{self.line_start}-L{self.line_end}"


class Claim(BaseModel):
    id: str
    text: str  # the statement as the page (or report) says it
    section: str = ""  # the page or report section it stands in
    evidence: list[Evidence]


class ClaimSet(BaseModel):
    """The sidecar of one page or one report: every statement it makes, with its evidence."""

    kind: Literal["wiki", "report"]
    title: str
    page: str  # the markdown file this sidecar belongs to (a name in the same folder)
    collection: str | None = None
    written_by: str = ""  # the model that wrote the statements
    claims: list[Claim] = Field(default_factory=list)
    # the folders of the collection's files the claims were built from: a check opens nothing else
    roots: list[str] = Field(default_factory=list)

    def record_roots(self) -> "ClaimSet":
        """Record, once the claims are made, the folders their evidence files lie in."""
        folders = sorted({str(Path(os.path.realpath(ev.path)).parent) for c in self.claims for ev in c.evidence})
        self.roots = [f for f in folders if not any(f.startswith(r.rstrip("/") + "/") for r in folders if r != f)]
        return self

    def inside(self, path: str) -> bool:
        """Is `path`, links followed, inside the recorded roots (a claims file naming /etc/passwd is not)?"""
        real = os.path.realpath(path)
        return any(real.startswith(root.rstrip("/") + "/") for root in self.roots)


def read_lines(path: str | Path, part: Part | None = None) -> list[str] | None:
    """A file's lines; for a PDF, Word, PowerPoint or Excel file, the lines of `part` extracted again."""
    from retrieval import readers

    if part is not None or Path(path).suffix.lower() in readers.SUFFIXES:
        return readers.part_lines(path, part)
    try:
        return Path(path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeError):
        return None


def _nonblank_before(lines: list[str], index: int) -> list[str]:
    out = []
    for line in reversed(lines[:index]):
        if line.strip():
            out.insert(0, line)
            if len(out) == CONTEXT_LINES:
                break
    return out


def _nonblank_after(lines: list[str], index: int) -> list[str]:
    out = []
    for line in lines[index:]:
        if line.strip():
            out.append(line)
            if len(out) == CONTEXT_LINES:
                break
    return out


def pin(source: str, path: str, lines: list[str], line_start: int, line_end: int,
        heading_path: list[str] | None = None, part: Part | None = None) -> Evidence:
    """Evidence for lines line_start..line_end (1-based) of a file read as `lines`."""
    if not 1 <= line_start <= line_end <= len(lines):
        raise RaystormError(f"lines {line_start}-{line_end} are outside {path} ({len(lines)} lines)")
    before, after = _nonblank_before(lines, line_start - 1), _nonblank_after(lines, line_end)
    return Evidence(source=source, path=path, line_start=line_start, line_end=line_end,
                    sha256=sha256_lines(lines[line_start - 1: line_end]),
                    before_sha256=sha256_lines(before) if before else None,
                    after_sha256=sha256_lines(after) if after else None, heading_path=heading_path or [],
                    part=part)


def normalize(text: str) -> str:
    return " ".join(re.sub(r"[*_`>#]", " ", text).split()).lower()


def narrow(lines: list[str], line_start: int, line_end: int, sentence: str) -> tuple[int, int]:
    """The shortest run of lines within line_start..line_end whose text holds `sentence` (else the range)."""
    want = normalize(sentence)
    if not want:
        return line_start, line_end
    for size in range(1, line_end - line_start + 2):
        for a in range(line_start, line_end - size + 2):
            if want in normalize(" ".join(lines[a - 1: a - 1 + size])):
                return a, a + size - 1
    return line_start, line_end


def sidecar_path(page: Path) -> Path:
    return page.with_name(page.stem + SIDECAR_SUFFIX)


def load_sidecars(folder: Path) -> list[tuple[Path, ClaimSet]]:
    """Every claims sidecar under `folder` (a wiki, a run, or one topic of a run)."""
    if not folder.exists():
        raise RaystormError(f"no folder {folder}: pass a wiki built by `raystorm wiki build` or a report folder")
    files = [folder] if folder.is_file() else sorted(folder.rglob(f"*{SIDECAR_SUFFIX}"))
    out = []
    for f in files:
        try:
            out.append((f, ClaimSet.model_validate_json(f.read_text(encoding="utf-8"))))
        except (OSError, ValueError) as exc:
            raise RaystormError(f"{f} is not a claims sidecar ({str(exc).splitlines()[0]}); rebuild it") from exc
    if not out:
        raise RaystormError(f"no claims sidecars (*{SIDECAR_SUFFIX}) under {folder}: build a wiki with "
                            f"`raystorm wiki build`, or write a report with this version of raystorm")
    return out
