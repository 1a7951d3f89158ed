"""The LLM gateway: cluster-wide endpoint limits, one usage ledger, the shared cache."""

from __future__ import annotations

import asyncio

import pytest
import ray
from cluster_agents import Note, ShoutStep

from actors.calls import call, get
from actors.filing import OUTBOX, gateway_key
from actors.gateway import EndpointGate, EndpointLimits, GatewaySettings, LLMGateway, UsageBook
from actors.models import INJECTED_ENDPOINT, LEASE_LINGER_S, LINGER_PER_CALL, ActorModels, ModelRecipe
from agents.lm.cache import CachedCompletion
from agents.lm.usage import UsageRecord
from retrieval.errors import RaystormError


def test_gate_never_exceeds_its_concurrency():
    gate = EndpointGate("e", EndpointLimits(concurrency=2), lease_timeout_s=60)
    running, peak = 0, 0

    async def one(i: int):
        nonlocal running, peak
        await gate.acquire(f"l{i}")
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        gate.release(f"l{i}")

    async def many():
        await asyncio.gather(*(one(i) for i in range(12)))

    asyncio.run(many())
    assert peak == 2 and gate.stats.peak_in_flight == 2 and gate.stats.granted == 12 and gate.stats.in_flight == 0


def test_gate_takes_back_leases_of_holders_that_died():
    gate = EndpointGate("e", EndpointLimits(concurrency=1), lease_timeout_s=0.2)

    async def scenario():
        await gate.acquire("dead-holder")  # never released
        await asyncio.wait_for(gate.acquire("next"), timeout=5)

    asyncio.run(scenario())
    assert gate.stats.reclaimed == 1 and gate.stats.in_flight == 1


def test_gate_spaces_requests_by_rate():
    gate = EndpointGate("e", EndpointLimits(concurrency=10, requests_per_minute=1200), lease_timeout_s=60)

    async def three():
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i in range(3):
            await gate.acquire(f"l{i}")
        return loop.time() - start

    assert asyncio.run(three()) >= 0.09  # 3 requests at 20/s: the third starts 0.1 s after the first


def test_usage_book_counts_a_record_once_and_keeps_its_origin():
    book = UsageBook()
    a = UsageRecord(step="s", stage="outline", model="m", prompt_tokens=3)
    b = UsageRecord(step="s", stage="article", model="m", completion_tokens=5)
    book.add([a, b], "Expert[0]", "topic-1")
    book.add([a], "Expert[1]", "topic-2")  # a retried filing
    report = book.report([])
    assert report.summary.total.calls == 2
    assert report.by_actor["Expert[0]"].calls == 2 and "Expert[1]" not in report.by_actor
    assert len(book.ledger_for("topic-1").records) == 2 and not book.ledger_for("topic-2").records


def test_gated_models_share_one_limit_and_one_ledger(ray_cluster, tmp_path):
    settings = GatewaySettings(endpoints={INJECTED_ENDPOINT: EndpointLimits(concurrency=2)},
                               cache_dir=str(tmp_path / "cache"))
    gateway = LLMGateway.remote(settings)
    recipe = ModelRecipe(inject_latency_s=0.05)
    # two "actors" (here: two model sets in this process) drawing on the same endpoint
    sets = [ActorModels(recipe, gateway, holder=f"PersonaWriter[{i}]") for i in range(2)]

    async def run_all():
        calls = [s.for_topic(t).run(ShoutStep, Note(text=f"{t} {i}"))
                 for s in sets for t in ("alpha", "beta") for i in range(3)]
        outputs = await asyncio.gather(*calls)
        await asyncio.gather(*(s.flush() for s in sets))  # as each actor method that ran models does
        return outputs

    outputs = asyncio.run(run_all())
    assert [o.text for o in outputs[:3]] == ["ALPHA 0", "ALPHA 1", "ALPHA 2"]
    report = get(gateway.report.remote(), actor="LLMGateway", method="report", stage="test", timeout_s=30)
    assert report.summary.total.calls == 12
    assert {a: t.calls for a, t in report.by_actor.items()} == {"PersonaWriter[0]": 6, "PersonaWriter[1]": 6}
    assert {t: v.calls for t, v in report.by_topic.items()} == {"alpha": 6, "beta": 6}
    (gate,) = report.gates
    # a lease given back is reused by its holder's next call: fewer grants than calls, never over the limit
    assert gate.endpoint == INJECTED_ENDPOINT and gate.peak_in_flight == 2 and 2 <= gate.granted <= 12

    entry = CachedCompletion(key="k" * 64, model="m", text="cached", request={})
    get(gateway.cache_put.remote(entry), actor="LLMGateway", method="cache_put", stage="test", timeout_s=30)
    hit = get(gateway.cache_get.remote("k" * 64), actor="LLMGateway", method="cache_get", stage="test", timeout_s=30)
    assert hit.text == "cached"


