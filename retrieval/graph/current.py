"""Current evidence first: passage status on search hits, superseded passages ranked last and read as history.

A superseded passage is not hidden (its history can matter) but every sentence
of it reaches a model framed as history, naming both sources, e.g.
"Until January 1, 2023 (Bulletin 2021-04, superseded by Bulletin 2022-11): Coverage …".
So an extractive writer that copies the sentence copies the framing too, and
nothing downstream can state it as the rule in force. The passage keeps its
line range and line hash: the citation still points at the exact source lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from retrieval.documents import Passage
from retrieval.graph.model import PassageStatus
from retrieval.graph.view import EvidenceGraph

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(*])")
HISTORY_MARK = "superseded by"
_FRAMED = re.compile(r"^(?:Until [^()]{3,40} |Formerly )\([^()]{1,120}, superseded by [^()]{1,200}\): ")


def short_title(title: str) -> str:
    """ "Bulletin 2021-04" out of "Bulletin 2021-04: Personal Lines Deductible Schedule"."""
    short = title.split(":")[0].strip() or title
    return re.sub(r"\s+", " ", re.sub(r"[()]", " ", short)).strip()  # no brackets inside the framing's own


def history_prefix(passage: Passage, status: PassageStatus) -> str:
    newer = ", ".join(short_title(t) for t in status.by_titles) or "a later document"
    since = f"Until {status.effective} " if status.effective else "Formerly "
    return f"{since}({short_title(passage.title)}, {status.state} by {newer}): "


def as_history(passage: Passage, status: PassageStatus) -> Passage:
    """The passage as a model should read it: each sentence stated as history (only when superseded)."""
    if status.state != "superseded" or HISTORY_MARK in passage.text[:200]:
        return passage
    prefix = history_prefix(passage, status)
    lines = []
    for line in passage.text.split("\n"):
        parts = _SENTENCE.split(line)
        lines.append(" ".join(prefix + p.strip() if len(p.split()) >= 4 else p for p in parts))
    return passage.model_copy(update={"text": "\n".join(lines)})


def rank_current_first(graph: EvidenceGraph, passages: Sequence[Passage], k: int,
                       newer: Callable[[list[str]], list[Passage]] | None = None
                       ) -> list[tuple[Passage, PassageStatus]]:
    """The k passages to read, as (passage as read, status): current and amended ones first, in rank order.

    `passages` is a ranking deeper than k. A superseded passage that made the plain top k keeps its place
    (relevant history), after the current ones; the places the plain ranking gave to superseded passages
    beyond that go to the next current ones. When no passage of the superseding document is among them,
    `newer(doc_ids)` (the best passages of those documents for the same query) supplies one, so the rule
    in force is read beside its history."""
    marked = [(p, graph.passage_status(p.passage_id, p.doc_id, p.heading_path)) for p in passages]
    old = [m for m in marked[:k] if m[1].state == "superseded"]
    current = [m for m in marked if m[1].state != "superseded"][: k - len(old)]
    if old and newer:
        present = {p.doc_id for p, _ in current}
        wanted = [d.doc_id for s in (m[1] for m in old) for d in map(graph.document, s.by) if d]
        missing = [d for d in dict.fromkeys(wanted) if d not in present]
        if missing:
            have = {p.passage_id for p, _ in current}
            replaced = {w for p, _ in old for w in _heading_words(p.heading_path)}
            extra = []
            for doc_id in missing:  # the passage of the newer document that reads most like the replaced rule
                found = [(p, graph.passage_status(p.passage_id, p.doc_id, p.heading_path)) for p in newer([doc_id])
                         if p.passage_id not in have]
                found = [m for m in found if m[1].state != "superseded"]
                if found:
                    extra.append(max(found, key=lambda m: (len(_heading_words(m[0].heading_path) & replaced),
                                                           -found.index(m))))
            current = current[: max(0, k - len(old) - len(extra))] + extra
    return [(as_history(p, s), s) for p, s in current + old]


def _heading_words(heading_path: list[str]) -> set[str]:
    words = re.findall(r"[a-z]{3,}", " ".join(heading_path[-1:]).lower())
    return {w for w in words if w not in ("section", "part", "rule", "article", "the", "and")}


def is_history(text: str) -> bool:
    """Was this text framed as history by `as_history` (a superseded passage, as a model reads it)?"""
    return bool(_FRAMED.match(text))


def without_history(text: str) -> str:
    """The source's own words of a sentence framed by `as_history` (other text as it is)."""
    return _FRAMED.sub("", text, count=1)


def current_first(snippets: Sequence) -> list:
    """Snippets (anything with `.text`) with those read as history after the others, order kept within."""
    return [s for s in snippets if not is_history(s.text)] + [s for s in snippets if is_history(s.text)]
