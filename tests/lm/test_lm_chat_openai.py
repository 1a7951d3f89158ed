"""ChatModel over each client it sends requests with (`DirectChatClient`, raystorm's default, and
autogen's OpenAI client over the openai SDK), with the server faked by httpx.MockTransport: every
test runs on both, so the two behave the same to the model above them."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from autogen_ext.models.openai import OpenAIChatCompletionClient

from agents.lm.backoff import RetryPolicy
from agents.lm.cache import CompletionCache
from agents.lm.chat import ChatModel
from agents.lm.direct_client import DirectChatClient
from agents.lm.errors import EndpointUnavailableError, ModelOutputError, RequestRejectedError
from agents.lm.models import direct_client, generic_model_info, openai_client
from agents.lm.output import system_prompt
from agents.lm.settings import LLMSettings, ModelSpec
from agents.lm.usage import UsageLedger

GOOD = '{"answer": "Maria Okafor", "citations": [1]}'
LLAMA_CPP_REFUSAL = {"error": {"code": 500, "type": "server_error",
                               "message": 'response_format type must be one of "text" or "json_object", '
                                          "but got: json_schema"}}


_client = {"kind": "direct"}


@pytest.fixture(autouse=True, params=["direct", "autogen"])
def client_kind(request):
    _client["kind"] = request.param
    return request.param


def make_client(spec: ModelSpec, server):
    build = direct_client if _client["kind"] == "direct" else openai_client
    return build(spec, LLMSettings(), http_client=server.client())


def openai_model(server, *, sleeps=None, retry=None, cache=None, ledger=None, **kw) -> ChatModel:
    if _client["kind"] == "direct":
        client = DirectChatClient(model="gpt-4o-mini", base_url="https://api.openai.com/v1", api_key="sk-test",
                                  model_info=generic_model_info(LLMSettings()), http_client=server.client())
    else:
        client = OpenAIChatCompletionClient(model="gpt-4o-mini", api_key="sk-test", max_retries=0,
                                            http_client=server.client())
    return ChatModel(client, model="gpt-4o-mini", endpoint="https://api.openai.com/v1",
                     create_args={"temperature": 0.0, "max_tokens": 256},
                     retry=retry or RetryPolicy(max_retries=2, base_delay_s=0.01),
                     cache=cache, ledger=ledger, sleep=sleeps or asyncio.sleep, **kw)


def run(model, step, inp):
    return asyncio.run(model.run(step, inp))


def test_request_shape_and_usage(fake_openai, step, question):
    server = fake_openai()
    server.script = [server.completion(GOOD, prompt_tokens=1000, completion_tokens=200)]
    model = openai_model(server)

    out = run(model, step, question)

    assert out == step.Output(answer="Maria Okafor", citations=[1])
    (request,) = server.requests
    assert request.url.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = server.bodies[0]
    assert body["model"] == "gpt-4o-mini"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 256
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == system_prompt(step)
    assert step.instructions in body["messages"][0]["content"]
    assert json.loads(body["messages"][1]["content"]) == question.model_dump()
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "test_answer"
    assert fmt["json_schema"]["schema"] == step.output_schema()

    (record,) = model.ledger.history()
    assert (record.step, record.role, record.model) == ("test.answer", "conv_simulator", "gpt-4o-mini")
    assert (record.prompt_tokens, record.completion_tokens) == (1000, 200)
    assert record.cost_usd == pytest.approx((1000 * 0.15 + 200 * 0.60) / 1e6)
    assert record.attempts == 1 and not record.cached and not record.repaired and record.ok
    assert model.ledger.summary().by_role["conv_simulator"].prompt_tokens == 1000


def test_429_with_retry_after_is_honoured(fake_openai, step, question, sleeps):
    server = fake_openai()
    server.script = [
        httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "Rate limit reached"}}),
        server.completion(GOOD),
    ]
    model = openai_model(server, sleeps=sleeps)

    assert run(model, step, question).answer == "Maria Okafor"
    assert len(server.requests) == 2
    assert sleeps.waits == [7.0]
    assert model.ledger.records[0].attempts == 2


def test_500_without_format_complaint_is_retried_with_backoff(fake_openai, step, question, sleeps):
    server = fake_openai()
    server.script = [httpx.Response(503, json={"error": {"message": "overloaded"}}),
                     httpx.ConnectError("connection refused"),
                     server.completion(GOOD)]
    model = openai_model(server, sleeps=sleeps, retry=RetryPolicy(max_retries=3, base_delay_s=1.0))

    assert run(model, step, question).answer == "Maria Okafor"
    assert len(sleeps.waits) == 2
    assert 0.5 <= sleeps.waits[0] <= 1.0 and 1.0 <= sleeps.waits[1] <= 2.0  # exponential, jittered
    assert all(b["response_format"]["type"] == "json_schema" for b in server.bodies)


def test_llama_cpp_refusing_json_schema_falls_back_to_json_object_once(fake_openai, step, question):
    server = fake_openai(model="gemma-3-270m")
    server.script = [httpx.Response(500, json=LLAMA_CPP_REFUSAL), server.completion(GOOD), server.completion(GOOD)]
    spec = ModelSpec(provider="openai_compatible", model="gemma-3-270m", base_url="http://llama.local:8080/v1")
    model = ChatModel(make_client(spec, server), model=spec.model, endpoint=spec.base_url)

    assert run(model, step, question).answer == "Maria Okafor"
    assert run(model, step, question).answer == "Maria Okafor"  # the same request again: no cache here

    assert str(server.requests[0].url) == "http://llama.local:8080/v1/chat/completions"
    formats = [b["response_format"] for b in server.bodies]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    assert formats[1]["schema"] == step.output_schema()
    assert model.output_mode == "json_object"
    assert [r.output_mode for r in model.ledger.records] == ["json_object", "json_object"]


def test_truncated_json_gets_one_repair(fake_openai, step, question):
    server = fake_openai()
    server.script = [server.completion('{"answer": "Maria Oka', finish_reason="length", completion_tokens=256),
                     server.completion(GOOD, prompt_tokens=150, completion_tokens=15)]
    model = openai_model(server)

    assert run(model, step, question).answer == "Maria Okafor"
    repair = server.bodies[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"] == '{"answer": "Maria Oka'
    assert "cut off" in repair[3]["content"]
    record = model.ledger.records[0]
    assert record.repaired and record.attempts == 2
    assert (record.prompt_tokens, record.completion_tokens) == (250, 271)


def test_empty_content_gets_one_repair(fake_openai, step, question):
    server = fake_openai()
    server.script = [server.completion(""), server.completion(f"Here it is:\n```json\n{GOOD}\n```")]
    model = openai_model(server)

    assert run(model, step, question).citations == [1]
    assert "empty" in server.bodies[1]["messages"][3]["content"]


def test_invalid_twice_is_a_typed_error_naming_step_and_model(fake_openai, step, question, tmp_path):
    server = fake_openai()
    server.script = [server.completion('{"answer": 42}'), server.completion("I cannot answer that.")]
    cache = CompletionCache(tmp_path / "cache")
    model = openai_model(server, cache=cache, on_bad_output="fail")

    with pytest.raises(ModelOutputError) as err:
        run(model, step, question)
    message = str(err.value)
    assert "test.answer" in message and "gpt-4o-mini" in message and "no JSON object" in message
    assert len(cache) == 0  # a failed chain is not replayed on the next run
    assert not model.ledger.records[0].ok


def test_timeouts_retry_then_raise_naming_the_endpoint(fake_openai, step, question, sleeps):
    server = fake_openai()
    server.script = [httpx.ReadTimeout("read timed out")] * 3
    model = openai_model(server, sleeps=sleeps, retry=RetryPolicy(max_retries=2, base_delay_s=0.01))

    with pytest.raises(EndpointUnavailableError) as err:
        run(model, step, question)
    assert len(server.requests) == 3 and len(sleeps.waits) == 2
    assert "https://api.openai.com/v1" in str(err.value) and "timed out" in str(err.value)
    assert err.value.attempts == 3
    record = model.ledger.records[0]
    assert not record.ok and record.attempts == 3


def test_a_slow_server_hits_the_per_call_timeout(fake_openai, step, question, sleeps):
    async def slow(request):
        await asyncio.sleep(5)

    server = fake_openai()
    server.script = [slow, slow]
    model = openai_model(server, sleeps=sleeps, retry=RetryPolicy(max_retries=1, timeout_s=0.05))

    with pytest.raises(EndpointUnavailableError, match="timed out"):
        run(model, step, question)
    assert len(server.requests) == 2


def test_bad_key_is_rejected_without_retrying(fake_openai, step, question, sleeps):
    server = fake_openai()
    server.script = [httpx.Response(401, json={"error": {"message": "Incorrect API key provided"}})]
    model = openai_model(server, sleeps=sleeps)

    with pytest.raises(RequestRejectedError, match="OPENAI_API_KEY"):
        run(model, step, question)
    assert len(server.requests) == 1 and sleeps.waits == []


def test_a_prompt_longer_than_the_context_falls_back_to_the_extractive_step(fake_openai, step, question, sleeps):
    server = fake_openai()
    server.script = [httpx.Response(400, json={"error": {"message": "the request exceeds the available context "
                                                                   "size, try increasing it", "code": 400}})]
    ledger = UsageLedger()
    model = openai_model(server, sleeps=sleeps, ledger=ledger)
    out = run(model, step, question)
    assert out.answer and len(server.requests) == 1 and sleeps.waits == []  # no retry, no error
    (record,) = ledger.records
    assert record.fallback == "extractive" and "does not fit the model's context" in record.fallback_reason


def test_cache_replays_identical_requests_without_http(fake_openai, step, question, tmp_path):
    server = fake_openai()
    server.script = [server.completion(GOOD)]
    ledger = UsageLedger()
    first = openai_model(server, cache=CompletionCache(tmp_path), ledger=ledger)
    assert run(first, step, question).answer == "Maria Okafor"
    assert len(server.requests) == 1

    # a new model, as in a rerun in a new process, over the same directory
    again = openai_model(server, cache=CompletionCache(tmp_path), ledger=ledger)
    assert run(again, step, question).answer == "Maria Okafor"
    assert len(server.requests) == 1  # no request made

    paid, replayed = ledger.history()
    assert not paid.cached and paid.completion_tokens == 20
    assert replayed.cached and replayed.completion_tokens == 0 and replayed.cost_usd == 0
    assert replayed.request_key == paid.request_key

    other = question.model_copy(update={"question": "Where was the trial?"})
    server.script.append(server.completion(GOOD))
    run(again, step, other)
    assert len(server.requests) == 2  # a different request is sent


def test_concurrency_limit_bounds_requests_in_flight(fake_openai, step, question):
    server = fake_openai()
    in_flight = peak = 0

    async def counted(request):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return server.completion(GOOD)

    server.script = [counted] * 6
    model = openai_model(server, concurrency=2)

    async def main():
        return await asyncio.gather(*(model.run(step, question) for _ in range(6)))

    assert len(asyncio.run(main())) == 6
    assert peak == 2