def test_latency_knob_refuses_negative_values():
    with pytest.raises(ValueError):
        ModelRecipe(inject_latency_s=-1)


def _gate_of(gateway) -> "object":
    (gate,) = get(gateway.report.remote(), actor="LLMGateway", method="report", stage="test", timeout_s=30).gates
    return gate


def test_an_actor_reuses_its_lease_and_gives_idle_ones_back(ray_cluster):
    gateway = LLMGateway.remote(GatewaySettings(endpoints={INJECTED_ENDPOINT: EndpointLimits(concurrency=8)}))
    models = ActorModels(ModelRecipe(inject_latency_s=0.01), gateway, holder="Expert[0]")

    async def one_after_another():
        for i in range(5):
            await models.for_topic("alpha").run(ShoutStep, Note(text=f"a {i}"))
        await models.flush()
        held = _gate_of(gateway).in_flight  # the lease waits a moment for this actor's next call
        await asyncio.sleep(LEASE_LINGER_S + 0.3)  # given back
        return held

    held = asyncio.run(one_after_another())
    gate = _gate_of(gateway)
    assert gate.granted == 1 and held == 1 and gate.in_flight == 0
    report = get(gateway.report.remote(), actor="LLMGateway", method="report", stage="test", timeout_s=30)
    assert report.summary.total.calls == 5 and report.by_topic["alpha"].calls == 5


def test_an_idle_lease_waits_about_as_long_as_the_actor_s_calls_take(ray_cluster):
    gateway = LLMGateway.remote(GatewaySettings(endpoints={INJECTED_ENDPOINT: EndpointLimits(concurrency=8)}))
    models = ActorModels(ModelRecipe(inject_latency_s=0.6), gateway, holder="PersonaWriter[0]")

    async def two_with_a_pause():
        await models.for_topic("alpha").run(ShoutStep, Note(text="a"))
        await asyncio.sleep(0.75)  # past LEASE_LINGER_S, within LINGER_PER_CALL x the 0.6 s the call took
        await models.for_topic("alpha").run(ShoutStep, Note(text="b"))
        linger = models.link.linger_s()
        await asyncio.sleep(linger + 0.3)
        return linger

    linger = asyncio.run(two_with_a_pause())
    gate = _gate_of(gateway)
    assert LEASE_LINGER_S < linger < LINGER_PER_CALL * 0.7 and gate.granted == 1 and gate.in_flight == 0


def test_a_lease_is_not_kept_when_the_endpoint_fills_up_or_has_a_rate_limit(ray_cluster):
    # one slot: once granted, no slot is free, so the lease goes back after each call
    for limits in (EndpointLimits(concurrency=1), EndpointLimits(concurrency=8, requests_per_minute=6000)):
        gateway = LLMGateway.remote(GatewaySettings(endpoints={INJECTED_ENDPOINT: limits}))
        models = ActorModels(ModelRecipe(inject_latency_s=0.01), gateway, holder="Expert[0]")

        async def three():
            for i in range(3):
                await models.for_topic("alpha").run(ShoutStep, Note(text=f"a {i}"))
            await models.flush()
            await asyncio.sleep(LEASE_LINGER_S + 0.3)

        asyncio.run(three())
        gate = _gate_of(gateway)
        # (a lease goes back in a message not waited for, and Ray may run an async actor's calls out of
        # order: under load the next call's grant can land just before it, so two leases for a moment)
        assert gate.granted == 3 and gate.peak_in_flight <= 2 and gate.in_flight == 0, limits


def test_usage_is_filed_once_by_flushes_that_overlap(ray_cluster):
    gateway = LLMGateway.remote(GatewaySettings())
    models = ActorModels(ModelRecipe(inject_latency_s=0.0), gateway, holder="Writer[0]")

    async def calls_and_flushes():
        await asyncio.gather(*(models.for_topic(t).run(ShoutStep, Note(text=t)) for t in ("a", "b", "b")))
        await asyncio.gather(models.flush(), models.flush(), models.flush())
        await models.flush()  # nothing new: no message

    asyncio.run(calls_and_flushes())
    report = get(gateway.report.remote(), actor="LLMGateway", method="report", stage="test", timeout_s=30)
    assert {t: v.calls for t, v in report.by_topic.items()} == {"a": 1, "b": 2}


@ray.remote(num_cpus=0)
class _Caller:
    """An actor whose method runs models and carries their usage back, as the raystorm actors do."""

    def __init__(self, gateway, holder: str):
        self.models = ActorModels(ModelRecipe(inject_latency_s=0.0), gateway, holder=holder)

    async def shout(self, topic: str, texts: list[str], fail: bool = False):
        async def work() -> list[str]:
            out = [await self.models.for_topic(topic).run(ShoutStep, Note(text=t)) for t in texts]
            if fail:
                raise RuntimeError("the method failed after its model calls")
            return [o.text for o in out]

        return await self.models.carried(work())


