"""Read files and directory trees into `Document`s; bad input is skipped, never fatal.

Formats: Markdown (front matter `title:`/`url:` honoured), plain text, HTML (text
only), JSON/JSONL (records with a `text` or `content` field plus `title`/`url`),
and CSV in STORM's VectorRM layout (`content`, `title`, `url`, `description`); PDF, Word,
PowerPoint and Excel through `retrieval.readers`, cited to page, slide or sheet and line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from pydantic import BaseModel

from retrieval import formats, readers
from retrieval.documents import Document, Segment

SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
            ".html": "html", ".htm": "html", ".json": "json", ".jsonl": "jsonl", ".csv": "csv",
            **readers.SUFFIXES}
TEXT_FIELDS = ("text", "content", "paragraph_text", "body")


class Skipped(BaseModel):
    """A file (or record) left out of an ingest, and why."""

    path: str
    reason: str
    unreadable: bool = False  # asked for and not readable here (missing, I/O error): not a content problem


HIDDEN = "hidden (name starts with '.')"


class _Skip(Exception):
    pass


class _Unreadable(_Skip):
    """The file could not be read at all (an I/O error), as opposed to read and found unusable."""


def iter_files(paths: list[str | Path]) -> Iterator[Path | Skipped]:
    """Every candidate file under `paths`, sorted. Hidden files and folders are passed over, and so is
    a symbolic link that leads out of the path it was found under (reported, never followed): ingest
    reads only what is inside the paths it was given."""
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            yield Skipped(path=str(path), reason="no such file or directory", unreadable=True)
        elif path.is_file():
            yield _resolved(path)
        elif path.is_dir():
            root = path.resolve()
            for folder, dirs, files in os.walk(root):  # never descends into a linked folder
                here = Path(folder)
                for name in [d for d in dirs if (here / d).is_symlink() and not d.startswith(".")]:
                    outside = _outside(here / name, root)
                    if outside:
                        yield Skipped(path=str(here / name), reason=outside)
                yield from (Skipped(path=str(here / d), reason=HIDDEN) for d in sorted(dirs) if d.startswith("."))
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (here / d).is_symlink())
                for name in sorted(files):
                    if name.startswith("."):
                        yield Skipped(path=str(here / name), reason=HIDDEN)
                        continue
                    outside = _outside(here / name, root)
                    yield (Skipped(path=str(here / name), reason=outside, unreadable=outside.startswith("unreadable"))
                           if outside else _resolved(here / name))
        else:
            yield Skipped(path=str(path), reason="not a regular file")


def _outside(path: Path, root: Path) -> str | None:
    """Why a symbolic link under `root` is not followed, or None for anything that stays inside."""
    if not path.is_symlink():
        return None
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # a dangling link or a loop (RuntimeError in Python 3.11)
        return f"unreadable: broken symbolic link ({exc})"
    if target != root and root not in target.parents:
        kind = "folder" if target.is_dir() else "file"
        return f"symbolic link to a {kind} outside {root} ({target}): not followed"
    return None  # inside: a linked folder's files are read where they are


def _resolved(path: Path) -> Path | Skipped:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # Python 3.11 raises RuntimeError on a symlink loop
        return Skipped(path=str(path), reason=f"unreadable ({exc})", unreadable=True)


def read_text(path: Path) -> str:
    """Decoded UTF-8 text, or `_Skip` with a reason a user can act on."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _Unreadable(f"unreadable ({exc.strerror or exc})") from exc
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


def load_file(path: Path, on_page: readers.PageProgress | None = None) -> tuple[list[Document], list[Skipped]]:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        return [], [Skipped(path=str(path), reason=f"unsupported file type '{path.suffix or path.name}'")]
    if kind in readers.SUFFIXES.values():
        return _extracted_document(path, on_page)
    try:
        text = read_text(path)
        if kind in ("markdown", "text", "html"):
            return [_text_document(path, kind, text)], []
        return _record_documents(path, kind, text)
    except _Skip as exc:
        return [], [Skipped(path=str(path), reason=str(exc), unreadable=isinstance(exc, _Unreadable))]
    except (ValueError, UnicodeError) as exc:  # malformed JSON/CSV
        return [], [Skipped(path=str(path), reason=f"malformed {kind}: {exc}")]


def load_paths(paths: list[str | Path], on_page: readers.PageProgress | None = None
               ) -> Iterator[Document | Skipped]:
    """Every document under `paths`, and every file skipped; `on_page` follows a PDF page by page."""
    for item in iter_files(paths):
        if isinstance(item, Skipped):
            yield item
            continue
        documents, skipped = load_file(item, on_page)
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


def _extracted_document(path: Path, on_page: readers.PageProgress | None = None
                        ) -> tuple[list[Document], list[Skipped]]:
    """A PDF, Word, PowerPoint or Excel file as one document, or the one line saying why not."""
    try:
        extracted = readers.extract(path)
        done = 0

        def read_one(_) -> None:
            nonlocal done
            done += 1
            on_page(path, done, extracted.count)

        segments = readers.segments_of(extracted.parts, read_one if on_page else None)
    except readers.Unreadable as exc:
        return [], [Skipped(path=str(path), reason=str(exc))]
    except Exception as exc:  # a parser's error on a malformed file skips that file, never the ingest
        return [], [Skipped(path=str(path), reason=f"unreadable {path.suffix.lower()} ({type(exc).__name__}: {exc})")]
    # untitled: the first line, when it reads as a title (a spreadsheet's first row never does)
    first_line = segments[0].text.strip() if segments and path.suffix.lower() not in (".xlsx", ".xlsm") else ""
    title = extracted.title or (first_line if 0 < len(first_line.split()) <= 15 else _title_from_name(path))
    segments = _drop_title_heading(segments, title)
    if not any(not s.is_heading for s in segments):
        return [], [Skipped(path=str(path), reason="no text content")]
    return [Document(doc_id=Document.make_id(str(path), None), path=str(path), title=title,
                     segments=segments)], []


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
