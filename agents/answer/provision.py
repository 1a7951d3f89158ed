"""Whether a value belongs to the question's provision: the words right around it, not only its type.

A regulatory text states many values of one type side by side: a table of interest rates (an accepted amount
paid late, an appraisal award paid late), a 72-hour acknowledgement beside a 15-business-day payment, a
$25 million test beside a 10-percent one. The sentence-level features (`fit`, `overlap`) see the same words
for every value of a table or of one long sentence. Here each value is read in its own clause (its table row,
its list item, the part of its sentence between semicolons) under the heading path of its passage:

- `provision_fit`: the share of the question's provision words (what it asks about, less the documents and
  editions it names and the words of a question) that the clause or the headings above it say;
- `clashes`: the clause states a qualifier the question rules out: business days for calendar days, a
  maximum for a minimum, per occurrence for per claim, a percentage for a dollar amount.

Fusion weighs both as candidate features (`candidates.FEATURES`), with weights fitted leaving one family of
documents out (scripts/calibrate/calibrate_answers.py --leave-family-out).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agents.answer import values
from agents.answer.analysis import QuestionAnalysis
from agents.lm.nlp import TextToolkit
from agents.multihop import evidence

# Words of a question that say how or when it asks, not what: they name no provision. ("amount" and "number" are
# not among them: "an accepted amount" names one.)
_ASKING = ("edition editions version versions revision revisions current currently now today force stands stand "
           "effective under according set sets "
           "much many long soon far what which how must may does do did will would insurer company value "
           "state states stated give given say says apply applies")
# The framing a superseded passage's sentences carry (retrieval/graph/current.py): no words of the provision.
_FRAMING = re.compile(r"(?:Until [^()]{3,40} |Formerly )\([^()]{1,120}, superseded by [^()]{1,200}\): ")

# Qualifiers that exclude each other: a clause saying one of a group answers a question saying another.
_QUALIFIERS: tuple[dict[str, re.Pattern], ...] = tuple(
    {name: re.compile(p, re.I) for name, p in group.items()} for group in (
        {"business": r"\b(?:business|working) days?\b", "calendar": r"\bcalendar days?\b"},
        {"maximum": r"\b(?:maximum|at most|up to|no more than|not (?:to )?exceed\w*|ceiling|cap)\b",
         "minimum": r"\b(?:minimum|at least|no (?:less|fewer) than|not (?:less|fewer) than|floor)\b"},
        {"claim": r"\bper claim\b", "occurrence": r"\bper (?:occurrence|loss|event)\b",
         "item": r"\b(?:per|for (?:any|each) one|for (?:any|each|a single)) (?:item|article)\b",
         "person": r"\bper (?:person|individual|member)\b", "family": r"\bper (?:family|household)\b",
         "year": r"\b(?:per (?:year|annum)|annual aggregate|in any one year)\b",
         "all": r"\b(?:in all|in (?:the )?aggregate|all together|altogether)\b"},
        {"in_network": r"\bin(?:-| the | )network\b", "out_network": r"\bout[- ]of[- ](?:the )?network\b"},
    ))
# A list item's start: "- ", "3. ", "(b) ", "(iii) ", "(2) In general" (not a wrapped line's "(15) business days").
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]\s|\d{1,2}[.)]\s|\([a-z]{1,4}\)\s|\([A-Z0-9]{1,2}\)\s+[A-Z*])")
# Where a sentence's next clause starts with a subject of its own: a semicolon, or ", and the ...", ", but it ...",
# or another amount (", and €190 for a shift", "for bulk cargo and €18 per container": that amount's own
# provision; not a list's ", and coins").
_COORDINATED = re.compile(r";\s+|,\s+(?:and|but|or|while|whereas)\s+(?=(?:the|a|an|it|its|they|their|each|every|no|"
                          r"any|this|that|he|she|we|you)\s)|(?:,\s+|\s+)(?:and|or)\s+(?=[$€£]\s?\d|\d|(?:one|two|"
                          r"three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
                          r"sixty|seventy|eighty|ninety|a hundred|one hundred)\b)", re.I)
_DOLLARS = re.compile(r"\bdollars?\b|\$", re.I)


def provision_terms(nlp: TextToolkit, question: str, analysis: QuestionAnalysis) -> set[str]:
    """The question's words naming its provision: its content words less the names of the documents and
    editions it cites and the words any question of its kind says."""
    named = set().union(*(evidence.terms(nlp, e) for e in analysis.entities)) if analysis.entities else set()
    asking = evidence.terms(nlp, _ASKING)
    # a term with a digit is a label ("03/21", "2019-10"): the edition asked for, not the provision
    return {t for t in evidence.terms(nlp, question) - named - asking if not any(c.isdigit() for c in t)}


class Clause(NamedTuple):
    text: str  # the value's table row, list item, or stretch of its sentence between semicolons
    near: str  # within a sentence's clause, the coordinated part around the value (", and the Authority ...")


def clause(sentence: str, start: int, end: int) -> Clause:
    """The part of `sentence` that states the value at [start, end): its table row or list item when it sits in
    one (a row is one provision, whatever its cells; its near part is the row's first cell, which names the
    provision, its column's header and the value's own cell: "$300 for any one item" beside the row's
    "$1,000"), else the stretch of the sentence between semicolons
    (a wrapped paragraph's line breaks cut nothing), and within that its coordinated part ("... has five (5)
    business days to ask for a review, and the Authority must decide within twenty (20) business days": the
    review is asked within five, decided within twenty)."""
    row = row_span(sentence, start, end)
    if row:
        line = sentence[row[0]: row[1]]
        if "|" in line:
            return Clause(flat(line), flat(_own_cells(sentence, row, start, end)))
        return Clause(flat(line), flat(_own_part(line, start - row[0], end - row[0])))
    text = sentence[_cut(sentence, r";\s+", start, end)]
    return Clause(flat(text), flat(sentence[_cut(sentence, _COORDINATED, start, end)]))


def row_span(sentence: str, start: int, end: int) -> tuple[int, int] | None:
    """(start, end) of the table row or list item holding the value at [start, end), None when it sits in a
    running sentence: words beyond a row's edge belong to another row's provision. A list item runs on over
    its wrapped (indented) lines."""
    line_start = sentence.rfind("\n", 0, start) + 1
    line_end = _line_end(sentence, end)
    if "|" in sentence[line_start: line_end]:
        return line_start, line_end
    while not _LIST_ITEM.match(flat(sentence[line_start: _line_end(sentence, line_start)])):
        if line_start == 0 or not _continues(sentence[line_start: _line_end(sentence, line_start)]):
            return None  # a running sentence's line
        line_start = sentence.rfind("\n", 0, line_start - 1) + 1
    while line_end < len(sentence) and _continues(sentence[line_end + 1: _line_end(sentence, line_end + 1)]):
        line_end = _line_end(sentence, line_end + 1)
    return line_start, line_end


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _continues(line: str) -> bool:
    """A list item's wrapped line: indented, not empty, not an item or a row of its own."""
    bare = _FRAMING.sub("", line)
    return bool(bare.strip()) and bare[:1].isspace() and not _LIST_ITEM.match(bare) and "|" not in bare


