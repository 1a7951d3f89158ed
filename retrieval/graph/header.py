"""Header fields ("Effective:", "Supersedes:", ...) found by their labels wherever the header holds them.

A Markdown header puts one field on a line. Its Word or PDF export often runs the fields together in
one paragraph ("To: adjusters From: claims Replaces: Claims Memo CM-21-02"), and a PDF wraps the
paragraph wherever the page ends a line ("Supersedes: Sections 4 and" / "5 of Bulletin 2021-04"). Here
the header is read as one stream: each field's value runs to the next label, and on past a line break
only when the next line goes on with it (it starts in lower case or a digit, or the line ended on a
word that cannot end it, "and", "of", "Section"). Each field becomes one "Label: value" line at the
line of its label, so the edge reader sees what it sees in Markdown.
"""

from __future__ import annotations

import re

_KNOWN = re.compile(r"(?:^|(?<=[\s>*]))\**\s*(superseded by|supersedes|replaces|amends|applies to|attaches to|"
                    r"effective|edition)\s*\**\s*:\s*\**\s*", re.IGNORECASE | re.MULTILINE)
# any other "Label:" ends the value before it ("To: ... From: ... Replaces: ...")
_ANY = re.compile(r"(?:^|(?<=\s))\**[A-Z][a-z]+(?: [a-z]+)?\**:(?=\s)", re.MULTILINE)
_OPEN_END = re.compile(r"(?:\b(?:and|or|of|to|the|in|for|by|form|forms|section|sections|bulletin|bulletins|"
                       r"rule|rules|part|parts|memo)|[,;&–-])\s*$", re.IGNORECASE)


def header_fields(lines: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], set[int]]:
    """(lines for the edge reader, the line numbers they stand for).

    `lines`: the header's (line number, text) in reading order. Only fields that share a line or run
    past one are returned; a field alone on its line stays that line, as it stands."""
    stream = "\n".join(text for _, text in lines)
    starts, offset = [], 0  # the stream offset where each line begins
    for _, text in lines:
        starts.append(offset)
        offset += len(text) + 1

    def line_of(pos: int) -> int:
        return max(i for i, s in enumerate(starts) if s <= pos)

    labels = list(_KNOWN.finditer(stream))
    ends = sorted({m.start() for m in labels} | {m.start() for m in _ANY.finditer(stream)} | {len(stream)})
    out: list[tuple[int, str]] = []
    replaced: set[int] = set()
    for m in labels:
        stop = next(e for e in ends if e > m.start())
        pieces = stream[m.end(): stop].split("\n")
        kept = [pieces[0]]
        for piece in pieces[1:]:
            if not piece.strip() or not (_OPEN_END.search(kept[-1]) or re.match(r"\s*[a-z0-9(]", piece)):
                break
            kept.append(piece)
        first, last = line_of(m.start()), line_of(m.start()) + len(kept) - 1
        on_line = [x for x in labels if line_of(x.start()) == first]
        if len(kept) > 1 or len(on_line) > 1 or stream[starts[first]: m.start()].strip(" >*"):
            value = " ".join(p.strip() for p in kept).strip(" *")
            out.append((lines[first][0], f"{m.group(1)}: {value}"))
            replaced.update(lines[i][0] for i in range(first, last + 1))
    return out, replaced
