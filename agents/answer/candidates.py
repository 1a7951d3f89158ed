"""Candidate answers from the evidence a strategy gathered, each with the features fusion weighs.

A candidate is an entity of the question's answer type found in a hop's
intermediate answer or in a supporting passage, that the question itself does
not name. The same candidate met in several places is one candidate with several
votes: how many hops said it, how many passages state it, whether the
concluding hop said it, whether the strategy's own short span was it, how close
it sits to the question's words, whether an earlier hop already searched for it
(a bridge, rarely the answer), how directly its sentence states the relation the
question's last step asks ("married X" for a spouse, `relation`), for a value how
much of the question's provision its own clause, table row and headings name and
whether they state a qualifier the question rules out (`provision`), and whether it
is only ever another name of something the question names (then it is dropped).
A composed question's candidates carry each feature twice, so that it is weighed
apart from a one-step question's.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, Field

from agents.answer import provision, values
from agents.answer.analysis import TYPE_KINDS, QuestionAnalysis, fits_measure
from agents.answer.relation import anchored, answer_entities, is_alias, relation_terms, sentence_words, transparent
from agents.lm.nlp import TextToolkit
from agents.lm.text.entities import Entity
from agents.multihop import evidence
from agents.multihop.decompose import SubQuestion, decompose
from agents.multihop.plan import PlanHop, PlanWalk, step_candidates, walk_plan
from agents.multihop.metrics import normalize_answer
from agents.multihop.trace import found_nothing
from retrieval.documents import PassageText

BASE_FEATURES = ("bias", "strategy_span", "hop_votes", "last_hop", "late", "passage_votes", "closeness", "fit",
            "title", "bridge", "chained", "slot", "words", "common", "head", "named", "off_type", "overlap",
            "planned", "relation", "echo", "walked", "provision", "clash")
# A composed question (a plan of two steps or more) weighs each feature apart from a one-step question: its
# answer comes from a chain's last step, a one-step question's from any hop. A question asking for a value (a
# number answer: "three hundred dollars", "30 days") weighs them apart again: its candidates are values of the
# asked kind, read by the value grammar, and what singles one out differs from a name's.
FEATURES = BASE_FEATURES + tuple(f"composed_{f}" for f in BASE_FEATURES) + tuple(f"value_{f}" for f in BASE_FEATURES)


class HopEvidence(BaseModel):
    query: str
    answer: str
    supporting: list[int] = Field(default_factory=list, description="indices into the evidence's passages")


class Evidence(BaseModel):
    """What a strategy gathered for one question, as the answer steps read it."""

    question: str
    answer: str = Field(description="the strategy's written answer")
    strategy_span: str = Field("", description="the strategy's own short span, '' if none")
    hops: list[HopEvidence] = Field(default_factory=list)
    passages: list[PassageText] = Field(default_factory=list, description="supporting passages, then others")


class Candidate(BaseModel):
    text: str
    features: dict[str, float]
    passages: list[int] = Field(default_factory=list, description="indices of the passages that state it")


def gather(nlp: TextToolkit, analysis: QuestionAnalysis, ev: Evidence) -> list[Candidate]:
    """Every candidate of the answer type with its features, in order of first appearance."""
    kinds = TYPE_KINDS[analysis.answer_type] or ("name",)
    if analysis.answer_type == "date":
        kinds = (*kinds, "number")  # a bare early year ("1410") reads as a number; `_entities` keeps years only
    asked = evidence.terms(nlp, ev.question)
    # a composed question walked as a plan (agents/multihop/decompose): the hop that asked its last relation
    # concludes; what the plan put into a later sub-question was a bridge, never the answer
    plan = decompose(ev.question)
    if len(plan) == 1:  # a one-step question concludes at the first hop that found something of its type
        walk = _one_step(nlp, plan[0], ev)
    else:
        walk = walk_plan(nlp, plan, [
            PlanHop(query=h.query, answer=h.answer, supporting=[ev.passages[i] for i in h.supporting])
            for h in ev.hops])
    concluding = ev.hops[walk.concluding] if walk.concluding is not None else None
    plan_bridges = [evidence.terms(nlp, a) for a in walk.answers[:-1]] if concluding else []
    # hops after the concluding one search from its answer: they make the answer look like a bridge
    hops = ev.hops[:walk.concluding + 1] if walk.concluding is not None and len(plan) > 1 else ev.hops
    queried = evidence.terms(nlp, " ".join(h.query for h in hops[1:]))
    found = [h for h in hops if not found_nothing(h.answer)]
    last = found[-1] if found else None
    support = sorted({i for h in ev.hops for i in h.supporting}) or list(range(min(3, len(ev.passages))))
    # the relation the question's last step asks ("spouse" of "Who is the spouse of #1?")
    relation_words = relation_terms(nlp, plan[-1].text) if plan else set()
    # the question's relation words: what it asks about, less the things it names
    relation = evidence.terms(nlp, analysis.asks_for) or asked
    head = evidence.terms(nlp, analysis.head)  # the word naming what is asked ("spouse", "waiting period")
    titles = {normalize_answer(_PARENTHESES.sub("", p.title)) for p in ev.passages}
    lowered = " ".join(p.text for p in ev.passages)
    # entities the hops found that the question does not name: the chain's bridges
    bridges = {e.text for h in found for e in nlp.entities(h.answer, evidence.BRIDGE_KINDS)
               if not evidence.mentions(nlp, asked, e.text)}
    by_key: dict[str, dict] = {}
    numeric = analysis.answer_type == "number"
    known_values = values.values_in(ev.question) if numeric else []
    wanted = provision.provision_terms(nlp, ev.question, analysis) if numeric else set()
    flat = [provision.flat(p.text) for p in ev.passages] if numeric else []

    def add(text: str, closeness: float, sentence: str, title: str, in_slot: float = 0.0,
            rel: float = 0.0, alias: float = 0.0, local: provision.Clause | None = None, section: str = "") -> dict:
        key = value_key(text) if numeric else normalize_answer(text)
        slot = by_key.setdefault(key, {"text": text, "hops": set(), "closeness": 0.0, "fit": 0.0, "slot": 0.0,
                                       "head": 0.0, "overlap": 0.0, "relation": 0.0, "alias": 1.0,
                                       "provision": 0.0, "clash": 1.0 if numeric and local else 0.0})
        if numeric and local:  # a value read in its own clause, under its headings (agents/answer/provision)
            clash = provision.clashes(ev.question, local, text)
            slot["clash"] = min(slot["clash"], float(clash))  # it clashes only if it clashes wherever it is met
            if not clash:
                slot["provision"] = max(slot["provision"], provision.provision_fit(nlp, wanted, local, section))
        slot["closeness"] = max(slot["closeness"], closeness)
        slot["slot"] = max(slot["slot"], in_slot)
        slot["relation"] = max(slot["relation"], rel)
        slot["alias"] = min(slot["alias"], alias)  # an alias wherever it is met
        have = evidence.terms(nlp, f"{title} {sentence}")
        fit = sum(evidence.related(t, have) for t in relation) / len(relation) if relation else 0.0
        slot["fit"] = max(slot["fit"], fit)
        if asked:  # how much of the whole question the sentence (with its passage's title) restates
            slot["overlap"] = max(slot["overlap"], sum(evidence.related(t, have) for t in asked) / len(asked))
        if head:
            slot["head"] = max(slot["head"], sum(evidence.related(t, have) for t in head) / len(head))
        if any(evidence.mentions(nlp, have, b) for b in bridges if normalize_answer(b) != key):
            slot["chained"] = 1.0
        return slot

    for n, hop in enumerate(found):
        title = next((ev.passages[i].title for i in hop.supporting if hop.answer in ev.passages[i].text), "")
        # an earlier step's hop states an earlier relation: the last one's words say nothing of its entities
        stating = relation_words if concluding is None or hop is concluding else set()
        for e, close, in_slot, rel, alias, local in _entities(nlp, hop.answer, kinds, asked, analysis.answer_type,
                                                              stating, known_values):
            section = next((provision.headings(nlp, ev.passages[i]) for i in hop.supporting
                            if numeric and local.text in flat[i]), "")
            for form in forms(e, analysis, ev.question, titles):
                slot = add(form, close, hop.answer, title, in_slot, rel, alias, local, section)
                slot["hops"].add(n)
                slot["late"] = max(slot.get("late", 0.0), (n + 1) / len(found))
                if hop is last:
                    slot["last"] = True
                if hop is concluding:
                    slot["planned"] = 1.0
    for i in support:
        for sentence in nlp.sentences(ev.passages[i].text):
            if not asked & evidence.terms(nlp, sentence):
                continue
            for e, close, in_slot, rel, alias, local in _entities(nlp, sentence, kinds, asked, analysis.answer_type,
                                                                  relation_words, known_values):
                for form in forms(e, analysis, ev.question, titles):
                    add(form, close * 0.5, sentence, ev.passages[i].title, in_slot, rel * 0.5, alias, local,
                        provision.headings(nlp, ev.passages[i]))
    span = normalize_answer(ev.strategy_span)
    if numeric and span:  # the strategy's span counts as a value some passage states, or not at all
        spanned = values.parse_value(ev.strategy_span)
        if not spanned or spanned.kind == "year" or not any(values.states(p.text, ev.strategy_span)
                                                            for p in ev.passages):
            span = ""
    if span and (value_key(ev.strategy_span) if numeric else span) not in by_key \
            and _of_kinds(nlp, ev.strategy_span, kinds):
        add(ev.strategy_span, 0.0, "", "")
    out = []
    for key, slot in by_key.items():
        cand_terms = evidence.terms(nlp, slot["text"])
        if cand_terms and any(cand_terms <= b for b in plan_bridges if b):
            continue  # a step's answer put into the next sub-question is what that one asks about, not its answer
        if slot["alias"]:
            continue  # only ever met as another name of something the question names ("Gila monster (Heloderma")
        if numeric and key.startswith("value:"):  # "$300" is stated by "three hundred dollars"
            stated = [i for i, p in enumerate(ev.passages) if values.states(f"{p.title} {p.text}", slot["text"])]
        else:
            stated = [i for i, p in enumerate(ev.passages) if key and key in normalize_answer(f"{p.title} {p.text}")]
        features = {
            "bias": 1.0,
            "strategy_span": float(bool(span) and (key == span or key in span or span in key
                                                   or (numeric and values.states(ev.strategy_span, slot["text"])))),
            "hop_votes": math.log1p(len(slot["hops"])),
            "last_hop": float(slot.get("last", False)),
            "late": slot.get("late", 0.0),
            "passage_votes": math.log1p(len([i for i in stated if i in support])),
            "closeness": slot["closeness"],
            "fit": slot["fit"],
            "title": float(normalize_answer(slot["text"]) in titles),
            "bridge": float(bool(cand_terms) and cand_terms <= queried),
            "chained": slot.get("chained", 0.0),
            "slot": slot["slot"],
            "words": min(len(key.split()), 6) / 6,
            "common": float(_common_word(slot["text"], lowered)),
            "head": slot["head"],
            "named": float(any(evidence.related(t, cand_terms) for t in head)),  # "DuPage County" for "what county"
            "off_type": float(_off_type(slot["text"], analysis.answer_type)),
            "overlap": slot["overlap"],
            "planned": slot.get("planned", 0.0),
            "relation": slot["relation"],
            # how much of the candidate the question already says ("Representative of the Falkland Islands")
            "echo": sum(evidence.related(t, asked) for t in cand_terms) / len(cand_terms) if cand_terms else 0.0,
            # the plan walk's own pick for the last step (its answer of the last relation's type, best anchored)
            "walked": float(bool(concluding) and key == normalize_answer(walk.answers[-1])),
            # a value: how much of the question's provision its own clause and headings say, and whether its
            # clause states a qualifier the question rules out wherever it is met (agents/answer/provision)
            "provision": slot["provision"],
            "clash": slot["clash"],
        }
        composed = len(plan) > 1
        base = list(features.items())
        features.update({f"composed_{k}": v if composed else 0.0 for k, v in base})
        features.update({f"value_{k}": v if numeric else 0.0 for k, v in base})
        out.append(Candidate(text=slot["text"], features=features, passages=stated))
    if analysis.measure:  # "30 days" for a waiting period, "$1,000" for a deductible, "2,913,123" for a population
        out = [c for c in out if fits_measure(c.text, analysis.measure)]
    unit = asked_unit(ev.question) if numeric else ""
    if unit and any(_unit_word(c.text) == unit for c in out):  # "how many days": days, where some passage says
        out = [c for c in out if _unit_word(c.text) == unit]
    return out


_HOW_MANY = re.compile(r"\bhow many\s+([a-z]+)|\b(?:what|which)\s+([a-z]+)\b|\bin\s+([a-z]+)\s*\?$", re.I)


def asked_unit(question: str) -> str:
    """The unit a question names for its answer ("how many days", "what horsepower", "... in hours?"),
    singular, when the value grammar reads it as a unit of time or size; else ''."""
    for m in _HOW_MANY.finditer(question):
        word = next(g for g in m.groups() if g).lower()
        v = values.parse_value(f"2 {word}")
        if v and v.kind in ("duration", "size"):
            return _unit_word(f"2 {word}")
    return ""


def _unit_word(text: str) -> str:
    words = re.findall(r"[a-z]+", text.lower())
    word = words[-1] if words else ""
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def value_key(text: str) -> str:
    """One key for every writing of one value ("$300", "three hundred dollars"); other text as normalised."""
    v = values.parse_value(text)
    return f"value:{v.kind}:{v.unit}:{v.number:g}" if v else normalize_answer(text)


def _one_step(nlp: TextToolkit, step: SubQuestion, ev: Evidence) -> PlanWalk:
    """The walk of a plan of one step: the first hop whose answer names something of the step's type concludes
    (later hops search on from it, as they do past a composed question's last step)."""
    for n, hop in enumerate(ev.hops):
        found = step_candidates(nlp, step, PlanHop(query=hop.query, answer=hop.answer,
                                                   supporting=[ev.passages[i] for i in hop.supporting]))
        if found:
            return PlanWalk(answers=[found[0]], concluding=n)
    return PlanWalk()


_PARENTHESES = re.compile(r"\s*\([^)]*\)")
_POSSESSIVE = re.compile(r"['’]s?$")
_HONORIFICS = frozenset("senator president king queen prince princess professor prof dr doctor sir dame lord lady "
                        "judge justice general colonel captain lieutenant major governor mayor minister premier "
                        "chancellor bishop pope saint mr mrs ms miss".split())
_YEAR_ASKED = re.compile(r"\b(what|which) year\b", re.I)
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})s?\b")
_CONTRACTED = re.compile(r"['’][a-rt-z]")  # "DJ'ed": a word cut from a verb, not a name
# Last words that make a name an organisation or a place, not a person; an organisation, not a place.
_ORGANISATION = frozenset("university college school academy institute corporation company inc ltd records pictures "
                          "studios party league series association society club council committee church museum "
                          "hospital foundation agency ministry department bank group band orchestra team airlines "
                          "press publishing network channel award awards prize war".split())
