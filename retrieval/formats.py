"""Parsers from decoded source text to `Segment`s, one function a format.

Every segment records the 1-based lines it came from, so a passage cut from it
can be traced (and re-read) in the source file.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from html.parser import HTMLParser
from typing import Any, Callable, Iterator, NamedTuple

from retrieval.documents import Segment

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BETWEEN = re.compile(r"[\s,]*")  # between JSON members
_COLON = re.compile(r"\s*:\s*")


class Record:
    """One record of a structured file (JSON, JSONL, CSV) with its line range."""

    def __init__(self, fields: dict, line_start: int, line_end: int):
        self.fields = fields
        self.line_start = line_start
        self.line_end = line_end


def parse_front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """`---`-delimited `key: value` lines at the top; returns (fields, first body line index)."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    fields: dict[str, str] = {}
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return fields, i + 1
        key, sep, value = lines[i].partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = value.strip().strip("'\"")
    return {}, 0  # no closing delimiter: not front matter


def markdown_segments(lines: list[str], start: int = 0) -> list[Segment]:
    """Paragraphs (blank-line separated) tagged with their heading path; headings too."""
    segments: list[Segment] = []
    stack: list[tuple[int, str]] = []
    block: list[int] = []
    in_fence = False

    def flush() -> None:
        if block:
            # whitespace-only lines (inside a fence) read as empty, as between paragraphs
            text = "\n".join(ln if ln.strip() else "" for ln in lines[block[0] : block[-1] + 1]).strip("\n")
            if text.strip():
                segments.append(Segment(text=text, line_start=block[0] + 1, line_end=block[-1] + 1,
                                        heading_path=[h for _, h in stack]))
            block.clear()

    for i in range(start, len(lines)):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            flush()
            level, title = len(heading.group(1)), heading.group(2).strip()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            segments.append(Segment(text=title, line_start=i + 1, line_end=i + 1,
                                    heading_path=[h for _, h in stack], is_heading=True))
        elif line.strip() or in_fence:
            block.append(i)
        else:
            flush()
    flush()
    return segments


def text_segments(lines: list[str]) -> list[Segment]:
    """Plain text: paragraphs separated by blank lines, no headings."""
    segments, block = [], []
    for i, line in enumerate(lines + [""]):
        if line.strip():
            block.append(i)
        elif block:
            segments.append(Segment(text="\n".join(lines[block[0] : block[-1] + 1]),
                                    line_start=block[0] + 1, line_end=block[-1] + 1))
            block = []
    return segments


class _HTMLText(HTMLParser):
    """Collects visible text per block element with the lines it spans."""

    BLOCKS = {"p", "li", "div", "td", "th", "pre", "blockquote", "section", "article", "dd", "dt",
              "h1", "h2", "h3", "h4", "h5", "h6", "title", "br", "tr", "table", "ul", "ol", "main", "body"}
    HIDDEN = {"script", "style", "noscript", "template", "head"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.segments: list[Segment] = []
        self.title: str | None = None
        self._parts: list[str] = []
        self._lines: list[int] = []
        self._hidden = 0
        self._heading: int | None = None
        self._in_title = False
        self._stack: list[tuple[int, str]] = []

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self._parts)).strip()
        if text:
            line_start, line_end = min(self._lines), max(self._lines)
            if self._in_title:
                self.title = text
            elif self._heading:
                while self._stack and self._stack[-1][0] >= self._heading:
                    self._stack.pop()
                self._stack.append((self._heading, text))
                self.segments.append(Segment(text=text, line_start=line_start, line_end=line_end,
                                             heading_path=[h for _, h in self._stack], is_heading=True))
            else:
                self.segments.append(Segment(text=text, line_start=line_start, line_end=line_end,
                                             heading_path=[h for _, h in self._stack]))
        self._parts, self._lines = [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN and tag != "head":
            self._hidden += 1
        if tag in self.BLOCKS:
            self._flush()
            if tag == "title":
                self._in_title = True
            elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self._heading = int(tag[1])

    def handle_endtag(self, tag):
        if tag in self.HIDDEN and tag != "head":
            self._hidden = max(0, self._hidden - 1)
        if tag in self.BLOCKS:
            self._flush()
            self._in_title = False if tag == "title" else self._in_title
            self._heading = None if tag.startswith("h") and tag[1:].isdigit() else self._heading

    def handle_data(self, data):
        if self._hidden or not data.strip():
            return
        line = self.getpos()[0]
        self._parts.append(data)
        self._lines.extend([line, line + data.count("\n")])


def html_segments(text: str) -> tuple[list[Segment], str | None]:
    parser = _HTMLText()
    parser.feed(text)
    parser.close()
    parser._flush()
    return parser.segments, parser.title


class Member(NamedTuple):
    """One element of a JSON array or member of an object, with where it sits in the text."""

    key: str | None  # None in an array
    value: Any
    start: int  # offset of the key (object) or the value (array)
    value_start: int
    end: int  # offset just past the value


def line_index(text: str) -> Callable[[int], int]:
    """A function from a character offset to its 1-based line, cheap to call many times."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    return lambda offset: bisect.bisect_left(newlines, offset) + 1


def json_members(text: str, pos: int) -> Iterator[Member]:
    """The members of the JSON array or object that opens at `pos`, decoded one at a time."""
    decoder = json.JSONDecoder()
    is_object, pos = text[pos] == "{", pos + 1
    while True:
        pos = _BETWEEN.match(text, pos).end()
        if pos >= len(text):
            raise ValueError("unterminated JSON array or object")
        if text[pos] in "]}":
            return
        start, key = pos, None
        if is_object:
            key, pos = decoder.raw_decode(text, pos)
            colon = _COLON.match(text, pos)
            if not isinstance(key, str) or not colon:
                raise ValueError(f"expected a string key and ':' at offset {start}")
            pos = colon.end()
        value_start = pos
        value, pos = decoder.raw_decode(text, pos)
        yield Member(key, value, start, value_start, pos)


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, dict) for x in value)


def json_records(text: str) -> list[Record]:
    """A JSON array of objects, an object holding such an array, or one object; each with its lines."""
    line_of = line_index(text)
    pos = len(text) - len(text.lstrip())
    opening = text[pos : pos + 1]
    if opening not in ("[", "{"):
        raise ValueError("expected a JSON array of records or an object")
    members = list(json_members(text, pos))
    if opening == "{":
        wrapped = next((m for m in members if _is_records(m.value)), None)
        if wrapped is None:
            return [Record({m.key: m.value for m in members}, line_of(pos), line_of(len(text.rstrip()) - 1))]
        members = list(json_members(text, wrapped.value_start))
    return [Record(m.value, line_of(m.start), line_of(m.end - 1)) for m in members if isinstance(m.value, dict)]


def jsonl_records(text: str) -> tuple[list[Record], list[str]]:
    records, problems = [], []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {i}: invalid JSON ({exc.msg})")
            continue
        if isinstance(obj, dict):
            records.append(Record(obj, i, i))
        else:
            problems.append(f"line {i}: not a JSON object")
    return records, problems


def csv_records(text: str) -> list[Record]:
    """STORM VectorRM CSV: `content`, `title`, `url`, `description` columns."""
    reader = csv.DictReader(io.StringIO(text))
    reader.fieldnames  # reads the header, so line_num now counts its lines
    records, last = [], reader.line_num
    for row in reader:
        fields = {(k or "").strip().lower(): v for k, v in row.items() if isinstance(v, str)}
        records.append(Record(fields, last + 1, reader.line_num))
        last = reader.line_num
    return records
