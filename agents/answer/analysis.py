"""Question analysis: what kind of thing the question asks for, and what it names.

The answer type steers everything after it: which entities of the evidence are
candidates (a date for "when", a name for "who"), how candidates are fused
(consensus, an explicit comparison for "which of A or B", a yes/no decided from
the evidence) and what an abstention says ("no passage states ...").
Offline the type comes from the question's wh-words and shape; a chat model runs
the same step.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.entities import EntityKind

AnswerType = Literal["person", "place", "date", "number", "yes_no", "comparison", "list", "free_text"]

# The entity kinds a candidate of each type may be.
TYPE_KINDS: dict[str, tuple[EntityKind, ...]] = {
    "person": ("name",), "place": ("name",), "date": ("date",), "number": ("quantity", "number"),
    "list": ("name",), "free_text": ("name", "reference", "code"), "comparison": ("name",), "yes_no": (),
}
_AUXILIARY = re.compile(r"^\s*(is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.I)
_DATE = re.compile(r"\b(when|what year|which year|what date|what month|what decade|what century|"
                   r"in what year|how long ago)\b", re.I)
_NUMBER = re.compile(r"\b(how (many|much|long|old|far|tall|big|large|high)|what (number|percentage|"
                     r"population|age|amount)|population|snowfall|debt)\b", re.I)
_PLACE = re.compile(r"\b(where|capital|birthplace|headquarters|(what|which) (city|country|county|state|town|location|region|place|continent|"
                    r"province|island|village|river|district|area|nation))\b", re.I)
_PERSON = re.compile(r"^\s*(who|whom|whose)\b|\b(what|which) (person|man|woman|actor|actress|author|writer|"
                     r"player|singer|director|president|king|queen|politician|composer|artist|founder)\b", re.I)
_LIST = re.compile(r"\b(list|name (all|the)|which \w+ (are|were) (both|all))\b", re.I)
_CHOICE = re.compile(r"\b(which|who|what)\b.*\bor\b", re.I)
_ASK_WORDS = frozenset("who whom whose what which when where why how is are was were do does did has have had "
                       "can could will would should in on of at for by".split())


class QuestionAnalysis(BaseModel):
    """The answer type, the entities the question names, and for a comparison its two options."""

    answer_type: AnswerType
    entities: list[str] = Field(default_factory=list, description="the things the question names")
    options: list[str] = Field(default_factory=list, description="comparison: the two things compared")
    asks_for: str = Field("", description="the asked-for attribute in the question's words, e.g. 'birth date'")


class AnalyzeInput(BaseModel):
    question: str


class AnalyzeQuestion(Step[AnalyzeInput, QuestionAnalysis]):
    name: ClassVar[str] = "answer.analyze"
    stage: ClassVar[str] = "answer"
    Input = AnalyzeInput
    Output = QuestionAnalysis
    instructions: ClassVar[str] = (
        "Classify the question by the kind of answer it wants: person, place, date, number, yes_no, "
        "comparison (which of two named things), list, or free_text. List the entities the question names "
        "(as written). For a comparison, give the two things compared as `options`. In `asks_for`, name "
        "the attribute asked for in a few of the question's words."
    )

    @classmethod
    def check(cls, inp: AnalyzeInput, out: QuestionAnalysis) -> str | None:
        if out.answer_type == "comparison" and len(out.options) != 2:
            return "a comparison names exactly two options: give both in `options`, or pick another type"
        return None

    @classmethod
    def extract(cls, inp: AnalyzeInput, nlp: TextToolkit) -> QuestionAnalysis:
        return analyze(nlp, inp.question)


def analyze(nlp: TextToolkit, question: str) -> QuestionAnalysis:
    q = " ".join(question.split())
    entities = question_entities(nlp, q)
    options = choice_options(nlp, q)
    if options and (_CHOICE.search(q) or _AUXILIARY.search(q)):
        kind: AnswerType = "comparison"
    elif _AUXILIARY.search(q):
        kind = "yes_no"
    elif _DATE.search(q):
        kind = "date"
    elif _NUMBER.search(q):
        kind = "number"
    elif _PLACE.search(q):
        kind = "place"
    elif _LIST.search(q):
        kind = "list"
    elif _PERSON.search(q):
        kind = "person"
    else:
        kind = "free_text"
    return QuestionAnalysis(answer_type=kind, entities=entities, options=options if kind == "comparison" else [],
                            asks_for=asked_attribute(nlp, q, entities))


def question_entities(nlp: TextToolkit, question: str) -> list[str]:
    """Named things in the question, the question's own capitalised first word ("Who", "Which") aside."""
    out: list[str] = []
    for e in nlp.entities(question, ("date", "reference", "code", "name", "quantity")):
        text = e.text
        first, _, rest = text.partition(" ")
        if first.lower() in _ASK_WORDS:
            text = rest
        if text and text.lower() not in _ASK_WORDS and text not in out:
            out.append(text)
    return out


def choice_options(nlp: TextToolkit, question: str) -> list[str]:
    """The two things of "... A or B?": the named thing ending just before the last " or " and the
    one starting just after it ("Which came first, the forming of X or the birth of Y?" -> X, Y)."""
    at = question.lower().rfind(" or ")
    if at < 0:
        return []
    before, after = question[:at], question[at + 4:]
    kinds = ("name", "reference", "code", "date")
    left = [e for e in nlp.entities(before, kinds) if len(before[e.end:].split()) <= 1]
    right = [e for e in nlp.entities(after, kinds) if len(after[:e.start].split()) <= 3]
    if not left or not right:
        return []
    return [_trim(left[-1].text), _trim(right[0].text)]


def _trim(text: str) -> str:
    text = re.sub(r"^(the|a|an)\s+", "", text.strip(" ,\"'“”"), flags=re.I)
    return text.strip(" ,\"'“”")


def _named(nlp: TextToolkit, text: str) -> bool:
    return bool(nlp.entities(text, ("name", "reference", "code", "date")))


_RELATIVE = re.compile(r"\b(where|who|whom|whose|that|which|when)\b", re.I)


def asked_attribute(nlp: TextToolkit, question: str, entities: list[str]) -> str:
    """The question's head clause in content words, less what it names: the relation the last hop
    must state ("What is the average snowfall in the city where X was formed?" -> "average snowfall city")."""
    head = question
    for m in _RELATIVE.finditer(question):
        if len(question[:m.start()].split()) >= 2:
            head = question[:m.start()]
            break
    named = {w.lower() for e in entities for w in e.split()}
    words = [w for w in nlp.words(head)
             if w.lower() not in named and w.lower() not in _ASK_WORDS and not nlp.is_stopword(w)]
    return " ".join(words[:6])
