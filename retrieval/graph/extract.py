"""Edges a document states, read at ingest with no model: front matter, header lines, reference text.

- front matter: `supersedes:`, `replaces:`, `amends:`, `attaches_to:` / `applies_to:`, `effective:`,
  `edition:`, `family:`, `aliases:`;
- header lines (the lines before the first section, and `>` notes anywhere): "**Supersedes:** …",
  "Replaces: …", "Amends: …", "Applies to: …", "> SUPERSEDED by …";
- reference text: a sentence whose subject is the document or one of its rules ("This rule replaces the
  waiting period stated in Bulletin 2021-04", "Form FR-12 … replaced form FR-10") states a
  `supersedes`; one in which it marks itself as no longer holding ("This edition is superseded by Bulletin
  2024-02", "Superseded — see Bulletin 2024-02", "This form is no longer in use; replaced by the 2019
  edition") states one from the newer document (or edition) to it; any other mention of a bulletin number,
  form code or URL is a `refers_to`.
What a document says about two *other* documents ("Bulletin 2022-11 supersedes …" in a timeline) is a
`refers_to` from it to each, never a `supersedes` between them: only a document speaks for itself.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from retrieval.documents import Document, Passage
from retrieval.formats import parse_front_matter
from retrieval.graph.header import header_fields
from retrieval.graph.model import (
    DocumentRecord,
    PassageRecord,
    Reference,
    SectionRecord,
    StatedEdge,
)
from retrieval.graph.references import EDITION_KEY, edition_hint, own_keys, parse_date, references_in

_LABELS = {"supersedes": "supersedes", "replaces": "supersedes", "superseded by": "superseded_by",
           "amends": "amends", "applies to": "attaches_to", "attaches to": "attaches_to",
           "effective": "effective", "edition": "edition", "family": "family", "aliases": "aliases",
           "applies_to": "attaches_to", "attaches_to": "attaches_to", "superseded_by": "superseded_by"}
_HEADER = re.compile(r"^\s*(?:>\s*)?\**\s*(supersedes|replaces|superseded by|amends|applies to|attaches to|"
                     r"effective|edition)\s*:?\**\s*:?\s*\**\s*(.+)$", re.IGNORECASE)
_NOTE = re.compile(r"^\s*>\s*\**\s*(superseded by|replaced by|amended by)\b\s*:?\**\s*(.+)$", re.IGNORECASE)
_SELF_VERB = re.compile(r"\b(replaces|supersedes|amends|replaced|superseded|amended|revokes|rescinds|repeals|"
                        r"withdraws|revoked|rescinded|repealed|withdrew|(?:is|was) the "
                        r"[\w ]{0,20}successor (?:to|of))\b")
_SELF_SUBJECT = re.compile(r"^(?:this|the present) (?:rule|bulletin|section|endorsement|memo|form|edition|"
                           r"document|notice|part|policy|circular|directive|tariff|ordinance|decree|order|"
                           r"instruction|advisory|letter|memorandum|schedule|wording|version|revision)\b|"
                           r"^(?:it|this)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z*\"“(])")
# a line that stands alone, not a wrapped paragraph's: a table row, a list item, a quote, a rule
_STRUCTURED = re.compile(r"^\s*(?:\||[-*+]\s|\d{1,3}[.)]\s|>|#|---)")
# A document (or a section) saying of itself that it no longer holds: "This edition is superseded by Bulletin
# 2024-02", "Superseded — see Bulletin 2024-02", "This form is no longer in use; replaced by the 2019 edition",
# "Withdrawn.": the newer document named after the mark supersedes this one (or amends it: "was amended by").
_MARKED = re.compile(r"\b(?:is|are|was|were|has been|have been|had been)\s+(?:now\s+)?(?:hereby\s+)?"
                     r"(superseded|replaced|withdrawn|rescinded|repealed|amended)\b|\b(no longer) (?:in (?:use|force|"
                     r"effect)|applies|valid)\b", re.IGNORECASE)
_MARK_FIRST = re.compile(r"^\W*(superseded|withdrawn|rescinded|replaced|obsolete)\b", re.IGNORECASE)
# the newer edition a mark names without a number: "replaced by the 2019 edition", "see edition 03/21"
_EDITION_NAMED = re.compile(r"\b(?:(?:19|20)\d{2}(?:-\d{2})?|\d{1,2}/\d{2,4}|[A-Z][a-z]+ (?:19|20)\d{2})\s+edition\b|"
                            r"\bedition\s+(?:of\s+)?(?:(?:19|20)\d{2}(?:-\d{2})?|\d{1,2}/\d{2,4})")


def node_id(doc: Document) -> str:
    base = doc.url or doc.path
    return base if doc.record is None or doc.url else f"{base}#{doc.record}"


def section_id(doc_node: str, heading_path: list[str]) -> str:
    return f"{doc_node}#{'/'.join(heading_path)}" if heading_path else doc_node


def front_matter(doc: Document) -> tuple[dict[str, str], list[str]]:
    """Front-matter fields of a Markdown file (and its lines), or nothing."""
    if doc.record is not None or Path(doc.path).suffix.lower() not in (".md", ".markdown"):
        return {}, []
    try:
        lines = Path(doc.path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeError):
        return {}, []
    fields, _ = parse_front_matter(lines)
    return fields, lines


def document_record(doc: Document, passages: list[Passage]) -> DocumentRecord:
    """The document's node, sections, passages and stated edges, deterministic for the same file."""
    me = node_id(doc)
    fields, lines = front_matter(doc)
    aliases = [a.strip() for a in fields.get("aliases", "").strip("[]").split(",") if a.strip()]
    keys = own_keys(doc.title, doc.url, aliases)
    keyset = set(keys)
    record = DocumentRecord(node_id=me, doc_id=doc.doc_id, path=doc.path, url=doc.url, title=doc.title,
                            record=doc.record, keys=keys, family=fields.get("family") or None,
                            edition=fields.get("edition") or None)
    edges: list[StatedEdge] = []
    # front matter
    for i, line in enumerate(lines[1:], start=2):
        if line.strip() in ("---", "..."):
            break
        key, _, value = line.partition(":")
        label = _LABELS.get(key.strip().lower())
        if label == "effective":
            record.effective = value.strip().strip("'\"")
        elif label in ("supersedes", "amends", "attaches_to"):
            edges += _typed(label, me, value, "front matter", i, i, line, keyset)
        elif label == "superseded_by":
            edges += _typed("supersedes", me, value, "front matter", i, i, line, keyset, reverse=True)
    # sections, header lines, reference text
    sections: dict[tuple[str, ...], SectionRecord] = {}
    # the header is what comes before the first section, in reading order (a PDF numbers each page's
    # lines from 1, so a line number alone does not say what comes first)
    first_section = next((i for i, s in enumerate(doc.segments) if s.heading_path), None)
    # fields run together on one line, or wrapped onto the next (a Word or PDF export), one line each
    fields, replaced = header_fields([(seg.line_start + k, line) for i, seg in enumerate(doc.segments)
                                      if not seg.is_heading and doc.record is None
                                      and (first_section is None or i < first_section)
                                      for k, line in enumerate(seg.text.split("\n"))])
    page_run: list = []  # a PDF's consecutive lines: [key, source, (n, line), ...]
    for index, seg in enumerate(doc.segments):
        hp = tuple(seg.heading_path)
        if hp:
            sec = sections.setdefault(hp, SectionRecord(node_id=section_id(me, list(hp)), heading_path=list(hp),
                                                        line_start=seg.line_start, line_end=seg.line_end))
            sec.line_end = max(sec.line_end, seg.line_end)
        if seg.is_heading:
            continue
        source = section_id(me, list(hp))
        in_header = first_section is None or index < first_section
        key = (seg.part, hp, in_header)
        if page_run and (page_run[0] != key or page_run[-1][0] + 1 != seg.line_start):
            edges += _page_run_edges(page_run, me, record, keyset)
            page_run = []
        context: list[str] = []  # keys named so far in this paragraph: whom an "It ..." speaks of
        stated = len(edges)
        wrapped: list[tuple[int, str]] = []  # a hard-wrapped paragraph's lines so far: read as whole sentences
        for offset, line in enumerate(seg.text.split("\n")):
            n = seg.line_start + offset if doc.record is None else seg.line_start
            if in_header and n in replaced:
                for field in (text for at, text in fields if at == n):
                    edges += _line_edges(field, n, me, source, in_header, record, keyset, context)
                continue
            if not in_header and seg.part is not None and seg.part.kind == "page":  # read with the lines around it
                page_run = page_run or [key, source]
                page_run.append((n, line))
                continue
            alone = bool(_STRUCTURED.match(line) or (in_header and (_HEADER.match(line) or _NOTE.match(line))))
            if wrapped and (not line.strip() or alone):
                edges += _run_edges(wrapped, me, source, in_header, record, keyset, context)
                wrapped = []
            if alone:  # a row, an item, a quote, a header field: a line of its own
                edges += _line_edges(line, n, me, source, in_header, record, keyset, context)
            elif line.strip():
                wrapped.append((n, line))
        if wrapped:
            edges += _run_edges(wrapped, me, source, in_header, record, keyset, context)
        for e in edges[stated:]:
            e.part = seg.part
    if page_run:
        edges += _page_run_edges(page_run, me, record, keyset)
    for hp, sec in sections.items():  # a section spans its subsections
        sec.line_end = max(s.line_end for p, s in sections.items() if p[: len(hp)] == hp)
    record.sections = list(sections.values())
    record.passages = [PassageRecord(passage_id=p.passage_id, heading_path=p.heading_path,
                                     line_start=p.line_start, line_end=p.line_end, part=p.part) for p in passages]
    record.edges = _dedupe(edges)
    record.effective_date = parse_date(record.effective)
    record.digest = hashlib.sha256(record.model_dump_json(exclude={"digest"}).encode()).hexdigest()
    return record


