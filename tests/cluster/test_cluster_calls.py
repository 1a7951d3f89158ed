"""Every actor call is bounded and its failures name the actor and the stage."""

from __future__ import annotations

import asyncio
import pickle
import time

import pytest
import ray
from cluster_agents import Misbehaving, PoolMember

from actors.calls import ActorCallError, ActorTimeout, ActorUnavailable, call, get
from actors.chat_proxy import AgentNotHosted
from actors.pool import ActorOptions, ActorPool
from agents.lm.errors import EndpointUnavailableError, ModelOutputError, RequestRejectedError
from agents.storm.checkpoints import StageFailed
from retrieval.errors import CollectionNotFound, RaystormError


def test_timeouts_and_errors_name_actor_and_stage(ray_cluster):
    actor = Misbehaving.remote()
    bound = dict(actor="Misbehaving[0]", stage="outline", timeout_s=1.0)
    with pytest.raises(ActorTimeout, match=r"actor Misbehaving\[0\], sleep\(\) in stage 'outline': no answer after 1 s"):
        asyncio.run(call(actor.sleep.remote(30), method="sleep", **bound))
    with pytest.raises(ActorTimeout, match="no answer"):
        get(actor.sleep.remote(30), method="sleep", **bound)
    # a user-facing error keeps its own message (it says what to do)
    with pytest.raises(RaystormError, match="^collection 'x' not found"):
        get(actor.fail.remote(True), method="fail", **{**bound, "timeout_s": 30})
    with pytest.raises(ActorCallError, match=r"fail\(\) in stage 'outline': ValueError: bad value"):
        get(actor.fail.remote(False), method="fail", **{**bound, "timeout_s": 30})
    # raystorm's own errors with their own __init__ come back whole, typed
    with pytest.raises(AgentNotHosted, match="no agent 'topic/writer_x'") as caught:
        get(actor.not_hosted.remote(), method="not_hosted", **{**bound, "timeout_s": 30})
    assert caught.value.key == "topic/writer_x"
    # so do the language-model layer's (keyword-only constructors): the driver sees which endpoint failed
    with pytest.raises(EndpointUnavailableError, match="HTTP 503") as down:
        get(actor.endpoint_down.remote(), method="endpoint_down", **{**bound, "timeout_s": 30})
    assert (down.value.endpoint, down.value.attempts) == ("http://llm:8000/v1", 4)
    # an error Ray cannot rebuild still says what it was
    with pytest.raises(ActorCallError, match="KeywordOnlyError: failed with code 7"):
        get(actor.fail_unpicklable.remote(), method="fail_unpicklable", **{**bound, "timeout_s": 30})


def test_raystorm_errors_pickle_with_their_fields():
    for error in (ActorTimeout("Expert[0]", "turn", "conversations", 5.0),
                  ActorUnavailable("PersonaWriter[1]", "on_messages", "conversations", "node lost", restarting=True),
                  AgentNotHosted("t/w", ["t/v"]), CollectionNotFound("docs"),
                  StageFailed("outline", "the model's reply was empty", topic="Flood"),
                  EndpointUnavailableError(endpoint="http://llm/v1", model="m", reason="timeout", attempts=3),
                  RequestRejectedError(endpoint="http://llm/v1", model="m", reason="HTTP 401", hint="check the key"),
                  ModelOutputError("storm.outline.draft", "outline", "m", "not JSON", "{")):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error) and copy.__dict__ == error.__dict__


def test_dead_actor_is_reported_and_idempotent_calls_move_on(ray_cluster):
    doomed = Misbehaving.options(max_restarts=0).remote()
    get(doomed.ready.remote(), actor="Misbehaving", method="ready", stage="t", timeout_s=60)
    with pytest.raises(ActorUnavailable, match=r"die\(\) in stage 'conversation': the actor is gone"):
        get(doomed.die.remote(), actor="Misbehaving", method="die", stage="conversation", timeout_s=60)

    pool = ActorPool.create(PoolMember, size=2, options=ActorOptions(max_restarts=0), label="Expert")
    pool.wait_ready(timeout_s=120)
    ray.kill(pool.handles[0], no_restart=True)
    with pytest.raises(ActorUnavailable):  # the kill has landed (ray.kill does not wait)
        for _ in range(60):
            get(pool.handles[0].pid.remote(), actor="Expert[0]", method="pid", stage="t", timeout_s=60)
            time.sleep(0.5)

    async def turns():
        return [await pool.call("pid", stage="conversation", timeout_s=60, idempotent=True) for _ in range(4)]

    pids = asyncio.run(turns())
    survivor = get(pool.handles[1].pid.remote(), actor="Expert[1]", method="pid", stage="t", timeout_s=60)
    assert pids == [survivor] * 4
