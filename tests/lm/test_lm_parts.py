"""The small parts under ChatModel: output parsing, backoff, the cache, the usage ledger."""

from __future__ import annotations

import pickle
import random
import threading
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from agents.lm.backoff import RetryPolicy, retry_after_seconds
from agents.lm.cache import CachedCompletion, CompletionCache, request_key
from agents.lm.output import OutputInvalid, extract_json, parse_output, response_format
from agents.lm.usage import KNOWN_PRICES, ModelPrice, UsageLedger, UsageRecord, cost_usd, price_for


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('Sure, see [1] and [2]: {"a": 1} done', {"a": 1}),
    ('```json\n{"a": {"b": [1, 2]}}\n```', {"a": {"b": [1, 2]}}),
    ('prose {not json} then {"a": 2}', {"a": 2}),
    ("no json here", None),
    ('{"a": 1', {"a": 1}),  # mended; parse_output still calls a reply that ends like this cut off
])
def test_extract_json(text, expected):
    assert extract_json(text) == expected


def test_parse_output_says_what_is_wrong(step):
    assert parse_output(step, '<think>hmm {"x": 1}</think>{"answer": "a"}').answer == "a"
    for text, finish, problem in [
        ("", "stop", "empty"),
        ("   \n", "stop", "empty"),
        ('{"answer": "Mar', "length", "cut off"),
        ('{"sections": [{"answer": "a"}, {"answer": "b', "length", "cut off"),  # an inner object parses
        ('{"answer": 3}', "stop", "answer: Input should be a valid string"),
        ("I don't know.", "stop", "no JSON object"),
    ]:
        with pytest.raises(OutputInvalid, match=problem):
            parse_output(step, text, finish)


def test_response_formats(step):
    assert response_format(step, "json_schema")["json_schema"]["schema"] == step.output_schema()
    assert response_format(step, "json_object") == {"type": "json_object", "schema": step.output_schema()}
    assert response_format(step, "text") is None


def test_retry_after_forms():
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_after_seconds({"Retry-After": later}) <= 30
    assert retry_after_seconds({}) is None and retry_after_seconds({"Retry-After": "soon"}) is None


def test_backoff_grows_with_jitter_and_is_capped():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    rng = random.Random(0)
    for retry, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (8, 5.0)]:
        assert ceiling / 2 <= policy.delay(retry, None, rng) <= ceiling
    assert policy.delay(0, 3.0) == 3.0 and policy.delay(0, 600.0) == 5.0


def test_cache_key_is_canonical_and_entries_survive_concurrent_writers(tmp_path):
    a = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "create_args": {"t": 0, "n": 1}}
    b = {"create_args": {"n": 1, "t": 0}, "messages": [{"role": "user", "content": "hi"}], "model": "m"}
    assert request_key(a) == request_key(b) != request_key({**a, "model": "other"})

    cache = CompletionCache(tmp_path)
    key = request_key(a)
    assert cache.get(key) is None

    def write(i: int) -> None:
        for _ in range(20):
            cache.put(CachedCompletion(key=key, model="m", text=f"reply {i}", request=a))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.get(key).text.startswith("reply ")
    assert len(cache) == 1 and not list(tmp_path.rglob(".tmp-*"))


def test_a_corrupt_cache_entry_is_a_miss(tmp_path):
    cache = CompletionCache(tmp_path)
    key = request_key({"x": 1})
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"key": "trunc')
    assert cache.get(key) is None


def test_prices():
    assert price_for("gpt-4o-mini-2024-07-18", KNOWN_PRICES) == KNOWN_PRICES["gpt-4o-mini"]
    assert price_for("gpt-4o-2024-08-06", KNOWN_PRICES) == KNOWN_PRICES["gpt-4o"]
    assert price_for("openai:gpt-4.1-mini", KNOWN_PRICES) == KNOWN_PRICES["gpt-4.1-mini"]
    assert cost_usd("qwen2.5-7b", 1000, 1000, KNOWN_PRICES) == 0.0
    mine = {"qwen2.5-7b": ModelPrice(input_per_1m=1.0, output_per_1m=2.0)}
    assert cost_usd("qwen2.5-7b", 1_000_000, 500_000, mine) == pytest.approx(2.0)


def test_ledgers_merge_serialise_and_summarise(tmp_path):
    actor_a, actor_b = UsageLedger(), UsageLedger()
    actor_a.record(UsageRecord(step="s.outline", role="outline", model="gpt-4o", prompt_tokens=10,
                               completion_tokens=5, cost_usd=0.01))
    actor_b.record(UsageRecord(step="s.write", role="article", model="gpt-4o-mini", prompt_tokens=7,
                               cached=True))
    actor_b.record(UsageRecord(step="s.write", role="article", model="extractive", ok=False, error="boom"))

    driver = UsageLedger.merged([actor_a, pickle.loads(pickle.dumps(actor_b))])
    driver.merge(actor_b)  # fetched twice: counted once
    assert len(driver.records) == 3
    assert UsageLedger.model_validate_json(driver.model_dump_json()) == driver

    summary = driver.summary()
    assert summary.total.calls == 3 and summary.total.prompt_tokens == 17
    assert summary.by_role["article"].cached_calls == 1 and summary.by_role["article"].failed_calls == 1
    assert summary.by_model["gpt-4o"].cost_usd == 0.01
    assert summary.lines()[-1].startswith("total: 3 calls")

    path = driver.write_jsonl(tmp_path / "topic" / "llm_call_history.jsonl")
    lines = path.read_text().splitlines()
    assert [UsageRecord.model_validate_json(x) for x in lines] == driver.history()