def _run_edges(lines: list[tuple[int, str]], me: str, source: str, in_header: bool, record: DocumentRecord,
               own: set[str], context: list[str]) -> list[StatedEdge]:
    """A paragraph hard-wrapped over `lines` ((number, text)): its sentences read whole ("Tariff No. 10
    supersedes" at a line's end, "Tariff No. 9" on the next), each edge spanning the lines its sentence does."""
    if len(lines) == 1:
        return _line_edges(lines[0][1], lines[0][0], me, source, in_header, record, own, context)
    text, starts = "", []
    for n, line in lines:
        starts.append((len(text), n))
        text += line.strip() + " "
    edges: list[StatedEdge] = []
    at = 0
    for sentence in _SENTENCE.split(text):
        at = text.find(sentence, at)
        first = max(n for offset, n in starts if offset <= max(at, 0))
        last = max(n for offset, n in starts if offset < at + len(sentence.rstrip()))
        for edge in _line_edges(sentence.strip(), first, me, source, in_header, record, own, context):
            edge.line_end = max(edge.line_end, last)
            edges.append(edge)
        at += len(sentence)
    return edges


def _page_run_edges(run: list, me: str, record: DocumentRecord, own: set[str]) -> list[StatedEdge]:
    """A PDF wraps sentences across its lines: its run of lines is read as a wrapped paragraph is."""
    (part, _, in_header), source, lines = run[0], run[1], run[2:]
    edges = _run_edges(lines, me, source, in_header, record, own, [])
    for e in edges:
        e.part = part
    return edges


