"""`ShortAnswer`: the span of a long answer that names just what the question asks for.

Extractive form: the question's answer type from the answer layer's analysis
(`agents.answer.analysis.asked_type`: "when" → a date, "how many" → a number,
"who"/"where"/"which X" → a name), then the entity of that
type in the answer that the question does not already name, from the first
sentence that has one (answers lead with their conclusion), nearest a question word.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, Field

from agents.answer.analysis import TYPE_KINDS, asked_type
from agents.lm.nlp import TextToolkit
from agents.lm.steps import LanguageModel, Step
from agents.lm.text.entities import EntityKind
from agents.multihop import evidence
from agents.multihop.trace import found_nothing

_CITATION = re.compile(r"\s*\[\d+(?:,\s*\d+)*\]")
_DEFAULT: tuple[EntityKind, ...] = ("name", "reference", "code")


def answer_kinds(question: str) -> tuple[EntityKind, ...]:
    """The entity kinds that can answer `question`, by the answer layer's typing (`asked_type`):
    a date for "when", a quantity or number for "how many", a name for "who" / "where" / "which X"."""
    return TYPE_KINDS[asked_type(question)[0]] or _DEFAULT


class ShortAnswerInput(BaseModel):
    question: str
    answer: str
    known: list[str] = Field(default_factory=list, description="earlier queries: what they name is not the answer")


class ShortAnswerOutput(BaseModel):
    short_answer: str = Field(description="the shortest span of the answer that answers the question, or ''")


class ShortAnswer(Step[ShortAnswerInput, ShortAnswerOutput]):
    name: ClassVar[str] = "multihop.short_answer"
    role: ClassVar[str] = "answer"
    Input = ShortAnswerInput
    Output = ShortAnswerOutput
    instructions: ClassVar[str] = (
        "Given a question and an answer, reply with the shortest span of the answer that answers the "
        "question (a name, a date, a number, a few words), copied from the answer. Reply with an empty "
        "string if the answer does not answer the question. Things the earlier queries name are steps "
        "towards the answer, not the answer."
    )

    @classmethod
    def extract(cls, inp: ShortAnswerInput, nlp: TextToolkit) -> ShortAnswerOutput:
        return ShortAnswerOutput(short_answer=answer_span(nlp, inp.question, inp.answer, inp.known) or "")


def answer_span(nlp: TextToolkit, question: str, text: str, known: list[str] = (),
                kinds: tuple[EntityKind, ...] | None = None) -> str | None:
    """The entity of the question's answer type (or of `kinds`) in `text` that neither the question nor
    `known` names, nearest a word of them, from the first sentence that has one."""
    text = _CITATION.sub("", text)
    kinds = kinds or answer_kinds(question)
    asked = evidence.terms(nlp, " ".join([question, *known]))
    for sentence in nlp.sentences(text):
        words = [(m.start(), m.end(), nlp.stem(m.group().lower())) for m in re.finditer(r"\w+", sentence)]
        best: tuple[float, int, str] | None = None
        for e in evidence.entity_choices(nlp, sentence, kinds, asked):
            score = evidence.closeness(words, e.start, e.end, asked)
            if best is None or score > best[0]:
                best = (score, e.start, e.text)
        if best is not None:
            return best[2]
    return None


async def short_answer(lm: LanguageModel, question: str, answer: str, known: list[str] | None = None) -> str | None:
    """The short span, or None when the answer found nothing or has no such span."""
    if found_nothing(answer):
        return None
    out = await lm.run(ShortAnswer, ShortAnswerInput(question=question, answer=answer, known=known or []))
    return out.short_answer.strip() or None
