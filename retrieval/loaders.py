"""Read files and directory trees into `Document`s; bad input is skipped, never fatal.

Formats: Markdown (front matter `title:`/`url:` honoured), plain text, HTML (text
only), JSON/JSONL (records with a `text` or `content` field plus `title`/`url`),
and CSV in STORM's VectorRM layout (`content`, `title`, `url`, `description`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from pydantic import BaseModel

from retrieval import formats
from retrieval.documents import Document, Segment

SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
            ".html": "html", ".htm": "html", ".json": "json", ".jsonl": "jsonl", ".csv": "csv"}
TEXT_FIELDS = ("text", "content", "paragraph_text", "body")


class Skipped(BaseModel):
    """A file (or record) left out of an ingest, and why."""

    path: str
    reason: str


class _Skip(Exception):
    pass


def iter_files(paths: list[str | Path]) -> Iterator[Path | Skipped]:
    """Every candidate file under `paths`, sorted; hidden files and folders are passed over."""
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            yield Skipped(path=str(path), reason="no such file or directory")
        elif path.is_file():
            yield _resolved(path)
        elif path.is_dir():
            for root, dirs, files in os.walk(path, onerror=None):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith("."):
                        yield _resolved(Path(root) / name)
        else:
            yield Skipped(path=str(path), reason="not a regular file")


def _resolved(path: Path) -> Path | Skipped:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # Python 3.11 raises RuntimeError on a symlink loop
        return Skipped(path=str(path), reason=f"unreadable ({exc})")


def read_text(path: Path) -> str:
    """Decoded UTF-8 text, or `_Skip` with a reason a user can act on."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _Skip(f"unreadable ({exc.strerror or exc})") from exc
    if not data.strip():
        raise _Skip("empty file")
    if b"\x00" in data[:8192]:
        raise _Skip("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise _Skip(f"not UTF-8 text (byte 0x{bad} at offset {exc.start}); convert it, e.g. "
                    f"`iconv -f latin1 -t utf-8`") from exc


def load_file(path: Path) -> tuple[list[Document], list[Skipped]]:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        return [], [Skipped(path=str(path), reason=f"unsupported file type '{path.suffix or path.name}'")]
    try:
        text = read_text(path)
        if kind in ("markdown", "text", "html"):
            return [_text_document(path, kind, text)], []
        return _record_documents(path, kind, text)
    except _Skip as exc:
        return [], [Skipped(path=str(path), reason=str(exc))]
    except (ValueError, UnicodeError) as exc:  # malformed JSON/CSV
        return [], [Skipped(path=str(path), reason=f"malformed {kind}: {exc}")]


def load_paths(paths: list[str | Path]) -> Iterator[Document | Skipped]:
    for item in iter_files(paths):
        if isinstance(item, Skipped):
            yield item
            continue
        documents, skipped = load_file(item)
        yield from skipped
        yield from documents


def _title_from_name(path: Path) -> str:
    return path.stem.replace("_", " ").replace("-", " ").strip() or path.name


def _text_document(path: Path, kind: str, text: str) -> Document:
    lines = text.splitlines()
    meta: dict[str, str] = {}
    if kind == "html":
        segments, title = formats.html_segments(text)
        meta["title"] = title or ""
    elif kind == "markdown":
        meta, body_start = formats.parse_front_matter(lines)
        segments = formats.markdown_segments(lines, body_start)
    else:
        segments = formats.text_segments(lines)
    title = meta.get("title") or _first_heading(segments) or _title_from_name(path)
    segments = _drop_title_heading(segments, title)
    if not any(not s.is_heading for s in segments):
        raise _Skip("no text content")
    tags = [t.strip() for t in meta.get("tags", "").strip("[]").split(",") if t.strip()]
    doc = Document(doc_id=Document.make_id(str(path), None), path=str(path), url=meta.get("url") or None,
                   title=title, description=meta.get("description") or None, tags=tags, segments=segments)
    return doc


def _first_heading(segments: list[Segment]) -> str | None:
    for s in segments:
        if s.is_heading and len(s.heading_path) == 1:
            return s.text
    return None


def _drop_title_heading(segments: list[Segment], title: str) -> list[Segment]:
    """A top heading that repeats the title is the title, not a section."""
    tops = [s for s in segments if s.is_heading and len(s.heading_path) == 1]
    if len(tops) != 1 or tops[0].text.strip().lower() != title.strip().lower():
        return segments
    out = []
    for s in segments:
        if s is tops[0]:
            continue
        path = s.heading_path[1:] if s.heading_path[:1] == [tops[0].text] else s.heading_path
        out.append(s.model_copy(update={"heading_path": path}))
    return out


def _record_documents(path: Path, kind: str, text: str) -> tuple[list[Document], list[Skipped]]:
    skipped: list[Skipped] = []
    if kind == "jsonl":
        records, problems = formats.jsonl_records(text)
        skipped += [Skipped(path=f"{path}:{p.split(':')[0].split()[-1]}", reason=p) for p in problems]
    elif kind == "json":
        records = formats.json_records(text)
    else:
        records = formats.csv_records(text)
    documents = []
    for index, record in enumerate(records):
        fields = record.fields
        body = next((fields[k] for k in TEXT_FIELDS if fields.get(k)), None)
        if isinstance(body, list):
            body = " ".join(str(x) for x in body)
        if not isinstance(body, str) or not body.strip():
            skipped.append(Skipped(path=f"{path}#{index}", reason="record has no text/content field"))
            continue
        title = str(fields.get("title") or f"{_title_from_name(path)} #{index}")
        paragraphs = [p.strip() for p in body.replace("\r\n", "\n").split("\n\n") if p.strip()]
        segments = [Segment(text=p, line_start=record.line_start, line_end=record.line_end) for p in paragraphs]
        tags = fields.get("tags") if isinstance(fields.get("tags"), list) else []
        documents.append(Document(
            doc_id=Document.make_id(str(path), index), path=str(path), record=index,
            url=str(fields["url"]) if fields.get("url") else None, title=title,
            description=str(fields["description"]) if fields.get("description") else None,
            tags=[str(t) for t in tags], segments=segments))
    if not documents and not skipped:
        skipped.append(Skipped(path=str(path), reason="no records"))
    return documents, skipped