def _line_edges(line: str, n: int, me: str, source: str, in_header: bool, record: DocumentRecord,
                own: set[str], context: list[str]) -> list[StatedEdge]:
    header = _HEADER.match(line) if in_header else None
    if header and header.group(1).lower() in ("effective", "edition") and ":" not in line:
        header = None  # "Effective immediately, ..." is a sentence, not a field
    note = _NOTE.match(line)
    if header:
        label, value = _LABELS[header.group(1).lower()], header.group(2).strip(" *")
        if label == "effective":
            record.effective = record.effective or value
            return []
        if label == "edition":
            record.edition = record.edition or value
            return []
        if label == "superseded_by":  # the old document says who replaced it: an edge from the new one
            return _typed("supersedes", me, value, "header line", n, n, line, own, reverse=True)
        return _typed(label, me, value, "header line", n, n, line, own)
    if note:
        kind = "amends" if note.group(1).lower().startswith("amended") else "supersedes"
        return _typed(kind, me, note.group(2), "header line", n, n, line, own, reverse=True)
    edges: list[StatedEdge] = []
    for sentence in _SENTENCE.split(line):
        named = [r.key for r in references_in(sentence)]
        marked = _self_marked(sentence, n, source, own, context)
        if marked:
            edges += marked
            context.extend(named)
            continue
        refs = [r for r in references_in(sentence) if r.key not in own]
        if not refs:
            edges += _edition_replaced(sentence, n, source, own, context)
        if refs:
            verb = _SELF_VERB.search(sentence)
            about_me = verb is not None and (_speaks_of_itself(sentence.strip(" *"), own, context)
                                             or _names_me(sentence[: verb.start()], own))
            for ref in refs:
                after_verb = verb is not None and sentence.find(ref.text, verb.end()) >= 0
                kind = ("amends" if verb.group(1).startswith("amend") else "supersedes") \
                    if about_me and after_verb else "refers_to"
                edges.append(StatedEdge(type=kind, source=source, target=ref, via="reference text",
                                        line_start=n, line_end=n, quote=_trim(sentence)))
        context.extend(named)
    return edges


