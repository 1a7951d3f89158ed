"""How documents name each other: bulletin and form numbers, URLs, section lists, dates.

Deterministic patterns only (no model): a reference is a bulletin number
("Bulletin 2021-04"), another numbered document ("Tariff No. 9", "Notice 2022-04"),
a form/endorsement/memo code ("FR-12", "CM-24-05"), or a URL. "Sections 4 and 5 of Bulletin 2021-04" keeps its sections, so a partial
supersession points at those sections, not the whole document.
"""

from __future__ import annotations

import re
from datetime import date

from retrieval.graph.model import Reference

_BULLETIN = r"(?:[Bb]ulletin|BULLETIN)\s+(\d{4}-\d{1,3})"
# another numbered document: "Tariff No. 9", "Harbour Notice 2022-04", "Circular 7/2019" (a bare number only
# after "No.": "notice 30 days before" names nothing; a number that is a code, "Notice HN-4", is the code's)
_NUMBERED = (r"\b((?i:circular|notice|memo(?:randum)?|directive|advisory|tariff|ordinance|decree|instruction))\s+"
             r"(?:(?i:no\.?\s*|number\s+)|(?=\d{1,4}[-/.]\d))(\d{1,4}(?:[-/.]\d{1,4}){0,2})(?![\w-])")
_CODE = r"\b([A-Z]{1,4}-\d{1,4}(?:-\d{1,4})?)\b"
_URL = r"https?://[^\s)>\]\"']+"
REFERENCE = re.compile(rf"{_BULLETIN}|{_NUMBERED}|{_CODE}|({_URL})")
_SECTIONS = re.compile(
    r"\b(?:[Ss]ections?|[Pp]arts?|[Rr]ules?|[Aa]rticles?|[Pp]aragraphs?|§§?)\s+"
    r"((?:[0-9A-Z][0-9A-Za-z.]*)(?:\s*(?:,|and|or|&)\s*(?:[0-9A-Z][0-9A-Za-z.]*))*)")
_QUOTED_SECTION = re.compile(r"\b[Ss]ections?\s+[\"“']([^\"”']+)[\"”']")
_TOPIC = re.compile(r"\bthe ([a-z][a-z ]{2,40}?) (?:stated|set|given|printed|fixed) (?:in|by)\s*$")
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], start=1)}
_DATE = re.compile(r"\b(" + "|".join(m.title() for m in _MONTHS) + r")\s+(\d{1,2}),\s*(\d{4})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
EDITION_KEY = "EDITION:"  # a reference's key naming another edition of the stating document's own family


def key_of(match: re.Match) -> tuple[str, str]:
    """(text as written, normalised key) of a `REFERENCE` match."""
    if match.group(1):
        return match.group(0), f"BULLETIN {match.group(1)}"
    if match.group(3):
        kind = "MEMO" if match.group(2).lower().startswith("memo") else match.group(2).upper()
        return match.group(0), f"{kind} {match.group(3)}"
    if match.group(4):
        return match.group(4), match.group(4)
    url = match.group(5).rstrip(".,;:")
    return url, url


def own_keys(title: str, url: str | None, extra: list[str] = ()) -> list[str]:
    """The identifiers a document is known by: numbers in its title, its URL, aliases from front matter."""
    keys = [key_of(m)[1] for m in REFERENCE.finditer(title)]
    for alias in extra:
        found = [key_of(m)[1] for m in REFERENCE.finditer(alias)]
        keys += found or [alias.strip()]
    if url:
        keys.append(url.rstrip("/"))
    return list(dict.fromkeys(k for k in keys if k))


def references_in(text: str, keep: set[str] | None = None) -> list[Reference]:
    """Every reference in `text`, with the sections and topic written just before it."""
    out: list[Reference] = []
    for match in REFERENCE.finditer(text):
        written, key = key_of(match)
        if keep is not None and key in keep:
            continue
        before = text[: match.start()]
        # the clause leading up to this reference, not past an earlier reference
        clause = re.split(r"[;]|,\s*and\b|\bin full\b", before)[-1]
        sections: list[str] = []
        tail = clause[-80:]
        quoted = _QUOTED_SECTION.search(text[match.end(): match.end() + 80])  # form FR-12, section "X"
        if quoted:
            sections.append(quoted.group(1).strip())
        spec = _SECTIONS.search(tail) if re.search(r"\bof\s+(?:the\s+)?(?:[A-Za-z]+\s+){0,2}$", tail) else None
        if spec:
            sections += [s.strip(" .") for s in re.split(r"\s*(?:,|\band\b|\bor\b|&)\s*", spec.group(1))
                         if s.strip(" .")]
        topic = _TOPIC.search(clause[-80:])
        out.append(Reference(text=written, key=key.rstrip("/") if key.startswith("http") else key,
                             sections=sections, topic=topic.group(1) if topic else None))
    return out


def parse_date(text: str | None) -> date | None:
    """The first date written as "January 1, 2023" or 2023-01-01, or None."""
    if not text:
        return None
    m = _DATE.search(text)
    try:
        if m:
            return date(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))
        m = _ISO.search(text)
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None
    except ValueError:  # "February 30": not a date
        return None


