"""Placement options, addresses and the distributed run's command-line plan: plain values, no Ray needed."""

from __future__ import annotations

import argparse

import pytest

from actors.pool import TASK_EVENTS_ENV, ActorOptions
from cluster.distributed_args import add_cluster_arguments, plan_from_args, wants_distributed
from cluster.runtime import resolve_address
from retrieval.errors import UsageError


def test_actor_options_spell_out_ray_options():
    opts = ActorOptions(num_cpus=0.5, memory_mb=256, max_restarts=2, max_task_retries=1,
                        resources={"llm": 1}).ray_options(name="raystorm-gateway")
    assert opts == {"num_cpus": 0.5, "max_restarts": 2, "max_task_retries": 1, "scheduling_strategy": "SPREAD",
                    "memory": 256 * 1024 * 1024, "resources": {"llm": 1}, "name": "raystorm-gateway",
                    "get_if_exists": True, "enable_task_events": False}
    pinned = ActorOptions(pin_node="ab" * 28).ray_options()
    assert type(pinned["scheduling_strategy"]).__name__ == "NodeAffinitySchedulingStrategy"
    assert pinned["scheduling_strategy"].soft is False


def test_task_events_are_off_unless_asked_for(monkeypatch):
    monkeypatch.delenv(TASK_EVENTS_ENV, raising=False)
    assert ActorOptions().ray_options()["enable_task_events"] is False
    monkeypatch.setenv(TASK_EVENTS_ENV, "1")
    assert ActorOptions().ray_options()["enable_task_events"] is True
    assert ActorOptions(task_events=False).ray_options()["enable_task_events"] is False


def test_address_comes_from_the_flag_then_the_environment(monkeypatch):
    monkeypatch.delenv("RAYSTORM_RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert resolve_address(None) is None
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")  # as inside a Ray job
    assert resolve_address(None) == "127.0.0.1:6379"
    monkeypatch.setenv("RAYSTORM_RAY_ADDRESS", "ray://head:10001")
    assert resolve_address(None) == "ray://head:10001"
    assert resolve_address("auto") == "auto"


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_cluster_arguments(p)
    return p.parse_args(list(argv))


def test_cluster_flags_make_a_plan(monkeypatch):
    monkeypatch.delenv("RAYSTORM_RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert not wants_distributed(parse())
    assert wants_distributed(parse("--distributed")) and wants_distributed(parse("--address", "auto"))
    plan = plan_from_args(parse("--writers", "4", "--experts", "8", "--call-timeout", "30",
                                "--llm-requests-per-minute", "600"))
    assert (plan.writer_actors, plan.expert_actors, plan.turn_timeout_s, plan.stage_timeout_s,
            plan.llm_requests_per_minute) == (4, 8, 30.0, 30.0, 600.0)
    assert plan_from_args(parse("--actor-resource", "research")).research_resources == {"research": 1.0}
    assert plan_from_args(parse("--actor-resource", "research=0.5")).research_resources == {"research": 0.5}
    with pytest.raises(UsageError, match="--actor-resource 'research=x'"):
        plan_from_args(parse("--actor-resource", "research=x"))
    with pytest.raises(UsageError, match="--writers must be at least 1"):
        plan_from_args(parse("--writers", "0"))


def test_an_early_connect_hands_its_error_to_the_next_connect(monkeypatch):
    import ray

    from cluster import runtime
    from retrieval.errors import RaystormError

    def refuse(**kwargs):
        raise ConnectionError("nothing listens there")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    runtime.connect_early("10.0.0.1:6379")  # returns at once; Ray would start in the background
    try:
        runtime.connect("10.0.0.1:6379")
    except RaystormError as exc:
        assert "10.0.0.1:6379" in str(exc) and "nothing listens there" in str(exc)
    else:
        raise AssertionError("the early connect's failure was lost")
    assert runtime._early is None  # handed over once; the next connect tries again