_PLACE = frozenset("city county district state province river lake mountain island islands valley region country "
                   "kingdom republic street avenue park bay sea ocean".split())


def forms(text: str, analysis: QuestionAnalysis, question: str, titles: set[str]) -> list[str]:
    """The candidate an entity yields, in the form the question asks for: without a possessive
    ("Finland's" -> "Finland") or a leading title ("Senator Barnaby Joyce" -> "Barnaby Joyce"); the year of
    a date when the question asks "what year"; and, beside a longer name, a passage's title inside it
    ("Queensland Senator Barnaby Joyce" also as "Barnaby Joyce")."""
    text = _POSSESSIVE.sub("", text.strip())
    if _CONTRACTED.search(text):
        return []
    words = text.split()
    while len(words) > 1 and words[0].lower().rstrip(".") in _HONORIFICS:
        words = words[1:]
    text = " ".join(words)
    if analysis.answer_type == "date" and _YEAR_ASKED.search(question):
        year = _YEAR.search(text)
        return [year.group()] if year else [text]
    out = [text]
    for n in range(len(words) - 1, 1, -1):  # the longest title inside, at the start or the end
        for part in (words[:n], words[-n:]):
            if normalize_answer(" ".join(part)) in titles and " ".join(part) not in out:
                out.append(" ".join(part))
        if len(out) > 1:
            break
    return out


