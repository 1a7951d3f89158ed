"""Whether a written answer cites its sources: the check every citing step runs on a chat
model's output (`Step.check`), so an uncited claim is repaired or replaced, never shown as cited."""

from __future__ import annotations

import re
from collections.abc import Iterable

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def cited_numbers(text: str) -> list[int]:
    """The numbers cited as [n] (or [n, m]) in `text`, in order of first use."""
    out: list[int] = []
    for m in _MARKER.finditer(text):
        for part in m.group(1).split(","):
            n = int(part)
            if n not in out:
                out.append(n)
    return out


def citation_problem(text: str, valid: Iterable[int], *, also_cited: Iterable[int] = (),
                     what: str = "the answer") -> str | None:
    """None when `text` (or the `also_cited` list given beside it) cites at least one of the
    `valid` source numbers; else what to fix. An empty text cites nothing and needs nothing."""
    if not text.strip():
        return None
    valid = sorted(set(valid))
    cited = set(cited_numbers(text)) | set(also_cited)
    if cited & set(valid):
        return None
    if not valid:
        return f"{what} makes claims but there are no sources to cite: reply with the no-answer text"
    # no "[n]" in the advice itself: a small model copies the advice into its answer, and the
    # copied brackets would pass this check
    wrong = f" (numbers {', '.join(str(n) for n in sorted(cited))} name no source)" if cited else ""
    return (f"{what} cites no source{wrong}: end every sentence with the number of the source it "
            f"comes from in square brackets; the sources are numbered {valid[0]} to {valid[-1]}")


def part_citation_problem(text: str, valid: Iterable[int], what: str = "the section") -> str | None:
    """`citation_problem` for the whole text, then for each part under a '### ' subheading: one valid
    [n] somewhere must not pass a section whose other subsections cite nothing."""
    problem = citation_problem(text, valid, what=what)
    if problem is not None:
        return problem
    valid = sorted(set(valid))
    heading, lines = "", []
    parts: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            parts.append((heading, "\n".join(lines)))
            heading, lines = line.lstrip("# ").strip(), []
        else:
            lines.append(line)
    parts.append((heading, "\n".join(lines)))
    for heading, body in parts:
        if body.strip() and not set(cited_numbers(body)) & set(valid):
            where = f"the part under '{heading}'" if heading else "the part above the first subheading"
            return (f"{where} cites no source: end every sentence with the number of the source it comes "
                    f"from in square brackets; the sources are numbered {valid[0]} to {valid[-1]}")
    return None


def schema_words(schema: dict) -> set[str]:
    """The names in a JSON schema (titles, property and definition names), lowercased, spaces and
    underscores dropped: what a small model writes when it echoes the schema instead of content."""
    found: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for key in ("properties", "$defs"):
                found.update(_squash(k) for k in node.get(key, {}) if isinstance(k, str))
            if isinstance(node.get("title"), str):
                found.add(_squash(node["title"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found


def schema_echo(texts: Iterable[str], schema: dict, what: str = "a heading") -> str | None:
    """What to fix when one of `texts` is only a name from `schema` (e.g. a heading "OutlineSection")."""
    names = schema_words(schema)
    echoed = [t for t in texts if _squash(t) in names]
    if not echoed:
        return None
    return (f"{what} is a name from the JSON schema ({', '.join(repr(t) for t in echoed[:3])}), not content: "
            "write the real headings of this topic's article")


def _squash(text: str) -> str:
    return re.sub(r"[\s_-]+", "", text).lower()
