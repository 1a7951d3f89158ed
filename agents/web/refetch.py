"""`raystorm wiki check --refetch`: fetch again the web pages a report or wiki cites, so the stale
check compares its claims with what the pages say now.

A claim's evidence is lines of a snapshot file (`agents.web.snapshots`); refetching rewrites that
file when the page changed (a 304 or the same text leaves it as it was), and the ordinary check
(`agents.wiki.check`, no model, no network) then finds the claims whose lines changed: stale.

    results = await refetch_snapshots(paths_cited, FetchSettings(allow_private_hosts=False))
    for r in results:
        print(r.line())
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ValidationError

from agents.web.fetch import FetchSettings, PageFetcher
from agents.web.snapshots import Snapshot, SnapshotStore


class Refetched(BaseModel):
    url: str
    path: str
    state: str  # changed | unchanged | failed
    reason: str = ""

    def line(self) -> str:
        said = {"changed": "the page changed", "unchanged": "unchanged"}.get(self.state, f"not refetched: {self.reason}")
        return f"refetched {self.url}: {said}"


def snapshot_record(path: str | Path) -> Snapshot | None:
    """The fetch record of a snapshot file (its `.json` beside it), or None when `path` is no snapshot."""
    md = Path(path)
    if md.suffix != ".md" or md.parent.name != "snapshots":
        return None
    try:
        snap = Snapshot.model_validate_json(md.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None
    return snap if Path(snap.path).resolve() == md.resolve() else None


async def refetch_snapshots(paths: Iterable[str], settings: FetchSettings) -> list[Refetched]:
    """Each snapshot among `paths` fetched again now (no TTL; conditional where the page gave an ETag or
    Last-Modified); other paths are passed over."""
    by_root: dict[Path, list[Snapshot]] = {}
    for path in dict.fromkeys(paths):
        snap = snapshot_record(path)
        if snap is not None:
            by_root.setdefault(Path(snap.path).resolve().parent.parent, []).append(snap)
    now = settings.model_copy(update={"ttl_s": 0.0})
    out: list[Refetched] = []
    for root, snaps in by_root.items():
        fetcher = PageFetcher(now, SnapshotStore(root))
        try:
            outcomes = await fetcher.fetch_many([s.url for s in snaps])
        finally:
            await fetcher.aclose()
        for snap, outcome in zip(snaps, outcomes):
            if outcome.snapshot is None:
                out.append(Refetched(url=snap.url, path=snap.path, state="failed",
                                     reason=f"{outcome.status}: {outcome.reason}"))
            else:
                state = "unchanged" if outcome.snapshot.sha256 == snap.sha256 else "changed"
                out.append(Refetched(url=snap.url, path=snap.path, state=state))
    return out