def _of_kinds(nlp: TextToolkit, text: str, kinds) -> bool:
    """The strategy's span is a candidate only if it is of the answer type ("Bulletin 2022-11" is no person)."""
    return any(e.end - e.start >= len(text.strip()) - 3 for e in nlp.entities(text, kinds))


def _off_type(text: str, answer_type: str) -> bool:
    """A person answer named like an organisation or a place ("Fox Film Corporation", "Lake District"), or a
    place answer named like an organisation ("Bethel University")."""
    last = text.split()[-1].lower() if text.split() else ""
    if answer_type == "person":
        return last in _ORGANISATION or last in _PLACE
    return answer_type == "place" and last in _ORGANISATION


def _common_word(text: str, passages_text: str) -> bool:
    """A one-word name that the passages also write in lower case: a common noun met at a sentence's
    start or in a heading ("Stage", "Woman"), not a name."""
    words = text.split()
    return len(words) == 1 and words[0][:1].isupper() and not words[0].isupper() and bool(
        re.search(rf"(?<![\w-]){re.escape(words[0].lower())}(?![\w-])", passages_text))


# The word before an answer of each type, when the sentence states it as one ("born in X", "by X").
_SLOTS = {"place": {"in", "at", "from", "near", "of"}, "date": {"in", "on", "since", "until", "from"},
          "person": {"by", "to", "with"}, "number": {"of", "about", "approximately", "is", "was"}}


