"""Snapshots: each fetched page kept as a Markdown file in the data dir, with its fetch record.

`root/snapshots/<sha16 of the URL>.md` holds the extracted text under front matter whose
`title:` and `url:` the Markdown loader honours (`retrieval.loaders`), so ingesting the file
gives passages whose `url` is the page (its final URL, after redirects) and whose line numbers
count in the snapshot file. `<sha16>.json` beside it is the `Snapshot` record (URL, final URL,
fetch time, content type, ETag / Last-Modified, sha256 of the text). `root/texts/<sha256>`
names the first URL stored with that text, so a second URL with the same text is told which
one it duplicates.

Writes go to a temporary file renamed into place, so two processes writing the same URL leave
one whole snapshot, never a mix.

    store = SnapshotStore(data_dir / "web")
    snap = store.put(url, final_url=url, title="Storm surges", content_type="text/html",
                     etag='"abc"', last_modified=None, text="First paragraph.\\n\\nSecond.")
    store.get(url).path          # .../web/snapshots/1f2e....md
    store.is_fresh(snap, ttl_s=86400)
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ValidationError


class Snapshot(BaseModel):
    url: str  # as asked for
    final_url: str  # after redirects: the page the text is from, and the `url:` of the file
    fetched_at: str  # ISO 8601, UTC; the last time the server confirmed this text (200 or 304)
    title: str
    content_type: str
    etag: str | None = None
    last_modified: str | None = None
    sha256: str  # of the extracted text
    path: str  # the .md file


def url_key(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _one_line(text: str, fallback: str) -> str:
    """A front-matter value: one line, and never a lone `---` that would end the front matter."""
    line = " ".join(text.split())
    return line if line.strip("-.") else fallback


def _write_atomic(path: Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def markdown(snapshot: Snapshot, text: str) -> str:
    """The snapshot file: front matter (title, url, fetch record), a blank line, the text."""
    fields = [("title", _one_line(snapshot.title, snapshot.final_url)), ("url", snapshot.final_url),
              ("requested_url", snapshot.url), ("fetched_at", snapshot.fetched_at),
              ("content_type", snapshot.content_type), ("sha256", snapshot.sha256)]
    head = "\n".join(f"{k}: {_one_line(v, '-')}" for k, v in fields)
    return f"---\n{head}\n---\n\n{text.rstrip()}\n"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SnapshotStore:
    """Snapshots under `root` (the data dir's `web/`), one pair of files per URL."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.pages = self.root / "snapshots"
        self.texts = self.root / "texts"

    def _paths(self, url: str) -> tuple[Path, Path]:
        key = url_key(url)
        return self.pages / f"{key}.md", self.pages / f"{key}.json"

    def get(self, url: str) -> Snapshot | None:
        """The snapshot of `url`, or None when there is none (or its files are incomplete)."""
        md, record = self._paths(url)
        try:
            snap = Snapshot.model_validate_json(record.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None
        return snap if snap.url == url and md.exists() else None

    def read_text(self, snapshot: Snapshot) -> str:
        """The snapshot's extracted text (the file without its front matter)."""
        content = Path(snapshot.path).read_text(encoding="utf-8")
        match = re.match(r"---\n.*?\n---\n\n", content, flags=re.S)
        return content[match.end():] if match else content

    def put(self, url: str, *, final_url: str, title: str, content_type: str, etag: str | None,
            last_modified: str | None, text: str, fetched_at: str | None = None) -> Snapshot:
        """Write (or replace) the snapshot of `url`; returns its record."""
        self.pages.mkdir(parents=True, exist_ok=True)
        md, record = self._paths(url)
        snap = Snapshot(url=url, final_url=final_url, fetched_at=fetched_at or now_iso(), title=title,
                        content_type=content_type, etag=etag, last_modified=last_modified,
                        sha256=text_sha256(text.rstrip()), path=str(md))
        _write_atomic(md, markdown(snap, text))
        _write_atomic(record, snap.model_dump_json(indent=1))
        self._claim_text(snap)
        return snap

    def touch(self, snapshot: Snapshot, etag: str | None = None, last_modified: str | None = None) -> Snapshot:
        """The server confirmed the text (304): a new fetch time, and any new validators."""
        snap = snapshot.model_copy(update={"fetched_at": now_iso(), "etag": etag or snapshot.etag,
                                           "last_modified": last_modified or snapshot.last_modified})
        _write_atomic(self._paths(snap.url)[1], snap.model_dump_json(indent=1))
        return snap

    def is_fresh(self, snapshot: Snapshot, ttl_s: float) -> bool:
        fetched = datetime.fromisoformat(snapshot.fetched_at)
        return (datetime.now(timezone.utc) - fetched).total_seconds() < ttl_s

    def _claim_text(self, snap: Snapshot) -> None:
        """Record `snap.url` as the first holder of its text, unless another URL already is."""
        self.texts.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.texts / snap.sha256, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if self.duplicate_of(snap) is None and not self._holder_is(snap):
                _write_atomic(self.texts / snap.sha256, snap.url)  # the holder's text changed since
            return
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(snap.url)

    def _holder_is(self, snap: Snapshot) -> bool:
        try:
            return (self.texts / snap.sha256).read_text(encoding="utf-8") == snap.url
        except OSError:
            return False

    def duplicate_of(self, snap: Snapshot) -> str | None:
        """The URL whose snapshot first had the same text as `snap`, if not `snap`'s own."""
        try:
            holder = (self.texts / snap.sha256).read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if not holder or holder == snap.url:
            return None
        other = self.get(holder)
        return holder if other is not None and other.sha256 == snap.sha256 else None
