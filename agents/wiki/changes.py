"""What changed between two runs of a report: claims new, gone, or whose cited lines changed, per section,
and cited sources that became superseded in between. Files and hashes only: no model call.

A run keeps what it needs for this beside report.md: its claims sidecar (report.claims.json) and the status
the evidence graph gave each cited place when the run finished (report.sources.json). When a topic is
reported again into the same folder, the earlier run's copies move to `previous/` first (named so that
`raystorm wiki check RUN` does not read them as a second report).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from agents.storm.artifacts import markdown_text
from agents.wiki.claims import Claim, ClaimSet, Evidence, normalize
from agents.wiki.pinning import core
from retrieval.documents import Part, line_range
from retrieval.errors import RaystormError
from retrieval.saved import DamagedFile, load_json

CLAIMS, SOURCES, CHANGES_MD, CHANGES_JSON, PREVIOUS = (
    "report.claims.json", "report.sources.json", "changes.md", "changes.json", "previous")
KEPT = {"report.claims.json": "claims.json", "report.sources.json": "sources.json", "report.md": "report.md"}


def line_ranges(places: list[tuple[Part | None, int, int]]) -> list[str]:
    """Cited ranges as a reader reads them, one entry per page/slide/sheet (one for a plain file):
    "lines 11–13, 38–40, 44", 'p. 3, line 4', 'sheet "2024", rows 9–12'."""
    by_part: dict[Part | None, set[tuple[int, int]]] = {}
    for part, start, end in places:
        by_part.setdefault(part, set()).add((start, end))
    out = []
    for part in sorted(by_part, key=lambda p: (p.number, p.name or "") if p else (0, "")):
        spans = sorted(by_part[part])
        text = line_range(part, *spans[0])
        if len(spans) > 1:  # "line 25" then the other ranges: "lines 25, 29, 33"
            unit = text.rsplit(" ", 2)[-2]
            text = text.replace(f"{unit} ", f"{unit.rstrip('s')}s ", 1)
            text += "".join(f", {a}" if a == b else f", {a}–{b}" for a, b in spans[1:])
        out.append(text)
    return out


class Superseder(BaseModel):
    """A newer document that supersedes all or part of a cited one, as the evidence graph found it."""

    title: str
    scope: str  # "in full", or the heading of the section it replaces
    where: str  # the newer document's lines that say so: "bulletin-2025-02.md, line 9"
    effective: str | None = None


class SourceStatus(BaseModel):
    """A document a run cites, the lines it cites, and what supersedes it (wholly or in part) when the
    run finished."""

    path: str
    title: str
    cited: list[str] = Field(default_factory=list)  # "line 25", "p. 3, lines 4–9"
    superseded_by: list[Superseder] = Field(default_factory=list)


class RunSources(BaseModel):
    documents: list[SourceStatus] = Field(default_factory=list)


class Cited(BaseModel):
    """A claim as one run states it, with where it cites."""

    text: str
    places: list[str]


class ClaimChange(BaseModel):
    kind: str  # "new", "gone", "changed"
    section: str
    before: Cited | None = None
    after: Cited | None = None


class SupersededSource(BaseModel):
    title: str
    earlier: str  # where the earlier run cited it: "bulletin-2021-04.md, lines 25, 29"
    by: list[Superseder]


class RunChanges(BaseModel):
    topic: str
    earlier: str
    later: str
    claims: list[ClaimChange] = Field(default_factory=list)
    superseded: list[SupersededSource] = Field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(c.kind == kind for c in self.claims)


def _place(e: Evidence) -> str:
    return f"{Path(e.path).name}, {line_range(e.part, e.line_start, e.line_end)}"


def _cited(c: Claim) -> Cited:
    return Cited(text=c.text, places=[_place(e) for e in c.evidence])


def _same(c: Claim) -> tuple:
    """Equal for a claim that says the same from the same lines' text (wherever those lines now are); a
    value newly marked as history ("Until 2023 (superseded by ...): ...") still says the same."""
    return (normalize(core(c.text)), frozenset((e.path, e.part, e.sha256) for e in c.evidence))


def _overlap(a: Claim, b: Claim) -> int:
    """How many cited lines two claims share (same file, page/sheet, overlapping range) whose text changed
    between the runs: two sentences of one unchanged line are two claims, not one changed."""
    return sum(max(0, min(x.line_end, y.line_end) - max(x.line_start, y.line_start) + 1)
               for x in a.evidence for y in b.evidence if x.path == y.path and x.part == y.part
               and x.sha256 != y.sha256)


def compare_claims(earlier: list[Claim], later: list[Claim]) -> list[ClaimChange]:
    """Claims unchanged drop out; a later claim citing the lines an earlier one cited, with other text or
    other line contents, is that claim changed; what is left is gone (earlier) or new (later)."""
    later_keys: dict[tuple, int] = {}
    for c in later:
        later_keys[_same(c)] = later_keys.get(_same(c), 0) + 1
    gone: list[Claim] = []
    for c in earlier:
        if later_keys.get(_same(c), 0):
            later_keys[_same(c)] -= 1
        else:
            gone.append(c)
    unmatched_keys = dict(later_keys)
    new: list[Claim] = []
    for c in later:
        if unmatched_keys.get(_same(c), 0):
            unmatched_keys[_same(c)] -= 1
            new.append(c)
    out: list[ClaimChange] = []
    for before in gone[:]:
        best = max(new, key=lambda after: _overlap(before, after), default=None)
        if best is not None and _overlap(before, best) > 0:
            out.append(ClaimChange(kind="changed", section=best.section, before=_cited(before), after=_cited(best)))
            new.remove(best)
            gone.remove(before)
    out += [ClaimChange(kind="gone", section=c.section, before=_cited(c)) for c in gone]
    out += [ClaimChange(kind="new", section=c.section, after=_cited(c)) for c in new]
    return out


def newly_superseded(earlier: RunSources, later: RunSources) -> list[SupersededSource]:
    """Documents the earlier run cited that something supersedes now and did not then (in full or in part:
    a section the report did not cite may be the part replaced, and the reader should know)."""
    now = {d.path: d for d in later.documents}
    out = []
    for d in earlier.documents:
        if d.path not in now:
            continue
        before = {(x.title, x.scope) for x in d.superseded_by}
        new = [x for x in now[d.path].superseded_by if (x.title, x.scope) not in before]
        if new:
            out.append(SupersededSource(title=d.title, earlier=f"{Path(d.path).name}, {'; '.join(d.cited)}", by=new))
    return out


def _claims(folder: Path, name: str) -> ClaimSet:
    return load_json(folder / name, ClaimSet, "rerun `raystorm report` to write it")


def _sources(folder: Path, name: str) -> RunSources:
    path = folder / name
    return load_json(path, RunSources, "rerun `raystorm report` to write it") if path.is_file() else RunSources()


def diff_runs(earlier: Path, later: Path, earlier_names: tuple[str, str] = (CLAIMS, SOURCES)) -> RunChanges:
    """The changes from run folder `earlier` to run folder `later` (`earlier_names`: its claims and
    sources files, `previous/`'s own names when it is the kept copy)."""
    for folder, name in ((earlier, earlier_names[0]), (later, CLAIMS)):
        if not (folder / name).is_file():
            raise RaystormError(f"{folder} has no {name}: pass a report's run folder written by this version "
                                "of raystorm (rerun `raystorm report` to write one)")
    a, b = _claims(earlier, earlier_names[0]), _claims(later, CLAIMS)
    return RunChanges(topic=b.title, earlier=str(earlier), later=str(later), claims=compare_claims(a.claims, b.claims),
                      superseded=newly_superseded(_sources(earlier, earlier_names[1]), _sources(later, SOURCES)))


def keep_previous(run_dir: Path) -> bool:
    """Before a topic is reported again into `run_dir`: its finished run's claims, sources and report.md
    move to previous/ (replacing an older copy). False when there is no finished run to keep."""
    if not ((run_dir / "report.md").is_file() and (run_dir / CLAIMS).is_file()):
        return False
    keep = run_dir / PREVIOUS
    keep.mkdir(exist_ok=True)
    for name, kept in KEPT.items():
        if (run_dir / name).is_file():
            tmp = keep / f".{kept}.tmp"
            shutil.copyfile(run_dir / name, tmp)
            os.replace(tmp, keep / kept)
        else:
            (keep / kept).unlink(missing_ok=True)
    return True


def changes_since_previous(run_dir: Path) -> RunChanges | None:
    """The changes from previous/ to this run, or None when no earlier run was kept."""
    keep = run_dir / PREVIOUS
    if not (keep / KEPT[CLAIMS]).is_file():
        return None
    try:
        return diff_runs(keep, run_dir, (KEPT[CLAIMS], KEPT[SOURCES]))
    except DamagedFile:
        return None


def _superseders(graph, record) -> list[Superseder]:
    out: dict[tuple[str, str], Superseder] = {}
    for e in graph.edges:
        target = graph.nodes.get(e.target)
        if e.type != "supersedes" or target is None or target.doc != record.node_id:
            continue
        newer = graph.nodes.get(graph.nodes[e.source].doc) if e.source in graph.nodes else None
        title, scope = newer.title if newer else e.source, "in full" if target.kind == "document" else target.title
        # one document may name the same section twice (a header line and its text): said once
        out.setdefault((title, scope), Superseder(
            title=title, scope=scope, effective=e.effective,
            where=f"{Path(e.path).name}, {line_range(e.part, e.line_start, e.line_end)}"))
    return list(out.values())


def record_sources(run_dir: Path, graph) -> RunSources:
    """report.sources.json: the documents this run cites and what the evidence graph (`graph`, None when
    the collection has none) says supersedes them now, for them and for the documents a kept earlier run
    cited (so a later diff can tell which became superseded)."""
    folders = [(run_dir, CLAIMS), (run_dir / PREVIOUS, KEPT[CLAIMS])]
    cited: dict[str, list[tuple[Part | None, int, int]]] = {}
    for folder, name in folders:
        if (folder / name).is_file():
            for c in _claims(folder, name).claims:
                for e in c.evidence:
                    cited.setdefault(e.path, []).append((e.part, e.line_start, e.line_end))
    records = {r.path: r for r in graph.records} if graph is not None else {}
    documents = []
    for path in sorted(cited):
        record = records.get(path)
        documents.append(SourceStatus(path=path, title=record.title if record else Path(path).name,
                                      cited=line_ranges(cited[path]),
                                      superseded_by=_superseders(graph, record) if record else []))
    sources = RunSources(documents=documents)
    tmp = run_dir / f".{SOURCES}.tmp"
    tmp.write_text(sources.model_dump_json(indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, run_dir / SOURCES)
    return sources


def _quote(c: Cited) -> str:
    return f"“{markdown_text(c.text)}” ({'; '.join(markdown_text(p) for p in c.places)})"


def changes_markdown(changes: RunChanges) -> str:
    """changes.md: a count, then per section the claims new, gone or changed (earlier and later
    citation), then the sources superseded since the earlier run (its citation and the superseding one)."""
    earlier = "the previous run of this topic (kept in previous/)" if Path(changes.earlier).name == PREVIOUS \
        else f"the earlier run ({markdown_text(changes.earlier)})"
    lines = [f"# What changed: {markdown_text(changes.topic)}", "",
             f"Since {earlier}: {changes.count('new')} claims new, "
             f"{changes.count('gone')} gone, {changes.count('changed')} with changed cited lines; "
             f"{len(changes.superseded)} cited sources superseded since. Found from the claims' line hashes "
             "and the evidence graph, with no model call."]
    sections = list(dict.fromkeys(c.section for c in changes.claims))
    for section in sections:
        lines += ["", f"## {markdown_text(section) or '(lead)'}", ""]
        for c in changes.claims:
            if c.section != section:
                continue
            if c.kind == "changed":
                lines.append(f"- **Cited lines changed**: was {_quote(c.before)}; now {_quote(c.after)}")
            elif c.kind == "new":
                lines.append(f"- **New**: {_quote(c.after)}")
            else:
                lines.append(f"- **Gone**: {_quote(c.before)}")
    if changes.superseded:
        lines += ["", "## Sources superseded since the earlier run", ""]
        for s in changes.superseded:
            by = "; ".join(f"{markdown_text(x.title)} ({markdown_text(x.where)}) supersedes "
                           + ("it in full" if x.scope == "in full" else f"its section “{markdown_text(x.scope)}”")
                           + (f", effective {markdown_text(x.effective)}" if x.effective else "") for x in s.by)
            lines.append(f"- {markdown_text(s.title)}, cited by the earlier run ({markdown_text(s.earlier)}): {by}")
    if not changes.claims and not changes.superseded:
        lines += ["", "Nothing changed: every claim cites the same text at the same lines, and no cited source "
                  "became superseded."]
    return "\n".join(lines) + "\n"


def write_changes(run_dir: Path, changes: RunChanges, out: Path | None = None) -> Path:
    """changes.md (at `out`, default RUN_DIR/changes.md) and changes.json beside it (the web page's panel)."""
    md = out or run_dir / CHANGES_MD
    md.parent.mkdir(parents=True, exist_ok=True)
    for path, text in ((md, changes_markdown(changes)),
                       (md.with_suffix(".json"), changes.model_dump_json(indent=1) + "\n")):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return md
