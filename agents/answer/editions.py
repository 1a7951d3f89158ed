"""Edition-aware questions: the value now in force, the value in a named edition, the change between two.

`edition_ask(question)` reads the question's grammar, not a document:
- an edition named by a label: "the 2019-10 edition", "edition 2019-10", "(2023-07 edition)", "the 2018
  version", "revision 3", "the edition effective October 1, 2019" (its year-month and year);
- a change: a change verb ("change", "differ", "compare", "revise") with two editions ("from A to B",
  "between A and B"), one (from it to the one in force) or none (from the superseded one to the one in force);
- "current": a word of the present ("current", "now", "today", "in force", "in effect", "presently").

`EditionView` is the retriever a strategy searches through for one edition: the edition named (the passages
whose document's title or file names the label), the one in force (no passage the evidence graph marks
superseded) or the superseded ones. `answer_change` asks each edition through its view and composes
"from V_A to V_B", each value cited to its own edition's passages.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from agents.answer.values import parse_value, same_value
from agents.multihop.trace import AgentAnswer, unique_passages
from retrieval.query import Retriever, SearchFilter, SearchHit

_LABEL = r"(\d{4}(?:[-/.]\d{1,2})?|\d{1,2}/\d{2,4}|\d+(?:\.\d+)*|[IVX]+)"
_EDITION = r"(?:edition|version|revision|rev\.?|issue|release)"
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_DATE = r"((?:" + "|".join(m.title() for m in _MONTHS) + r")\s+\d{1,2},\s*\d{4}|\d{4}-\d{2}-\d{2})"
# a document named by its number: "Bulletin B-2016-04", "Circular 7/2019", "Notice No. 2021-3", "Tariff No. 9";
# or a document of a series told apart by its date: "Rule 12 effective January 1, 2017"
_DOCUMENT = r"(?:bulletin|circular|notice|memo(?:randum)?|directive|order|advisory|letter|tariff|ordinance|decree)"
_NUMBER = r"([A-Z]{0,3}-?\d{1,4}(?:[-/.]\d{1,4}){1,2})"
_NAMED = re.compile(rf"\b{_DOCUMENT}\s+(?:no\.?\s*|number\s+)?{_NUMBER}(?![\w-])"
                    rf"|\b{_DOCUMENT}\s+(?:no\.?\s*|number\s+)(\d{{1,4}})(?![\w-])"  # "Tariff No. 9"
                    # a document of a yearly series: "Plan Year 2022", "the 2022 benefits summary"
                    rf"|\b(?:plan|policy|benefit|fiscal|program|model|tariff|rate) year\s+((?:19|20)\d{{2}})\b"
                    rf"|\bthe\s+((?:19|20)\d{{2}})\s+(?:\w+\s+)?(?:summary|schedule|plan|policy|tariff|rules|"
                    rf"wording|handbook|manual|booklet|guide|regulations?|code|bulletin|form)\b"
                    rf"|\b(?:rule|form|schedule|manual|section)\s+[\w.-]+\s+(?:effective|dated|as of|issued)\s+{_DATE}"
                    rf"|\b{_EDITION}s\s+{_LABEL}\s*(?:,|and|to|&|vs\.?|versus)\s+{_LABEL}(?![\w-])"
                    rf"|\b{_EDITION}\s+(?:no\.?\s*|number\s+)?{_LABEL}(?![\w-])"
                    rf"|(?<![\w-]){_LABEL}\s+{_EDITION}\b"
                    rf"|\b{_EDITION}\s+(?:effective|dated|of|issued|in force on|from)\s+{_DATE}"
                    rf"|\b{_DATE}\s+{_EDITION}\b", re.I)
_CHANGE = re.compile(r"\b(chang(?:e|ed|es|ing)|differ(?:s|ed|ence|ences)?|compare[sd]?|revised?|amended|"
                     r"increased?|decreased?|went from)\b", re.I)
_CURRENT = re.compile(r"\b(current|currently|now|today|in force|in effect|presently|at present|latest|"
                      r"as it stands|at this time)\b", re.I)
# "How did X change?" with no edition named: from the superseded value to the one in force
_HOW_CHANGED = re.compile(r"\W*how\s+(?:did|has|have|was|were)\b.*\bchang(?:e|ed)\b", re.I)
# "the rule replaced by Bulletin 2022-11", "the edition before the 2019 edition", "the form that edition 3
# superseded": the document the named one replaced, not the named one
_PRIOR_BEFORE = re.compile(r"\b(?:(?:replaced|superseded|supplanted|withdrawn|rescinded|repealed|revoked|"
                           r"amended)\s+by|(?:in force\s+)?(?:before|prior to|preceding))\s+(?:the\s+)?$", re.I)
_PRIOR_AFTER = re.compile(r"\s+(?:replaced|replaces|superseded|supersedes|withdrew|rescinded|repealed|revoked|"
                          r"amended|replace|supersede)\b", re.I)
_PRIOR_SUBJECT = re.compile(r"\b(?:that|which|did|does|had|has)\s+(?:the\s+)?$", re.I)
Kind = Literal["", "current", "named", "change", "prior"]
DEPTH = 4  # a view reads this many times k hits to keep k of its edition
PRIOR_DEPTH = 3  # and this many times deeper for what a named document replaced (ranked last)


class EditionAsk(BaseModel):
    kind: Kind = ""
    editions: list[str] = Field(default_factory=list, description="edition labels as the question writes them")


def edition_ask(question: str) -> EditionAsk:
    """What the question asks of editions: a named one (an edition label or a document's number), the one in
    force, the change between two, or nothing."""
    labels = [g for m in _NAMED.finditer(question) for g in m.groups() if g]
    if _CHANGE.search(question) and (labels or _CURRENT.search(question) or _HOW_CHANGED.match(question)
                                     or re.search(r"\beditions?\b", question, re.I)):
        return EditionAsk(kind="change", editions=labels[:2])
    for m in _NAMED.finditer(question):  # the document the named one replaced
        head, tail = question[:m.start()], question[m.end():]
        if _PRIOR_BEFORE.search(head) or (_PRIOR_SUBJECT.search(head) and _PRIOR_AFTER.match(tail)):
            return EditionAsk(kind="prior", editions=[g for g in m.groups() if g][:1])
    if labels:
        return EditionAsk(kind="named", editions=labels[:1])
    if _CURRENT.search(question):
        return EditionAsk(kind="current")
    return EditionAsk()


def label_keys(label: str) -> list[str]:
    """What a document's title or file name shows for an edition label, most specific first: "2019-10" for
    "October 1, 2019" (then "2019"), "2019-10" for "2019/10" or "10/2019"."""
    m = re.fullmatch(r"(" + "|".join(_MONTHS) + r")\s+\d{1,2},\s*(\d{4})", label.strip(), re.I)
    if m:
        return [f"{m.group(2)}-{_MONTHS.index(m.group(1).lower()) + 1:02d}", m.group(2)]
    m = re.fullmatch(r"(\d{4})-(\d{2})-\d{2}", label)
    if m:
        return [f"{m.group(1)}-{m.group(2)}", m.group(1)]
    m = re.fullmatch(r"(\d{4})[-/.](\d{1,2})", label) or re.fullmatch(r"(\d{1,2})/(\d{4})", label)
    if m:
        year, month = (m.group(1), m.group(2)) if len(m.group(1)) == 4 else (m.group(2), m.group(1))
        return [f"{year}-{int(month):02d}", f"{year}.{int(month):02d}", f"{year}/{int(month):02d}"]
    return [label]


def names_edition(label: str, hit: SearchHit) -> int:
    """How specifically the hit's document names the edition: 0 not at all, higher for a more specific key."""
    return names_label(label, f"{hit.passage.title} {Path(hit.passage.path or '').stem}")


def names_label(label: str, where: str) -> int:
    """How specifically `where` (a title, a file name) names the edition label: 0 not at all."""
    keys = label_keys(label)
    for n, key in enumerate(keys):
        after = r"(?!\w)" if re.fullmatch(r"\d{4}", key) else r"(?!\w|[-./]\d)"  # "2019" in "2019-10"
        if re.search(rf"(?<![\w.]){re.escape(key)}{after}", where, re.I):
            return len(keys) - n
    return 0


class EditionView:
    """A retriever that keeps one edition's passages: `named` (label), `current`, `superseded`, or `prior`
    (those the evidence graph marks superseded or amended by the document the label names)."""

    def __init__(self, inner: Retriever, mode: Literal["named", "current", "superseded", "prior"], label: str = ""):
        if mode in ("named", "prior") and not label:
            raise ValueError("a named edition needs its label")
        self.inner, self.mode, self.label = inner, mode, label
        self.missed = False  # a search found no document that names the edition or document asked for
        self.found = False  # ... and one did

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        hits = await self.inner.search(query, k=k * DEPTH, flt=flt)
        if self.mode == "named":
            scored = [(names_edition(self.label, h), h) for h in hits]
            best = max((s for s, _ in scored), default=0)
            docs = list(dict.fromkeys(h.passage.doc_id for s, h in scored if s and s == best))
            if not docs:  # "2019-10" over a bare "2019" when some say it
                self.missed = True
                return []
            self.found = True
            # the edition's documents searched on their own: its passages are not crowded out by the others'
            # (the corpus ranks superseded editions last)
            mine = (flt or SearchFilter()).model_copy(update={"doc_ids": docs})
            keep = await self.inner.search(query, k=k, flt=mine)
        elif self.mode == "prior":
            # the corpus ranks what was replaced last: read deeper for the documents the named one replaced,
            # then search those on their own and keep what it replaced (not their sections still in force)
            deep = await self.inner.search(query, k=k * DEPTH * PRIOR_DEPTH, flt=flt)
            docs = list(dict.fromkeys(h.passage.doc_id for h in deep if self._replaced(h)))
            if not docs:
                self.missed = True
                return []
            self.found = True
            mine = (flt or SearchFilter()).model_copy(update={"doc_ids": docs})
            keep = [h for h in await self.inner.search(query, k=k * DEPTH, flt=mine) if self._replaced(h)]
        elif self.mode == "current":
            keep = [h for h in hits if not (h.status and h.status.state == "superseded")]
        else:
            keep = [h for h in hits if h.status and h.status.state == "superseded"]
        return [h.model_copy(update={"rank": n}) for n, h in enumerate(keep[:k], start=1)]

    @property
    def unnamed(self) -> bool:
        """No search found the document or edition asked for (a later hop's search about something else
        finding none of it does not count)."""
        return self.missed and not self.found

    def _replaced(self, hit: SearchHit) -> bool:
        """The graph marks the hit superseded or amended by the document the label names."""
        return bool(hit.status and hit.status.state != "current"
                    and names_label(self.label, " ".join(hit.status.by_titles + hit.status.by)))

    def __getattr__(self, name):  # anything else a retriever offers (close, ...) is the inner one's
        return getattr(self.inner, name)


def view_for(ask: EditionAsk, retriever: Retriever) -> Retriever:
    """The retriever a one-edition question searches: the named edition's, the one in force, or all."""
    if ask.kind in ("named", "prior"):
        return EditionView(retriever, ask.kind, ask.editions[0])
    if ask.kind == "current":
        return EditionView(retriever, "current")
    return retriever


_DANGLING = re.compile(r"\b(?:from|between|to|and|in|under|of|for)\s+(?:the\s+)?(?=[\s,?.;]|$)", re.I)
_ASKING = re.compile(r"^\W*(?:how|what|in what way)\s+(?:did|has|have|does|do|was|were|is|are|had)?\s*", re.I)


def value_question(question: str) -> str:
    """A change question asked of one edition: its edition phrases, change verb and question word out, what is
    left asked as a plain question ("How did the limit on X change from the 2019 edition to the 2023 edition
    of Form C?" -> "What is the limit on X of Form C?"), so the value is read where the question's own words
    are, not from any line that states a number (a numbered comment's "2.")."""
    q = _NAMED.sub(" ", question)
    q = re.sub(r"\b(?:the\s+)?editions?\b", " ", q, flags=re.I)
    for _ in range(3):
        q = _DANGLING.sub(" ", q)
    q = _CHANGE.sub(" ", q)
    q = " ".join(q.split())
    clauses = [c for c in re.split(r"\s*,\s*", q.strip(" ?.")) if c]
    clauses = [_ASKING.sub("", c) for c in clauses]
    rest = ", ".join(c for c in clauses if c)
    return f"What is {rest}?"


def measure_of(short_answer: str | None) -> str | None:
    """The question measure (agents.answer.analysis.Measure) a value answer is of; None when it is none."""
    value = parse_value(short_answer or "")
    return {"money": "amount", "percent": "percent", "duration": "duration", "size": "size",
            "count": "count"}.get(value.kind) if value else None


def change_views(ask: EditionAsk, retriever: Retriever) -> list[tuple[str, Retriever]]:
    """(name, view) of the two editions compared: both named, a named one and the one in force, or the
    superseded one and the one in force."""
    named = [(f"edition {e}", EditionView(retriever, "named", e)) for e in ask.editions[:2]]
    if len(named) == 2:
        return named
    if len(named) == 1:
        return [named[0], ("the edition in force", EditionView(retriever, "current"))]
    return [("the superseded edition", EditionView(retriever, "superseded")),
            ("the edition in force", EditionView(retriever, "current"))]


async def answer_change(question: str, ask: EditionAsk, retriever: Retriever,
                        one: Callable[[str, Retriever, str | None], Awaitable[AgentAnswer]]) -> AgentAnswer:
    """Ask each edition for its value (`one(question, view, measure)`: the strategy and the answer layer over
    that view, asked `value_question(question)`,
    for a value of that measure, None for the question's own) and compose "from V_A to V_B"; refused when
    either edition states no value of the asked kind. A change compares like with like: the newer edition
    is asked first, and the older one for a value of the same kind as its answer."""
    (name_a, view_a), (name_b, view_b) = change_views(ask, retriever)
    asked = value_question(question)
    b = await one(asked, view_b, None)
    a = await one(asked, view_a, measure_of(b.short_answer))
    if b.abstained and not a.abstained:
        b = await one(asked, view_b, measure_of(a.short_answer))
    hops = a.hops + b.hops
    retrieved = unique_passages(a.retrieved + b.retrieved)
    written = f"{name_a}: {a.answer}\n{name_b}: {b.answer}"
    base = a.model_copy(update={"question": question, "answer": written, "hops": hops, "retrieved": retrieved,
                                "citations": a.citations + [c.model_copy(update={"n": c.n + len(a.citations)})
                                                            for c in b.citations],
                                "strategy_span": None})
    missing = [name for name, x in ((name_a, a), (name_b, b)) if x.abstained or not x.short_answer]
    guess = f"from {a.short_answer or a.guess or '?'} to {b.short_answer or b.guess or '?'}"
    confidence = min(a.confidence or 0.0, b.confidence or 0.0)
    if missing:
        why = "; ".join(f"{name}: {x.abstain_reason}" for name, x in ((name_a, a), (name_b, b))
                        if x.abstained or not x.short_answer)
        return base.model_copy(update={"short_answer": None, "abstained": True, "confidence": confidence,
                                       "guess": guess, "answer_support": [],
                                       "abstain_reason": f"no value stated for {' and '.join(missing)} ({why})"})
    va, vb = parse_value(a.short_answer), parse_value(b.short_answer)
    short = (f"unchanged: {a.short_answer} in both" if va and vb and same_value(va, vb)
             else f"from {a.short_answer} ({name_a}) to {b.short_answer} ({name_b})")
    support = [c.model_copy(update={"n": n}) for n, c in enumerate(a.answer_support + b.answer_support, start=1)]
    return base.model_copy(update={"short_answer": short, "abstained": False, "abstain_reason": None,
                                   "confidence": confidence, "guess": guess, "answer_support": support})


async def with_history(current: AgentAnswer, retriever: Retriever,
                       one: Callable[[Retriever, str | None], Awaitable[AgentAnswer]]) -> AgentAnswer:
    """The answer in force, with the value it replaced as history: the superseded passages asked for a value of
    the same kind (`one(view, measure)`); kept when it is a different value, with the passage stating it."""
    measure = measure_of(current.short_answer)
    if current.abstained or measure is None:
        return current
    old = await one(EditionView(retriever, "superseded"), measure)
    was, now = parse_value(old.short_answer or ""), parse_value(current.short_answer or "")
    if old.abstained or not was or not now or same_value(was, now) or not old.answer_support:
        return current
    source = old.answer_support[0]
    return current.model_copy(update={"history": f"{old.short_answer} (superseded: {source.title})",
                                      "history_support": old.answer_support})
