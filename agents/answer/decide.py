"""Yes/no and "which of A or B" questions, decided from the evidence rather than guessed.

- A comparison reads, for each option, the passages about it (the option named
  in the title, else in the text) and the value the question compares: the
  earliest year for "first / earlier / older", the latest for "later / younger /
  more recent", the largest number for "larger / more / longer / taller". The
  option with the winning value is the answer; when a value is missing for
  either, the decision is marked undecided (fusion gives it a low confidence).
- A yes/no question about two named things and one property ("Are A and B both
  board games?"): yes when every named thing's passages state the property's
  words. "... the same X?": yes when the things' passages name a common X.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from agents.answer.analysis import QuestionAnalysis
from agents.lm.nlp import TextToolkit
from agents.multihop import evidence
from retrieval.documents import PassageText

_EARLY = re.compile(r"\b(first|earlier|earliest|older|oldest|before|sooner|predates?)\b", re.I)
_LATE = re.compile(r"\b(later|latest|younger|youngest|after|newer|more recent|most recent)\b", re.I)
_MORE = re.compile(r"\b(larger|largest|bigger|more|most|longer|taller|higher|greater)\b", re.I)
_LESS = re.compile(r"\b(smaller|fewer|less|shorter|lower)\b", re.I)
_YEAR = re.compile(r"\b(1[0-9]\d\d|20\d\d)\b")
_NUMBER = re.compile(r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+(?:\.\d+)?\b")
_FILLER = frozenset("both same also either".split())


class Decision(BaseModel):
    answer: str = ""
    decided: bool = False  # the evidence held what the decision needs for every option
    passages: list[int] = Field(default_factory=list)
    why: str = ""


def about(nlp: TextToolkit, name: str, passages: list[PassageText]) -> list[int]:
    """Passages about `name`: those whose title names it, else those whose text does."""
    titled = [i for i, p in enumerate(passages) if evidence.mentions(nlp, evidence.terms(nlp, p.title), name)]
    if titled:
        return titled
    return [i for i, p in enumerate(passages) if evidence.mentions(nlp, evidence.terms(nlp, p.text), name)]


def compare(nlp: TextToolkit, question: str, analysis: QuestionAnalysis, passages: list[PassageText]) -> Decision:
    a, b = analysis.options
    values: list[float | None] = []
    used: list[int] = []
    if _EARLY.search(question) or _LATE.search(question):
        pattern, pick = _YEAR, (min if _EARLY.search(question) else max)
    elif _MORE.search(question) or _LESS.search(question):
        pattern, pick = _NUMBER, (max if _MORE.search(question) else min)
    else:
        pattern, pick = None, max
    for option in (a, b):
        mine = about(nlp, option, passages)
        used += mine
        if pattern is None:
            values.append(None)
            continue
        found = [float(m.group().replace(",", "")) for i in mine for m in pattern.finditer(passages[i].text)]
        values.append((min if pattern is _YEAR else max)(found) if found else None)
    if None in values:
        # the option the evidence says more about, undecided
        counts = [len(about(nlp, o, passages)) for o in (a, b)]
        chosen = a if counts[0] >= counts[1] else b
        return Decision(answer=chosen, decided=False, passages=sorted(set(used)),
                        why=f"no passage states the compared value for {b if values[0] is not None else a}")
    chosen = a if pick(values) == values[0] and values[0] != values[1] else b
    return Decision(answer=chosen, decided=values[0] != values[1], passages=sorted(set(used)),
                    why=f"{a}: {values[0]:g}, {b}: {values[1]:g}")


def yes_no(nlp: TextToolkit, question: str, analysis: QuestionAnalysis, passages: list[PassageText]) -> Decision:
    named = [e for e in analysis.entities if about(nlp, e, passages)]
    things = named[:2] if len(named) >= 2 else analysis.entities[:2]
    if not things:
        return Decision(why="the question names nothing to look up")
    thing_terms = evidence.terms(nlp, " ".join(things))
    wanted = [t for t in evidence.terms(nlp, question) - thing_terms if t not in _FILLER]
    per_thing = [about(nlp, t, passages) for t in things]
    used = sorted({i for ids in per_thing for i in ids})
    if any(not ids for ids in per_thing):
        missing = next(t for t, ids in zip(things, per_thing) if not ids)
        return Decision(passages=used, why=f"no passage is about {missing}")
    if re.search(r"\bsame\b", question, re.I) and len(things) == 2:
        values = []
        for ids in per_thing:
            text = " ".join(s for i in ids for s in nlp.sentences(passages[i].text)
                            if set(wanted) & evidence.terms(nlp, s))
            values.append({e.key for e in nlp.entities(text, ("name",))} - {t.lower() for t in things})
        common = values[0] & values[1]
        return Decision(answer="yes" if common else "no", decided=bool(values[0] and values[1]), passages=used,
                        why=f"both name {sorted(common)[0]}" if common else "their passages name nothing in common")
    holds = []
    for ids in per_thing:
        have = evidence.terms(nlp, " ".join(f"{passages[i].title} {passages[i].text}" for i in ids))
        holds.append(all(evidence.related(t, have) for t in wanted))
    return Decision(answer="yes" if all(holds) else "no", decided=True, passages=used,
                    why=", ".join(f"{t}: {'stated' if h else 'not stated'}" for t, h in zip(things, holds)))
