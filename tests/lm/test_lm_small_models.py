"""What small local models really write: lenient parsing, the citation check, and the per-call
fallback to the step's extractive implementation (with the server faked at the HTTP layer)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from autogen_ext.models.openai import OpenAIChatCompletionClient
from pydantic import BaseModel

from agents.lm.backoff import RetryPolicy
from agents.lm.chat import ChatModel
from agents.lm.errors import EndpointUnavailableError, ModelOutputError
from agents.lm.grounding import citation_problem, cited_numbers
from agents.lm.output import OutputInvalid, extract_json, parse_output
from agents.lm.steps import Step
from agents.lm.usage import UsageLedger
from agents.multihop.chain_steps import FollowUpQuery, IntermediateAnswer
from agents.storm.steps_research import AnswerQuestion

# Replies SmolLM2-135M-Instruct gave through llama.cpp's server (issue #15), and close kin.
EXPERT_REPLY = ('{ "answer": "The answer, each sentence followed by the [n] of its source(s), is: [2]\n'
                'Flood damage is covered after 14 days [3]"}')
CHAIN_REPLY = '{ "query": "Harborline flood rider waiting period (10 minutes) } { answer: 14 days from purchase }'


@pytest.mark.parametrize("text, expected", [
    (EXPERT_REPLY, {"answer": "The answer, each sentence followed by the [n] of its source(s), is: [2]\n"
                              "Flood damage is covered after 14 days [3]"}),
    ('{"answer": "a [2]\nb [3]"}', {"answer": "a [2]\nb [3]"}),  # a raw newline in a string
    ('{"answer": "a", "citations": [1, 2,],}', {"answer": "a", "citations": [1, 2]}),  # trailing commas
    ("{'answer': 'a', 'citations': [1]}", {"answer": "a", "citations": [1]}),  # single quotes
    ('{answer: "a", citations: [1]}', {"answer": "a", "citations": [1]}),  # unquoted keys
    ('As [1] says: {"answer": "a",} Hope this helps [2].', {"answer": "a"}),  # prose around, "[n]" before
    ('```json\n{"answer": "a\tb"}\n```', {"answer": "a\tb"}),
])
def test_lenient_parsing_of_real_replies(text, expected):
    assert extract_json(text) == expected


def test_several_objects_where_one_was_asked_for():
    # the first object that fits the step's schema wins
    assert parse_output(FollowUpQuery, CHAIN_REPLY).query == "Harborline flood rider waiting period (10 minutes)"
    assert parse_output(IntermediateAnswer, '{"note": "x"} {"answer": "14 days"}').answer == "14 days"
    # one object split in two: their merge fits
    assert parse_output(TwoFields, '{"query": "flood rider"}\n{"answer": "14 days"}').model_dump() == {
        "query": "flood rider", "answer": "14 days"}


class _Pair(BaseModel):
    query: str
    answer: str


class TwoFields(Step):
    name, role = "test.two_fields", "plan"
    Input = Output = _Pair
    instructions = "x"


def test_a_complete_reply_with_raw_newlines_is_not_taken_for_a_cut_one():
    assert parse_output(IntermediateAnswer, '{"answer": "14 days\nfrom purchase"}', "length").answer == \
        "14 days\nfrom purchase"


def test_lenient_parsing_still_refuses_what_is_not_there():
    with pytest.raises(OutputInvalid, match="no JSON object"):
        parse_output(IntermediateAnswer, "I think it is 14 days.")
    with pytest.raises(OutputInvalid, match="cut off"):
        parse_output(IntermediateAnswer, '{"answer": "14 da', "length")
    with pytest.raises(OutputInvalid, match="answer: Field required"):
        parse_output(IntermediateAnswer, "{'reply': 'x',}")


def test_citation_check():
    assert cited_numbers("a [2] b [3, 1] c [2]") == [2, 3, 1]
    assert citation_problem("Covered [2].", [1, 2]) is None
    assert citation_problem("Covered.", [1, 2], also_cited=[1]) is None
    assert citation_problem("", [1, 2]) is None
    assert "cites no source: end every sentence with the number" in citation_problem("Covered for 14 days.", [1, 2])
    assert "numbers 7 name no source" in citation_problem("Covered [7].", [1, 2])
    assert "[" not in citation_problem("Covered.", [1, 2])  # nothing a model could copy to pass


# --- the chat model, over autogen's OpenAI client, server faked at the HTTP layer -------------

def completion(content: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": "smollm2",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 12, "total_tokens": 92}})


class Server:
    def __init__(self, *replies):
        self.replies = list(replies)
        self.bodies: list[dict] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        item = self.replies.pop(0)
        if isinstance(item, Exception):
            raise item
        return completion(item)


def model_on(server: Server, **kw) -> ChatModel:
    client = OpenAIChatCompletionClient(model="smollm2", api_key="x", base_url="http://llm.test/v1", max_retries=0,
                                        http_client=httpx.AsyncClient(transport=httpx.MockTransport(server.handle)),
                                        model_info={"vision": False, "function_calling": False, "json_output": True,
                                                    "family": "unknown", "structured_output": False})
    return ChatModel(client, model="smollm2", endpoint="http://llm.test/v1", ledger=UsageLedger(),
                     retry=RetryPolicy(max_retries=0), **kw)


def expert_input():
    from agents.storm.steps_research import AnswerInput, NumberedSource

    return AnswerInput(topic="Harborline Mutual flood coverage", question="How long is the waiting period?",
                       sources=[NumberedSource(n=1, title="Flood rider FR-12",
                                               text="The flood rider has a waiting period of 14 days."),
                                NumberedSource(n=2, title="Bulletin 2022-11",
                                               text="Harborline Mutual flood coverage starts 14 days after "
                                                    "purchase, unless the policy renews.")])


def test_a_raw_newline_reply_is_used_without_repair():
    server = Server(EXPERT_REPLY.replace("[3]", "[1]"))
    model = model_on(server)

    out = asyncio.run(model.run(AnswerQuestion, expert_input()))

    assert out.answer.endswith("after 14 days [1]") and len(server.bodies) == 1
    assert model.ledger.records[0].fallback is None and not model.ledger.records[0].repaired


def test_unusable_twice_falls_back_to_the_steps_extractive_output_and_says_why(tmp_path):
    server = Server("I am not sure.", "Still not sure, sorry.")
    model = model_on(server)
    inp = expert_input()

    out = asyncio.run(model.run(AnswerQuestion, inp))

    from agents.lm.nlp import TextToolkit
    assert out == AnswerQuestion.extract(inp, TextToolkit())  # the step's own offline answer
    assert len(server.bodies) == 2  # the reply, then the one repair turn
    (record,) = model.ledger.records
    assert record.ok and record.repaired and record.fallback == "extractive"
    assert record.fallback_reason == "the reply contained no JSON object"
    line = json.loads(model.ledger.write_jsonl(tmp_path / "llm_call_history.jsonl").read_text().splitlines()[0])
    assert line["fallback"] == "extractive" and line["fallback_reason"] == "the reply contained no JSON object"
    assert model.ledger.fallback_summary() == (
        "1 of 1 calls fell back to the extractive model; by step: storm.expert.answer 1")
    assert "1 fell back" in model.ledger.summary().lines()[-1]


def test_an_uncited_answer_is_repaired_once_then_replaced_never_returned():
    uncited = '{"answer": "The waiting period is 14 days."}'
    server = Server(uncited, uncited)
    model = model_on(server)

    out = asyncio.run(model.run(AnswerQuestion, expert_input()))

    assert "cites no source" in server.bodies[1]["messages"][-1]["content"]
    assert out.answer != "The waiting period is 14 days." and set(cited_numbers(out.answer)) <= {1, 2}
    assert cited_numbers(out.answer)
    assert "cites no source" in model.ledger.records[0].fallback_reason


def test_a_repair_that_copies_the_complaint_is_not_an_answer():
    # SmolLM2 answered the repair turn of a section with the complaint itself (issue #15)
    complaint = ("The answer cites no source: end every sentence with the number of the source it comes "
                 "from in square brackets; the sources are numbered 1 to 2 [1], [2]")
    server = Server('{"answer": "The waiting period is 14 days."}', json.dumps({"answer": complaint}))
    model = model_on(server)

    out = asyncio.run(model.run(AnswerQuestion, expert_input()))

    assert "square brackets" not in out.answer
    assert model.ledger.records[0].fallback_reason.startswith("the reply repeats the complaint")


def test_a_repaired_citation_is_kept():
    server = Server('{"answer": "The waiting period is 14 days."}', '{"answer": "It is 14 days [1]."}')
    model = model_on(server)

    assert asyncio.run(model.run(AnswerQuestion, expert_input())).answer == "It is 14 days [1]."
    assert model.ledger.records[0].fallback is None and model.ledger.fallback_summary().startswith("0 of 1 calls")


def test_on_bad_output_fail_keeps_the_error():
    server = Server("I am not sure.", "Still not sure.")
    model = model_on(server, on_bad_output="fail")

    with pytest.raises(ModelOutputError, match="storm.expert.answer"):
        asyncio.run(model.run(AnswerQuestion, expert_input()))
    assert not model.ledger.records[0].ok and model.ledger.records[0].fallback is None


def test_a_down_endpoint_is_never_papered_over():
    server = Server(httpx.ConnectError("connection refused"))
    model = model_on(server)

    with pytest.raises(EndpointUnavailableError):
        asyncio.run(model.run(AnswerQuestion, expert_input()))
    assert model.ledger.fallback_summary() == "0 of 1 calls fell back to the extractive model"


def test_a_step_without_offline_implementation_still_fails(step, question):
    from agents.lm.steps import Step

    class ChatOnly(Step):
        name, role = "test.chat_only", "outline"
        Input, Output = type(question), step.Output
        instructions = "x"

    model = model_on(Server("no", "no"))
    with pytest.raises(ModelOutputError, match="test.chat_only"):
        asyncio.run(model.run(ChatOnly, question))


def test_extractive_calls_by_choice_are_not_counted():
    from agents.lm.usage import UsageRecord

    ledger = UsageLedger(records=[UsageRecord(step="a", role="s", model="extractive")])
    assert ledger.fallback_summary() is None


def test_an_outline_that_echoes_the_schema_is_not_an_outline():
    # SmolLM2's refined outline for "Harborline Mutual flood coverage" (issue #15): two schema names
    from agents.storm.steps_outline import RefineOutline

    reply = '{"sections": [{"heading": "OutlineSection", "subsections": []}, {"heading": "Heading"}]}'
    with pytest.raises(OutputInvalid, match="name from the JSON schema"):
        parse_output(RefineOutline, reply, "stop", inp=object())
    fine = parse_output(RefineOutline, '{"sections": [{"heading": "Waiting period"}]}', "stop", inp=object())
    assert fine.headings() == ["Waiting period"]
