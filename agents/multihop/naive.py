"""NaiveRAG: one retrieval, one answer. The baseline every multi-hop strategy is measured against."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import LanguageModel, Step
from agents.lm.text.instructions import numbered_source
from agents.multihop.chain_steps import CitedAnswer, guard_indices, uncited
from agents.multihop.deep_steps import extractive_report
from agents.multihop.short_answer import short_answer
from agents.multihop.trace import AgentAnswer, Hop, cite
from retrieval.documents import PassageText
from retrieval.query import Retriever

ANSWER_SENTENCES = 3


class NaiveAnswerInput(BaseModel):
    question: str
    passages: list[PassageText] = Field(description="numbered from 1")


class NaiveAnswer(Step[NaiveAnswerInput, CitedAnswer]):
    name: ClassVar[str] = "multihop.naive.answer"
    role: ClassVar[str] = "answer"
    Input = NaiveAnswerInput
    Output = CitedAnswer
    instructions: ClassVar[str] = (
        "Answer the question from the numbered passages only, citing the passages you use as [n]. "
        "If they do not contain the answer, say so. Be concise."
    )

    @classmethod
    def render_input(cls, inp: NaiveAnswerInput) -> str:
        numbered = "\n\n".join(numbered_source(i, p.title, p.text) for i, p in enumerate(inp.passages, start=1))
        return f"## Passages\n{numbered}\n\n## Question\n{inp.question}"

    @classmethod
    def check(cls, inp: NaiveAnswerInput, out: CitedAnswer) -> str | None:
        return uncited(out, len(inp.passages))

    @classmethod
    def extract(cls, inp: NaiveAnswerInput, nlp: TextToolkit) -> CitedAnswer:
        return extractive_report(nlp, inp.question, [], inp.passages, ANSWER_SENTENCES)


class NaiveSettings(BaseModel):
    k: int = Field(10, ge=1, description="passages retrieved")


class NaiveRAG:
    name = "naive"
    description = "NaiveRAG: one search, one answer; simple questions a single passage answers."

    def __init__(self, lm: LanguageModel, retriever: Retriever, settings: NaiveSettings | None = None):
        self.lm = lm
        self.retriever = retriever
        self.settings = settings or NaiveSettings()

    async def answer(self, question: str) -> AgentAnswer:
        passages = [h.passage for h in await self.retriever.search(question, k=self.settings.k)]
        out = await self.lm.run(NaiveAnswer, NaiveAnswerInput(
            question=question, passages=[PassageText.of(p) for p in passages]))
        # the numbers in the answer's text count too: a model may cite there and leave the list empty
        cited = out.numbers()
        used = guard_indices([n - 1 for n in cited], len(passages))
        hop = Hop(query=question, answer=out.answer, passages=passages, supporting=used)
        return AgentAnswer(question=question, strategy="naive", answer=out.answer,
                           short_answer=await short_answer(self.lm, question, out.answer),
                           hops=[hop], citations=cite(passages, cited), retrieved=passages)
