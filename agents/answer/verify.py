"""Verification: a short answer that none of its cited passages contains is not returned.

Offline "contains" is normalized containment (SQuAD normalization: case,
punctuation, articles); a yes/no answer is verified by its decision's passages
existing (yes and no are never spans). A chat model runs the same step as
entailment: does some cited passage state the answer?
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.multihop.metrics import normalize_answer
from retrieval.documents import PassageText


class VerifyInput(BaseModel):
    question: str
    short_answer: str
    passages: list[PassageText] = Field(description="the passages cited for the answer")
    yes_no: bool = False


class VerifyOutput(BaseModel):
    supported: bool
    passages: list[int] = Field(default_factory=list, description="indices of the passages that state it")


class VerifyAnswer(Step[VerifyInput, VerifyOutput]):
    name: ClassVar[str] = "answer.verify"
    role: ClassVar[str] = "answer"
    Input = VerifyInput
    Output = VerifyOutput
    instructions: ClassVar[str] = (
        "Does any of the numbered passages state that the short answer answers the question? Reply "
        "supported=true with the indices of those passages, or supported=false. Judge only from the passages."
    )

    @classmethod
    def extract(cls, inp: VerifyInput, nlp: TextToolkit) -> VerifyOutput:
        return contained(inp)


def contained(inp: VerifyInput) -> VerifyOutput:
    if inp.yes_no:
        ids = list(range(len(inp.passages)))
        return VerifyOutput(supported=bool(ids) and inp.short_answer in ("yes", "no"), passages=ids)
    key = normalize_answer(inp.short_answer)
    ids = [i for i, p in enumerate(inp.passages) if key and key in normalize_answer(f"{p.title} {p.text}")]
    return VerifyOutput(supported=bool(ids), passages=ids)
