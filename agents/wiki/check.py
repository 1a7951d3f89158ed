"""The stale check: re-read every claim's evidence and say ok, relocated, stale or unresolved.

No model, no store, no network: files are read and lines hashed. A relocated
claim's pointer is moved to where its exact text now is.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from agents.wiki.claims import (
    CONTEXT_LINES,
    Claim,
    ClaimSet,
    ClaimState,
    Evidence,
    load_sidecars,
    pin,
    read_lines,
    sha256_lines,
)
from retrieval import readers


class EvidenceCheck(BaseModel):
    state: ClaimState
    was: str  # the pointer before the check
    now: str | None = None  # where the text is now (relocated), or the lines that replaced it (stale)
    stale_lines: tuple[int, int] | None = None
    reason: str | None = None  # why it is unresolved, when that is not "the text is gone"


OUTSIDE = "outside the corpus"


class ClaimCheck(BaseModel):
    sidecar: str
    page: str
    claim_id: str
    text: str
    state: ClaimState
    evidence: list[EvidenceCheck] = Field(default_factory=list)


class CheckReport(BaseModel):
    claims: list[ClaimCheck]
    counts: dict[str, int]
    files_read: int
    seconds: float = 0.0


_ORDER = {"ok": 0, "relocated": 1, "stale": 2, "unresolved": 3}


def _windows(lines: list[str], size: int, digest: str) -> list[int]:
    """1-based starts of every run of `size` lines hashing to `digest`."""
    return [i + 1 for i in range(len(lines) - size + 1) if sha256_lines(lines[i: i + size]) == digest]


def _context_positions(lines: list[str], digest: str | None) -> list[tuple[int, int]]:
    """(first, last) 1-based lines of each run of CONTEXT_LINES non-blank lines hashing to `digest`, and
    of the shorter runs that open or close the file (or PDF page): evidence near an edge has less context."""
    if digest is None:
        return []
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    runs = [nonblank[k: k + CONTEXT_LINES] for k in range(len(nonblank) - CONTEXT_LINES + 1)]
    runs += [nonblank[:k] for k in range(1, CONTEXT_LINES)] + [nonblank[-k:] for k in range(1, CONTEXT_LINES)]
    return [(picked[0] + 1, picked[-1] + 1) for picked in runs
            if picked and sha256_lines([lines[i] for i in picked]) == digest]


def check_evidence(ev: Evidence, lines: list[str] | None) -> tuple[EvidenceCheck, Evidence]:
    """The state of one piece of evidence, and the evidence as it should now read (moved if relocated)."""
    was = ev.pointer
    if lines is None:
        return EvidenceCheck(state="unresolved", was=was), ev
    size = ev.line_end - ev.line_start + 1
    if ev.line_end <= len(lines) and sha256_lines(lines[ev.line_start - 1: ev.line_end]) == ev.sha256:
        return EvidenceCheck(state="ok", was=was), ev
    starts = _windows(lines, size, ev.sha256)
    if starts:
        if len(starts) > 1:  # the same text twice: the copy whose context also matches
            fitting = [s for s in starts if pin(ev.source, ev.path, lines, s, s + size - 1, part=ev.part).before_sha256
                       == ev.before_sha256] or starts
            starts = sorted(fitting, key=lambda s: abs(s - ev.line_start))
        moved = pin(ev.source, ev.path, lines, starts[0], starts[0] + size - 1, ev.heading_path, ev.part)
        return EvidenceCheck(state="relocated", was=was, now=moved.pointer), moved
    # the text is not anywhere: edited in place (its context still frames some lines) or gone
    befores = _context_positions(lines, ev.before_sha256)
    afters = _context_positions(lines, ev.after_sha256)
    for _, b_end in befores:
        for a_start, _ in afters:
            if a_start > b_end + 1 and any(x.strip() for x in lines[b_end: a_start - 1]):
                first, last = b_end + 1, a_start - 1
                while not lines[first - 1].strip():
                    first += 1
                while not lines[last - 1].strip():
                    last -= 1
                span = (first, last)
                now = ev.model_copy(update={"line_start": span[0], "line_end": span[1]}).pointer
                return EvidenceCheck(state="stale", was=was, now=now,
                                     stale_lines=span), ev
    if bool(befores) != bool(afters) and ev.before_sha256 and ev.after_sha256 and _heading_kept(ev, lines):
        # one side of the context survived and so did its section: the text was edited there
        anchor = befores[0][1] + 1 if befores else max(afters[0][0] - size, 1)
        return EvidenceCheck(state="stale", was=was, stale_lines=(anchor, anchor + size - 1)), ev
    return EvidenceCheck(state="unresolved", was=was), ev


def _heading_kept(ev: Evidence, lines: list[str]) -> bool:
    """Is the section the evidence stood in still in the file (always, for text without headings)?"""
    if not ev.heading_path:
        return True
    last = ev.heading_path[-1].strip()
    if ev.part is not None or Path(ev.path).suffix.lower() in readers.SUFFIXES:  # headings are plain lines
        return any(line.strip() == last for line in lines)
    return any(line.lstrip("#").strip() == last for line in lines if line.startswith("#"))


def check_claim_set(claims: ClaimSet, cache: dict[str, list[str] | None]) -> tuple[list[tuple[Claim, list[EvidenceCheck]]], bool]:
    """Every claim of one sidecar checked; the claims with relocated pointers moved. (results, changed)"""
    results, changed = [], False
    for claim in claims.claims:
        checks, moved = [], []
        for ev in claim.evidence:
            if not claims.inside(ev.path):  # never opened: the check is no oracle for other files
                checks.append(EvidenceCheck(state="unresolved", was=ev.pointer, reason=OUTSIDE))
                moved.append(ev)
                continue
            key = ev.path if ev.part is None else f"{ev.path}#{ev.part.label()}"  # a page is re-extracted once
            if key not in cache:
                cache[key] = read_lines(ev.path, ev.part)
            result, now = check_evidence(ev, cache[key])
            checks.append(result)
            moved.append(now)
            changed |= now is not ev
        claim.evidence = moved
        results.append((claim, checks))
    return results, changed


def claim_state(checks: list[EvidenceCheck]) -> ClaimState:
    return max((c.state for c in checks), key=_ORDER.__getitem__, default="unresolved")


def check_folder(folder: Path, write: bool = True) -> CheckReport:
    """Check every sidecar under `folder`; relocated pointers are written back when `write`."""
    import time

    started = time.perf_counter()
    cache: dict[str, list[str] | None] = {}
    out: list[ClaimCheck] = []
    for path, claims in load_sidecars(folder):
        results, changed = check_claim_set(claims, cache)
        for claim, checks in results:
            out.append(ClaimCheck(sidecar=str(path), page=claims.page, claim_id=claim.id, text=claim.text,
                                  state=claim_state(checks), evidence=checks))
        if changed and write:
            path.write_text(claims.model_dump_json(indent=1) + "\n", encoding="utf-8")
    counts = {s: sum(1 for c in out if c.state == s) for s in _ORDER}
    return CheckReport(claims=out, counts=counts, files_read=len(cache), seconds=time.perf_counter() - started)