def _entities(nlp: TextToolkit, sentence: str, kinds, asked: set[str], answer_type: str = "",
              relation: set[str] = frozenset(), known_values: list[values.Value] = ()):
    """(text, closeness to the question's words, in an answer slot, anchored to the relation, an alias of
    something the question names, its clause: `provision.clause`) for each entity of `kinds` in `sentence` the
    question does not name."""
    sentence = re.sub(r"\s*\[\d+(?:,\s*\d+)*\]", "", sentence)
    words = [(m.start(), m.end(), nlp.stem(m.group().lower())) for m in re.finditer(r"\w+", sentence)]
    marked = sentence_words(nlp, sentence) if relation else words
    skip = transparent(nlp, sentence, asked) if relation else set()
    slots = _SLOTS.get(answer_type, set())
    found = answer_entities(nlp, sentence, kinds, asked)
    if answer_type == "number":
        found = _value_entities(sentence, known_values)
    for e in found:
        if answer_type == "date" and e.kind == "number" and not _YEAR_ONLY.match(e.text):
            continue  # a date question reads numbers only as years
        if e.kind == "name" and sentence[:e.start].endswith("New "):  # "New York": "New" is a stopword
            e = e.model_copy(update={"text": f"New {e.text}", "start": e.start - 4})
        before = re.search(r"(\w+)\W*$", sentence[:e.start])
        slot = float(bool(before) and before.group(1).lower() in slots)
        alias = float(e.kind == "name" and is_alias(nlp, sentence[:e.start], asked))
        rel = anchored(marked, e.start, e.end, relation, skip) if relation else 0.0
        row = provision.row_span(sentence, e.start, e.end)  # a table row's words, not the next row's
        near = [w for w in words if row[0] <= w[0] and w[1] <= row[1]] if row else words
        yield (e.text, evidence.closeness(near, e.start, e.end, asked), slot, rel, alias,
               provision.clause(sentence, e.start, e.end))


def _value_entities(sentence: str, known: list[values.Value]) -> list[Entity]:
    """The values a sentence states (agents/answer/values: "three hundred dollars", "five (5) percent"), as
    written, less those the question states. What the grammar reads as no value (a paragraph's number
    "9.3", a code, the day of a date) is no candidate; nor is a year: it measures nothing."""
    return [Entity(text=v.text, kind="quantity" if v.unit else "number", start=v.start, end=v.end)
            for v in values.values_in(sentence) if v.kind != "year" and not any(values.same_value(v, k) for k in known)]


_YEAR_ONLY = re.compile(r"^(?:[1-9]\d{2}|1\d{3}|20\d{2})$")