def _self_marked(sentence: str, n: int, source: str, own: set[str], context: list[str]) -> list[StatedEdge]:
    """The edges of a sentence in which the document (or its section) marks itself as no longer holding,
    each from the newer document it names (or from another edition of its own family: "the 2019 edition", or
    the next one when it names none); nothing when the sentence is no such mark."""
    text = sentence.strip(" *>")
    mark = _MARK_FIRST.match(text) or _MARKED.search(text)
    if mark is None:
        return []
    first = mark.re is _MARK_FIRST
    if not first and not (_speaks_of_itself(text, own, context) or _names_me(text[: mark.start()], own)):
        return []
    verb = (mark.group(1) or "").lower()
    kind = "amends" if verb == "amended" else "supersedes"
    after = text[mark.end():]
    refs = [r for r in references_in(after) if r.key not in own]
    if not refs and kind == "supersedes":  # no number: an edition of its own family, or the one after it
        named = _EDITION_NAMED.search(after)
        hint = edition_hint(named.group(0)) if named else None
        refs = [Reference(text=named.group(0) if named else "a later edition", key=f"{EDITION_KEY}{hint or ''}")]
    return [StatedEdge(type=kind, source=source, target=r, via="reference text", line_start=n, line_end=n,
                       quote=_trim(sentence), reverse=True) for r in refs]


def _edition_replaced(sentence: str, n: int, source: str, own: set[str], context: list[str]) -> list[StatedEdge]:
    """"This edition replaces the 09/18 edition": a `supersedes` to that edition of the document's own family."""
    verb = _SELF_VERB.search(sentence)
    if verb is None or verb.group(1) not in ("replaces", "supersedes") or not _speaks_of_itself(
            sentence.strip(" *"), own, context):
        return []
    named = _EDITION_NAMED.search(sentence, verb.end())
    hint = edition_hint(named.group(0)) if named else None
    if not hint:
        return []
    target = Reference(text=named.group(0), key=EDITION_KEY + hint)
    return [StatedEdge(type="supersedes", source=source, target=target, via="reference text", line_start=n,
                       line_end=n, quote=_trim(sentence))]


def _speaks_of_itself(sentence: str, own: set[str], context: list[str]) -> bool:
    """"This rule replaces …" does; "It replaced …" does when the last document named before it is this one."""
    subject = _SELF_SUBJECT.match(sentence)
    if not subject:
        return False
    if subject.group(0).lower() not in ("it", "this"):
        return True
    return bool(context) and context[-1] in own


def _names_me(text: str, own: set[str]) -> bool:
    return any(r.key in own for r in references_in(text))


def _typed(kind: str, me: str, value: str, via: str, start: int, end: int, line: str,
           own: set[str], reverse: bool = False) -> list[StatedEdge]:
    refs = [r for r in references_in(value) if r.key not in own]
    return [StatedEdge(type=kind, source=me, target=r, via=via, line_start=start, line_end=end,
                       quote=_trim(line), reverse=reverse) for r in refs]


def _trim(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."


def _dedupe(edges: list[StatedEdge]) -> list[StatedEdge]:
    seen, out = set(), []
    for e in edges:
        key = (e.type, e.source, e.target.key, tuple(e.target.sections), e.target.topic, e.part, e.line_start)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out