def _own_part(item: str, start: int, end: int) -> str:
    """A list item's lead ("Deductible:") and the stretch between commas holding [start, end): "three thousand
    dollars ($3,000) per family" of "Deductible: $1,500 per person, three thousand dollars ($3,000) per family"."""
    lead = re.match(r"^\s*(?:[-*+]|\d{1,2}[.)]|\([a-zA-Z0-9]{1,4}\))?\s*([^:,;]{1,60}):", item)
    cut = _cut(item, r"[,;]\s+", start, end)
    inner = _cut(item[cut], _COORDINATED, start - cut.start, end - cut.start)  # "... and sixty percent (60%)"
    part = item[cut][inner]
    return f"{lead.group(1)} {part}" if lead and cut.start + inner.start > lead.end() else part


def _own_cells(sentence: str, row: tuple[int, int], start: int, end: int) -> str:
    """A table row's first cell, the header of the column holding [start, end) and that cell (the whole row
    when it has no cells): "Baggage and personal effects", "Limit", "$300 for any one item"."""
    line, start, end = sentence[row[0]: row[1]], start - row[0], end - row[0]
    framed = _FRAMING.match(line)  # a superseded passage's lines each carry the framing
    if framed:
        line, start, end = line[framed.end():], start - framed.end(), end - framed.end()
    cells = _cells(line)
    own = next((n for n, (a, b) in enumerate(cells) if a <= start and end <= b), None)
    if own is None:
        return line
    said = [line[slice(*cells[0])]]
    header = _header_row(sentence[: row[0]])
    if header is not None and own < len(_cells(header)):
        said.append(header[slice(*_cells(header)[own])])
    if own:
        said.append(line[slice(*cells[own])])
    return " ".join(said)


