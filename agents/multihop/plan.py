"""Walking a composed question's plan (`decompose`) over the hops a chain has made.

Each hop asks one sub-question with the earlier steps' answers put in place of
`#n`; its answer is the entity of the sub-question's answer type that the hop's
query does not name, best first (in the hop's answer sentence, nearest a word of
the query and right after a word of the step's relation, `agents.answer.relation`:
"produced by X" for a producer, "born ... in X" for a birthplace; then in its
other supporting sentences). When a hop finds nothing
for its step, the bridge it was asked about was likely the wrong entity: the next
hop asks the same step again with the previous step's next candidate in place.
The walk is recomputed from the hops alone, so the follow-up query, the stop
and the final answer all read the same walk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agents.answer.analysis import TYPE_KINDS, analyze, fits_measure
from agents.answer.relation import anchored, answer_entities, is_alias, relation_terms, sentence_words, transparent
from agents.lm.nlp import TextToolkit
from agents.multihop import evidence
from agents.multihop.decompose import SubQuestion, substitute
from agents.multihop.trace import found_nothing
from retrieval.documents import PassageText

_CITATION = re.compile(r"\s*\[\d+(?:,\s*\d+)*\]")
_POSSESSIVE = re.compile(r"['’]s?$")


@dataclass
class PlanHop:
    """A hop as the walk reads it (a chain's `HopBrief` reads the same)."""

    query: str
    answer: str
    supporting: list[PassageText] = field(default_factory=list)


@dataclass
class PlanWalk:
    answers: list[str] = field(default_factory=list)  # the answer taken for each step walked so far
    concluding: int | None = None  # the hop that answered the plan's last step, once it has
    next_query: str | None = None  # the sub-question the next hop asks; None off the plan or when done


def step_candidates(nlp: TextToolkit, step: SubQuestion, hop) -> list[str]:
    """Entities of `step`'s answer type that `hop.query` does not name, best first; `hop` has `query`,
    `answer` (its sentence) and `supporting` (passages)."""
    if found_nothing(hop.answer):
        return []
    kinds = TYPE_KINDS[step.answer_type] or evidence.BRIDGE_KINDS
    asked = evidence.terms(nlp, hop.query)
    # a number of the kind the sub-question measures: a population is a count, not a year
    measure = analyze(nlp, hop.query).measure if step.answer_type == "number" else ""
    sentences = [hop.answer] + [s.text for s in evidence.rank_sentences(nlp, hop.query, hop.supporting)
                                if s.text != hop.answer]
    relation = relation_terms(nlp, step.text)  # "born" for "city where X was born", "directed" for "director of X"
    out: list[str] = []
    for sentence in sentences:
        sentence = _CITATION.sub("", sentence)
        words = [(m.start(), m.end(), nlp.stem(m.group().lower())) for m in re.finditer(r"\w+", sentence)]
        marked, skip = sentence_words(nlp, sentence), transparent(nlp, sentence, asked)
        scored = sorted(((-evidence.closeness(words, e.start, e.end, asked)
                          - anchored(marked, e.start, e.end, relation, skip), e.start, e.text)
                         for e in answer_entities(nlp, sentence, kinds, asked)
                         if not is_alias(nlp, sentence[:e.start], asked)))
        for *_, text in scored:
            text = _POSSESSIVE.sub("", text)  # "Finland's" -> "Finland"
            if text and text not in out and (not measure or fits_measure(text, measure)):
                out.append(text)
    return out


def walk_plan(nlp: TextToolkit, plan: Sequence[SubQuestion], hops: Sequence) -> PlanWalk:
    """How far `hops` walked `plan`, the answer taken for each step, and what the next hop asks."""
    walk = PlanWalk()
    if len(plan) < 2:
        return walk
    others: list[list[str]] = []  # per step walked, its candidates not yet tried
    for n, hop in enumerate(hops):
        step = len(walk.answers)
        if hop.query != substitute(plan[step].text, walk.answers):
            return walk  # the chain left the plan
        found = step_candidates(nlp, plan[step], hop)
        if found:
            walk.answers.append(found[0])
            others.append(found[1:])
            if len(walk.answers) == len(plan):
                walk.concluding = n
                return walk
        elif step and others[step - 1]:  # back one step: its next candidate in place
            walk.answers[step - 1] = others[step - 1].pop(0)
        else:
            return walk
    walk.next_query = substitute(plan[len(walk.answers)].text, walk.answers)
    return walk