def test_usage_comes_back_with_results_and_is_filed_by_the_reader(ray_cluster):
    gateway = LLMGateway.remote(GatewaySettings())
    caller = _Caller.remote(gateway, "Expert[0]")
    key = gateway_key(gateway)

    def ledger_calls(topic: str) -> int:
        return len(get(gateway.ledger.remote(topic), actor="LLMGateway", method="ledger", stage="test",
                       timeout_s=30).records)

    async def run():
        texts = await call(caller.shout.remote("alpha", ["a", "b"]), actor="C", method="shout", stage="test",
                           timeout_s=30)
        held, filed_before = OUTBOX.held(key), ledger_calls("alpha")
        await OUTBOX.flush(gateway)
        return texts, held, filed_before

    texts, held, filed_before = asyncio.run(run())
    # the caller sees the plain value; the records waited in its outbox, not at the gateway
    assert texts == ["A", "B"] and held == 2 and filed_before == 0
    assert ledger_calls("alpha") == 2 and OUTBOX.held(key) == 0

    # a method that fails files its own records before raising: none are lost with the result
    with pytest.raises(RaystormError, match="failed after its model calls"):
        get(caller.shout.remote("beta", ["c"], True), actor="C", method="shout", stage="test", timeout_s=30)
    assert ledger_calls("beta") == 1 and OUTBOX.held(key) == 0
    report = get(gateway.report.remote(), actor="LLMGateway", method="report", stage="test", timeout_s=30)
    assert {a: t.calls for a, t in report.by_actor.items()} == {"Expert[0]": 3}


def test_a_reader_whose_records_another_flush_took_waits_for_that_flush(ray_cluster):
    gateway = LLMGateway.remote(GatewaySettings())
    key = gateway_key(gateway)
    # many records: a message this large goes through Ray's object store, and may land after a later, small one
    records = {t: [UsageRecord(step="s", stage="conversations", model="m") for _ in range(2000)] for t in "ab"}

    async def two_readers():
        OUTBOX.put(key, [("PersonaWriter[0]", t, records[t]) for t in "ab"])

        async def read(topic: str) -> int:  # as `RayRuntime.usage` does at the end of each topic
            await OUTBOX.flush(gateway)
            return len((await gateway.ledger.remote(topic)).records)

        return await asyncio.gather(read("a"), read("b"))

    # the first reader's flush took both topics' records; the second reader waits for it, not just sends nothing
    assert asyncio.run(two_readers()) == [2000, 2000] and OUTBOX.held(key) == 0


def test_an_actor_s_calls_that_wait_at_once_ask_for_their_leases_in_one_message(ray_cluster):
    for concurrency, most in ((16, 1), (3, 8)):  # room for all: one message; 3 slots for 8 calls: a few more
        gateway = LLMGateway.remote(GatewaySettings(endpoints={INJECTED_ENDPOINT: EndpointLimits(
            concurrency=concurrency)}))
        models = ActorModels(ModelRecipe(inject_latency_s=0.2), gateway, holder="Expert[0]")

        async def eight_at_once():
            out = await asyncio.gather(*(models.for_topic("alpha").run(ShoutStep, Note(text=f"a {i}"))
                                         for i in range(8)))
            await asyncio.sleep(models.link.linger_s() + 0.3)
            return out

        assert [o.text for o in asyncio.run(eight_at_once())] == [f"A {i}" for i in range(8)]
        gate = _gate_of(gateway)
        assert 1 <= gate.asked <= most and gate.peak_in_flight == min(8, concurrency) and gate.in_flight == 0, gate


def test_a_lease_granted_for_a_call_cancelled_while_it_waited_is_not_lost(ray_cluster):
    gateway = LLMGateway.remote(GatewaySettings(endpoints={INJECTED_ENDPOINT: EndpointLimits(concurrency=1)}))
    models = ActorModels(ModelRecipe(inject_latency_s=0.3), gateway, holder="Expert[0]")

    async def one_cancelled():
        await gateway.ready.remote()  # (the gateway up: no request below waits for its start)
        first = asyncio.ensure_future(models.for_topic("alpha").run(ShoutStep, Note(text="a")))
        await asyncio.sleep(0.1)  # the first holds the only slot; the second waits for it
        waiting = asyncio.ensure_future(models.for_topic("alpha").run(ShoutStep, Note(text="b")))
        await asyncio.sleep(0.05)
        waiting.cancel()
        await first
        await asyncio.sleep(0.5)  # the slot the first gave back is granted to the cancelled call's request
        third = await models.for_topic("alpha").run(ShoutStep, Note(text="c"))  # would wait forever if lost
        await asyncio.sleep(LEASE_LINGER_S + 0.5)
        return third.text

    assert asyncio.run(asyncio.wait_for(one_cancelled(), timeout=20)) == "C"
    assert _gate_of(gateway).in_flight == 0