def date_phrase(text: str | None) -> str | None:
    """ "January 1, 2023" out of "January 1, 2023, for new business, ..." (the text itself when no date is found)."""
    if not text:
        return None
    m = _DATE.search(text) or _ISO.search(text)
    return m.group(0) if m else text


def section_matches(spec: str, heading: str) -> bool:
    """Does a section named in a reference ("4", "A1", "Deductible and waiting period") name this heading?"""
    h = heading.strip().lower()
    s = spec.strip().lower()
    if not s:
        return False
    if re.fullmatch(r"[0-9a-z]{1,4}(?:\.[0-9]+)?", s):
        return bool(re.match(rf"^(?:section|part|rule|article|paragraph|§)?\s*{re.escape(s)}(?:[.:)\s]|$)", h))
    return h == s or h.endswith(" " + s) or s in h


def topic_matches(topic: str, heading: str) -> bool:
    words = [w for w in topic.lower().split() if len(w) > 2]
    h = heading.lower()
    return bool(words) and all(w in h for w in words)


_EDITION_WORDS = re.compile(r"\b(?:(?:19|20)\d{2}|edition(?:\s+\d+(?:\.\d+)*)?|ed\.|revised|revision|rev\.?\s*\d*|"
                            r"version(?:\s+\d+(?:\.\d+)*)?|v\d+(?:\.\d+)*|"
                            r"issue\s*\d+|update[sd]?|amended|new|current|latest|first|second|third|\d+(?:st|nd|rd|th))\b",
                            re.IGNORECASE)


# an edition label written month/year, as printed on forms: "edition 09/18", "ed. 03/2021"
_MONTH_YEAR = re.compile(r"(?<![\d/])(0?[1-9]|1[0-2])/(\d{2}|(?:19|20)\d{2})(?![\d/])")


def title_family(title: str) -> str | None:
    """The title with what varies between editions taken out (years, "edition", "rev. 2", a month/year label,
    the number of a form code): two documents with the same result are candidate editions of one family."""
    text = re.sub(r"\b([A-Z]{1,4})-\d{1,4}\b", r"\1-#", title)  # FR-10, FR-12 -> FR-#
    text = _MONTH_YEAR.sub(" ", _DATE.sub(" ", text))
    text = _EDITION_WORDS.sub(" ", text)
    words = re.findall(r"[a-z0-9#-]+", text.lower())
    return " ".join(words) if len(words) >= 2 else None


def edition_hint(title: str) -> str | None:
    """What orders editions when no `edition:` is given: "2023 edition", "rev. 2", "edition 09/18" (as
    2018-09), a form code's number."""
    label = _MONTH_YEAR.search(title)
    if label:
        month, year = int(label.group(1)), label.group(2)
        return f"{year if len(year) == 4 else '20' + year}-{month:02d}"
    m = re.search(r"\b(?:rev(?:ision)?\.?|version|v|edition|issue)\s*(\d+(?:\.\d+)*)", title, re.IGNORECASE) \
        or re.search(r"\b((?:19|20)\d{2})\b", title) or re.search(r"\b[A-Z]{1,4}-(\d{1,4})\b", title)
    return m.group(1) if m else None
