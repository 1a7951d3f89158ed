"""Cut documents into passages that never cross a heading or a record.

Consecutive paragraphs under the same heading are packed up to `max_words`; a
longer paragraph is cut at line boundaries, a single long line at sentence
boundaries and then between words, so no passage is longer than `max_words`. A
passage's text is its source lines joined as they stand (whitespace-only lines
read as empty), so its line range re-reads exactly; a piece of one long line
also records its character span in that line.
"""

from __future__ import annotations

import re

from retrieval.documents import Document, Passage, Segment, sha256_text

DEFAULT_MAX_WORDS = 180
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"\S+")
_MAX_WORD_CHARS = 30  # a passage of max_words words is at most this many characters a word


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
    # one long line (or a record's text): cut between sentences, then between words, keeping exact
    # substrings; a piece of one file line records its character span in that line
    base = segment.char_start or 0
    spans = [span for start, end in _sentence_spans(segment.text, max_words)
             for span in _word_spans(segment.text, start, end, max_words)]
    single_line = line_based and segment.line_start == segment.line_end
    return [Segment(text=segment.text[a:b], line_start=segment.line_start, line_end=segment.line_end,
                    heading_path=segment.heading_path,
                    char_start=base + a if single_line else None, char_end=base + b if single_line else None)
            for a, b in spans]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _sentence_spans(text: str, max_words: int) -> list[tuple[int, int]]:
    """Spans of whole sentences packed up to `max_words` (one sentence may still be longer)."""
    spans, begin, last_cut = [], 0, 0
    for cut in [m.start() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        if _words(text[begin:cut]) > max_words and last_cut > begin:
            spans.append(_trimmed(text, begin, last_cut))
            begin = last_cut
        last_cut = cut
    spans.append(_trimmed(text, begin, len(text)))
    return [(a, b) for a, b in spans if b > a]


def _word_spans(text: str, start: int, end: int, max_words: int) -> list[tuple[int, int]]:
    """The span cut between words every `max_words` words, and a word longer than any passage
    should be (no whitespace at all) cut every `max_chars` characters."""
    max_chars = max_words * _MAX_WORD_CHARS
    if _words(text[start:end]) <= max_words and end - start <= max_chars:
        return [(start, end)]
    spans, piece_start, count = [], start, 0
    for match in _WORD.finditer(text, start, end):
        a, b = match.span()
        while b - a > max_chars:  # one endless "word"
            if count:
                spans.append((piece_start, text_end))
            spans.append((a, a + max_chars))
            a, piece_start, count = a + max_chars, a + max_chars, 0
        if count == max_words or (count and b - piece_start > max_chars):
            spans.append((piece_start, text_end))
            piece_start, count = a, 0
        if not count:
            piece_start = a
        count, text_end = count + 1, b
    if count:
        spans.append((piece_start, text_end))
    return spans


def _join(group: list[Segment], line_based: bool) -> str:
    if not line_based:
        return "\n\n".join(s.text for s in group)
    text = group[0].text
    for prev, seg in zip(group, group[1:]):
        text += "\n" * (seg.line_start - prev.line_end) + seg.text
    return text


def split_document(doc: Document, max_words: int = DEFAULT_MAX_WORDS) -> list[Passage]:
    line_based = doc.record is None
    # a page's, slide's or sheet's lines are numbered on their own: pieces keep the part, and a
    # passage never spans two parts
    content = [p if p.part == s.part else p.model_copy(update={"part": s.part})
               for s in doc.segments if not s.is_heading for p in _pieces(s, max_words, line_based)]
    groups: list[list[Segment]] = []
    for seg in content:
        current = groups[-1] if groups else None
        # a record's paragraphs share its line range; in a file, pieces of one line never rejoin,
        # nor join another line (a passage with a character span is one piece of one line)
        fits = (current is not None and current[-1].heading_path == seg.heading_path
                and current[-1].part == seg.part
                and current[-1].char_start is None and seg.char_start is None
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
        first = group[0]
        passages.append(Passage(
            passage_id=Passage.make_id(doc.path, doc.record, line_start, line_end, digest, first.char_start,
                                       first.part),
            doc_id=doc.doc_id, path=doc.path, url=doc.url, title=doc.title,
            heading_path=first.heading_path, line_start=line_start, line_end=line_end,
            text=text, sha256=digest, tags=doc.tags, record=doc.record,
            char_start=first.char_start, char_end=first.char_end, part=first.part))
    return passages
