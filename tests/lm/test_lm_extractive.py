"""ExtractiveModel: a step's own `extract`, recorded in the ledger, deterministic."""

from __future__ import annotations

import asyncio

import pytest

from agents.lm.extractive import ExtractiveModel
from agents.lm.nlp import TextToolkit
from agents.lm.usage import UsageLedger


def test_runs_the_steps_extract_and_records_zero_tokens(step, question):
    ledger = UsageLedger()
    model = ExtractiveModel(TextToolkit(), ledger)

    out = asyncio.run(model.run(step, question))

    assert out == step.Output(answer="Maria Okafor led the trial.", citations=[1])
    (record,) = ledger.records
    assert (record.model, record.step, record.role) == ("extractive", "test.answer", "conv_simulator")
    assert record.prompt_tokens == record.completion_tokens == 0 and record.cost_usd == 0 and record.ok
    assert model.name == "extractive"


def test_is_deterministic(step, question):
    model = ExtractiveModel()

    async def five():
        return await asyncio.gather(*(model.run(step, question) for _ in range(5)))

    outputs = asyncio.run(five())
    assert all(o == outputs[0] for o in outputs)


def test_refuses_an_extract_that_returns_the_wrong_type(step, question):
    class Broken(step):
        name = "test.broken"

        @classmethod
        def extract(cls, inp, nlp):
            return {"answer": "not a model"}

    model = ExtractiveModel()
    with pytest.raises(TypeError, match="test.broken.extract returned dict"):
        asyncio.run(model.run(Broken, question))
    assert not model.ledger.records[0].ok


def test_a_step_without_extract_says_so(step, question):
    from agents.lm.steps import Step

    class ChatOnly(Step):
        name = "test.chat_only"
        role = "polish"
        Input = type(question)
        Output = step.Output
        instructions = "..."

    with pytest.raises(NotImplementedError, match="test.chat_only"):
        asyncio.run(ExtractiveModel().run(ChatOnly, question))