def _cells(line: str) -> list[tuple[int, int]]:
    """(start, end) of each non-empty cell of a table line."""
    bars = [m.start() for m in re.finditer(r"\|", line)]
    return [(a + 1, b) for a, b in zip([-1] + bars, bars + [len(line)]) if line[a + 1: b].strip()]


def _header_row(before: str) -> str | None:
    """The header line of the table whose rows follow `before`: the line above its |---| rule."""
    lines = [_FRAMING.sub("", x) for x in before.rstrip("\n").split("\n")]
    for n in range(len(lines) - 1, 0, -1):
        if re.fullmatch(r"\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*\|?\s*", lines[n]):
            return lines[n - 1]
        if "|" not in lines[n]:
            return None
    return None


def _cut(text: str, separator: str, start: int, end: int) -> slice:
    cuts = list(re.finditer(separator, text))
    return slice(max((m.end() for m in cuts if m.end() <= start), default=0),
                 min((m.start() for m in cuts if m.start() >= end), default=len(text)))


def flat(text: str) -> str:
    """Text as a clause is compared: without the history framing, its whitespace one space."""
    return re.sub(r"\s+", " ", _FRAMING.sub("", text)).strip()


def headings(nlp: TextToolkit, passage) -> str:
    """A passage's heading path less the headings that only restate its document's title (a form's
    "Sentry Travel Insurance — Policy Wording" above every section): those words name the document, which
    every value of it shares, not the provision."""
    title = evidence.terms(nlp, passage.title)
    return " > ".join(h for h in passage.section.split(" > ")
                      if not (evidence.terms(nlp, h) and evidence.terms(nlp, h) <= title))


def provision_fit(nlp: TextToolkit, wanted: set[str], local: Clause, section: str) -> float:
    """The share of the provision's words that the value's clause or its heading path says: a word said in
    the value's coordinated part (or in its headings) counts whole, one said elsewhere in its clause half.
    Words are compared by stem and by root ("payment" is said by "Paying an accepted claim")."""
    if not wanted:
        return 0.0
    near = _with_roots(evidence.terms(nlp, f"{section} {local.near}"))
    have = _with_roots(evidence.terms(nlp, local.text))

    def said(t: str, terms: set[str]) -> bool:
        return evidence.related(t, terms) or _root(t) in terms

    return sum(1.0 if said(t, near) else 0.5 if said(t, have) else 0.0 for t in wanted) / len(wanted)


_SUFFIX = re.compile(r"(?:ment|ments|ing|ion|ions|ance|ence|al)$")


def _root(stem: str) -> str:
    """A stem less a derivational ending, when three letters or more are left ("payment", "paying" -> "pay")."""
    root = _SUFFIX.sub("", stem)
    return root if len(root) >= 3 else stem


def _with_roots(terms: set[str]) -> set[str]:
    return terms | {_root(t) for t in terms}


def _itemized(local: Clause) -> bool:
    """A table row or a list item: its own cell or part qualifies a value, not the rest of the row."""
    return local.text.startswith("|") or bool(_LIST_ITEM.match(local.text))


def clashes(question: str, local: Clause, value_text: str) -> bool:
    """Whether the clause qualifies its value in a way the question rules out ("15 business days" for a
    question about calendar days, "per occurrence" for "per claim", "$200 in all" for "any one item", "10
    percent" for a dollar amount). A table value's qualifiers are its own cells' (a row's note on another
    value is not its)."""
    for group in _QUALIFIERS:
        asked = {n for n, p in group.items() if p.search(question)}
        said = {n for n, p in group.items() if p.search(local.near if _itemized(local) else local.text)}
        if asked and said and not asked & said:
            return True
    value = values.parse_value(value_text)
    return bool(value and value.kind == "percent" and re.search(r"\bdollar", question, re.I)
                and not _DOLLARS.search(value_text))
