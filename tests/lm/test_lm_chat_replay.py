"""ChatModel driven by autogen's ReplayChatCompletionClient (scripted replies, no HTTP)."""

from __future__ import annotations

import asyncio

import pytest
from autogen_core.models import ModelFamily
from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.lm.chat import ChatModel
from agents.lm.errors import ModelOutputError


def replay_model(replies: list[str], on_bad_output="extractive", **info) -> tuple[ChatModel, ReplayChatCompletionClient]:
    model_info = {"vision": False, "function_calling": False, "json_output": True,
                  "family": ModelFamily.UNKNOWN, "structured_output": True, **info}
    client = ReplayChatCompletionClient(replies, model_info=model_info)
    return ChatModel(client, model="replay", on_bad_output=on_bad_output), client


def test_valid_output(step, question):
    model, client = replay_model(['{"answer": "Maria Okafor", "citations": [1]}'])

    out = asyncio.run(model.run(step, question))

    assert out == step.Output(answer="Maria Okafor", citations=[1])
    (call,) = client.create_calls
    assert call["extra_create_args"]["response_format"]["type"] == "json_schema"
    assert model.ledger.records[0].model == "replay" and not model.ledger.records[0].repaired


def test_prose_fences_and_think_blocks_are_stripped(step, question):
    reply = ('<think>The passages say [1] is relevant.</think>\nBased on passage [1]:\n'
             '```json\n{"answer": "Maria Okafor", "citations": [1]}\n```\nHope this helps!')
    model, _ = replay_model([reply])

    assert asyncio.run(model.run(step, question)).answer == "Maria Okafor"


def test_junk_then_repair(step, question):
    model, client = replay_model(["Sure! Maria Okafor led it.", '{"answer": "Maria Okafor"}'])

    assert asyncio.run(model.run(step, question)).answer == "Maria Okafor"
    repair_messages = client.create_calls[1]["messages"]
    assert repair_messages[2].content == "Sure! Maria Okafor led it."
    assert "no JSON object" in repair_messages[3].content
    assert model.ledger.records[0].repaired and model.ledger.records[0].attempts == 2


def test_schema_mismatch_then_repair_names_the_field(step, question):
    model, client = replay_model(['{"reply": "Maria"}', '{"answer": "Maria Okafor"}'])

    asyncio.run(model.run(step, question))
    assert "answer: Field required" in client.create_calls[1]["messages"][3].content


def test_junk_twice_is_a_typed_error_when_asked_to_fail(step, question):
    model, _ = replay_model(["no idea", '{"answer": ["not", "a", "string"]}'], on_bad_output="fail")

    with pytest.raises(ModelOutputError) as err:
        asyncio.run(model.run(step, question))
    assert err.value.step == "test.answer" and err.value.model == "replay"
    assert "answer" in err.value.problem and "--role-llm conv_simulator=" in str(err.value)
    record = model.ledger.records[0]
    assert not record.ok and "test.answer" in record.error


def test_a_model_without_json_mode_gets_plain_text_requests(step, question):
    model, client = replay_model(['{"answer": "x"}'], json_output=False, structured_output=False)

    asyncio.run(model.run(step, question))
    assert model.output_mode == "text"
    assert "response_format" not in client.create_calls[0]["extra_create_args"]


def test_wrong_input_type_is_refused(step):
    model, _ = replay_model([])
    with pytest.raises(TypeError, match="takes Question"):
        asyncio.run(model.run(step, step.Output(answer="x")))
