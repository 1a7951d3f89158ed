"""Verification: a short answer that none of its cited passages contains is not returned.

Offline "contains" is the same value, normalised ("$300" is stated by "three
hundred dollars", agents/answer/values), else normalized containment (SQuAD
normalization: case, punctuation, articles); a yes/no answer is verified by its decision's passages
existing (yes and no are never spans). A chat model runs the same step as
entailment: does some cited passage state the answer?
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from agents.answer.values import states, values_in
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.instructions import numbered_source
from agents.multihop.metrics import normalize_answer
from retrieval.documents import PassageText


class VerifyInput(BaseModel):
    question: str
    short_answer: str
    passages: list[PassageText] = Field(description="the passages cited for the answer")
    yes_no: bool = False


class VerifyOutput(BaseModel):
    supported: bool
    passages: list[int] = Field(default_factory=list, description="the numbers of the passages that state it, "
                                "as the prompt numbers them (the first is 0)")


class VerifyAnswer(Step[VerifyInput, VerifyOutput]):
    name: ClassVar[str] = "answer.verify"
    role: ClassVar[str] = "answer"
    Input = VerifyInput
    Output = VerifyOutput
    instructions: ClassVar[str] = (
        "Does any of the numbered passages state that the short answer answers the question? Reply "
        "supported=true with the numbers of those passages as shown in brackets (the first passage is [0]), "
        "or supported=false. Judge only from the passages."
    )

    @classmethod
    def render_input(cls, inp: VerifyInput) -> str:
        # numbered as `passages` counts them, from 0: the number a model gives is the index read back
        shown = "\n\n".join(numbered_source(i, p.title, p.text) for i, p in enumerate(inp.passages))
        kind = " (a yes/no question)" if inp.yes_no else ""
        return (f"Question{kind}: {inp.question}\nShort answer: {inp.short_answer}\n\n"
                f"Passages, numbered from 0:\n{shown or '(none)'}")

    @classmethod
    def check(cls, inp: VerifyInput, out: VerifyOutput) -> str | None:
        wrong = [n for n in out.passages if not 0 <= n < len(inp.passages)]
        return (f"passage numbers {wrong} name no passage: the passages are numbered 0 to {len(inp.passages) - 1}"
                if wrong else None)

    @classmethod
    def extract(cls, inp: VerifyInput, nlp: TextToolkit) -> VerifyOutput:
        return contained(inp)


def same_value_in(passages: list[PassageText], short_answer: str) -> VerifyOutput:
    """The passages stating the value(s) of a value answer, compared normalised (agents/answer/values)."""
    ids = [i for i, p in enumerate(passages) if states(f"{p.title} {p.text}", short_answer)]
    return VerifyOutput(supported=bool(ids), passages=ids)


def contained(inp: VerifyInput) -> VerifyOutput:
    if not inp.yes_no and values_in(inp.short_answer):
        by_value = same_value_in(inp.passages, inp.short_answer)
        if by_value.supported:
            return by_value
    if inp.yes_no:
        ids = list(range(len(inp.passages)))
        return VerifyOutput(supported=bool(ids) and inp.short_answer in ("yes", "no"), passages=ids)
    key = normalize_answer(inp.short_answer)
    ids = [i for i, p in enumerate(inp.passages) if key and key in normalize_answer(f"{p.title} {p.text}")]
    return VerifyOutput(supported=bool(ids), passages=ids)
