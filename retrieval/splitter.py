"""Cut documents into passages that never cross a heading or a record.

Consecutive paragraphs under the same heading are packed up to `max_words`; a
longer paragraph is cut at line boundaries, and a single long line at sentence
boundaries. A passage's text is its source lines joined as they stand
(whitespace-only lines read as empty), so its line range re-reads exactly.
"""

from __future__ import annotations

import re

from retrieval.documents import Document, Passage, Segment, sha256_text

DEFAULT_MAX_WORDS = 180
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def _words(text: str) -> int:
    return len(text.split())


def _pieces(segment: Segment, max_words: int, line_based: bool) -> list[Segment]:
    """A segment no longer than `max_words`, or its parts."""
    if _words(segment.text) <= max_words:
        return [segment]
    lines = segment.text.split("\n")
    if line_based and len(lines) > 1:
        parts, start, buf = [], segment.line_start, []
        for offset, line in enumerate(lines):
            if buf and _words("\n".join(buf + [line])) > max_words:
                parts.append(Segment(text="\n".join(buf), line_start=start, line_end=start + len(buf) - 1,
                                     heading_path=segment.heading_path))
                start, buf = segment.line_start + offset, []
            buf.append(line)
        parts.append(Segment(text="\n".join(buf), line_start=start, line_end=start + len(buf) - 1,
                             heading_path=segment.heading_path))
        return [p for part in parts for p in _pieces(part, max_words, line_based=False) if p.text.strip()]
    # one long line (or a record's text): cut between sentences, keeping exact substrings
    chunks, begin, last_cut = [], 0, 0
    cuts = [m.start() for m in _SENTENCE_END.finditer(segment.text)] + [len(segment.text)]
    for cut in cuts:
        if _words(segment.text[begin:cut]) > max_words and last_cut > begin:
            chunks.append(segment.text[begin:last_cut].strip())
            begin = last_cut
        last_cut = cut
    chunks.append(segment.text[begin:].strip())
    return [Segment(text=c, line_start=segment.line_start, line_end=segment.line_end,
                    heading_path=segment.heading_path) for c in chunks if c]


def _join(group: list[Segment], line_based: bool) -> str:
    if not line_based:
        return "\n\n".join(s.text for s in group)
    text = group[0].text
    for prev, seg in zip(group, group[1:]):
        text += "\n" * (seg.line_start - prev.line_end) + seg.text
    return text


def split_document(doc: Document, max_words: int = DEFAULT_MAX_WORDS) -> list[Passage]:
    line_based = doc.record is None
    content = [p for s in doc.segments if not s.is_heading for p in _pieces(s, max_words, line_based)]
    groups: list[list[Segment]] = []
    for seg in content:
        current = groups[-1] if groups else None
        # a record's paragraphs share its line range; in a file, pieces of one line never rejoin
        fits = (current is not None and current[-1].heading_path == seg.heading_path
                and (not line_based or current[-1].line_end < seg.line_start)
                and _words(_join(current + [seg], line_based)) <= max_words)
        if fits:
            current.append(seg)
        else:
            groups.append([seg])
    passages = []
    for group in groups:
        text = _join(group, line_based)
        digest = sha256_text(text)
        line_start, line_end = group[0].line_start, group[-1].line_end
        passages.append(Passage(
            passage_id=Passage.make_id(doc.path, doc.record, line_start, line_end, digest),
            doc_id=doc.doc_id, path=doc.path, url=doc.url, title=doc.title,
            heading_path=group[0].heading_path, line_start=line_start, line_end=line_end,
            text=text, sha256=digest, tags=doc.tags, record=doc.record))
    return passages
