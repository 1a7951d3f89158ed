"""Placement options and actor pools, shared by every raystorm actor.

`ActorOptions` is the one place an actor's Ray options are spelled out (CPUs,
restarts, retries, spread across nodes); it is a value, printable and
shippable. `ActorPool` holds N actors of one class and sends each call to the
least busy one, bounded by a timeout, retrying on a restarted actor only when
the call is marked safe to repeat.

    pool = ActorPool.create(ExpertActor, size=4, options=ActorOptions(max_task_retries=2),
                            label="Expert", args=(settings,))
    answer = await pool.call(ExpertActor.turn, spec, state, messages, stage="conversations", timeout_s=120,
                             idempotent=True)

A call names the actor method itself (`ExpertActor.turn`), not a string: a renamed
method fails where the call is written, in any process.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from typing import Any, Literal

import ray
from pydantic import BaseModel, Field

from actors.calls import ActorUnavailable, call, get, retrying


TASK_EVENTS_ENV = "RAYSTORM_RAY_TASK_EVENTS"


class ActorOptions(BaseModel):
    """Ray options for one kind of actor. Fractional or zero CPUs so a 2-core laptop is not starved."""

    num_cpus: float = Field(0.0, ge=0, description="CPUs reserved per actor (0: share freely)")
    memory_mb: int | None = Field(None, ge=1, description="memory reserved per actor, for the scheduler")
    max_restarts: int = Field(3, ge=-1, description="restarts after the actor's process dies (-1: no limit)")
    max_task_retries: int = Field(0, ge=-1, description="Ray reissues a call whose actor died; >0 only for "
                                                        "actors whose every method is safe to repeat")
    max_concurrency: int | None = Field(None, ge=1, description="calls in flight per actor (async default 1000)")
    scheduling: Literal["DEFAULT", "SPREAD"] = "SPREAD"
    pin_node: str | None = Field(None, description="keep the actor on this node (it owns files on its disk)")
    resources: dict[str, float] = Field(default_factory=dict, description="custom resources, e.g. {'llm': 1}")
    task_events: bool = Field(default_factory=lambda: os.environ.get(TASK_EVENTS_ENV) == "1",
                              description="report each call to Ray's task table (the dashboard's task view, "
                                          f"`ray list tasks`); off by default ({TASK_EVENTS_ENV}=1 turns it on): "
                                          "~8% of an actor call's CPU, measured by scripts/bench_call_floor.py")

    def ray_options(self, name: str | None = None, lifetime: Literal["detached"] | None = None) -> dict[str, Any]:
        opts: dict[str, Any] = dict(num_cpus=self.num_cpus, max_restarts=self.max_restarts,
                                    max_task_retries=self.max_task_retries,
                                    scheduling_strategy=self.scheduling, enable_task_events=self.task_events)
        if self.pin_node:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=self.pin_node, soft=False)
        if self.memory_mb:
            opts["memory"] = self.memory_mb * 1024 * 1024
        if self.max_concurrency:
            opts["max_concurrency"] = self.max_concurrency
        if self.resources:
            opts["resources"] = dict(self.resources)
        if name:
            opts["name"] = name
            opts["get_if_exists"] = True
        if lifetime:
            opts["lifetime"] = lifetime
        return opts


def cluster_cpus() -> int:
    """CPUs of the connected cluster (at least 1)."""
    return max(int(ray.cluster_resources().get("CPU", 1)), 1)


def alive_nodes() -> int:
    return max(sum(1 for n in ray.nodes() if n.get("Alive")), 1)


def default_pool_size(per_cpu: float = 1.0, at_most: int | None = None) -> int:
    """A pool size that grows with the cluster: `per_cpu` actors per CPU, at least one."""
    size = max(int(cluster_cpus() * per_cpu), 1)
    return min(size, at_most) if at_most else size


def method_name(method: Callable[..., Any] | str) -> str:
    """The name to call on a handle: `ExpertActor.turn` -> "turn" (a string only for a method
    every actor class has, like `ready`)."""
    return method if isinstance(method, str) else method.__name__


class ActorPool:
    """N actors of one class; each call goes to the one with the fewest calls in flight from here."""

    def __init__(self, handles: Sequence[ray.actor.ActorHandle], label: str):
        if not handles:
            raise ValueError(f"an actor pool needs at least one actor ({label})")
        self.handles = list(handles)
        self.label = label
        self._in_flight = [0] * len(self.handles)
        self._suspect: set[int] = set()  # their last call found them gone; tried last
        self._turn = itertools.count()

    @classmethod
    def create(cls, actor_class: Any, size: int, options: ActorOptions, label: str,
               args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None,
               runtime_env: dict[str, Any] | None = None, pass_label: bool = False) -> "ActorPool":
        """`size` actors. `runtime_env`: kept out of the printable options (it may carry API keys).
        `pass_label`: give each actor its own name, `label="Expert[3]"`, e.g. for its usage records."""
        opts = options.ray_options()
        if runtime_env:
            opts["runtime_env"] = runtime_env
        handles = []
        for i in range(max(size, 1)):
            extra = {"label": f"{label}[{i}]"} if pass_label else {}
            handles.append(actor_class.options(**opts).remote(*args, **(kwargs or {}), **extra))
        return cls(handles, label)

    def __len__(self) -> int:
        return len(self.handles)

    def name(self, index: int) -> str:
        return f"{self.label}[{index}]"

    def _pick(self) -> int:
        turn = next(self._turn)
        n = len(self.handles)
        # healthy first, then fewest in flight; ties broken round robin so idle pools still rotate
        return min(range(n), key=lambda i: (i in self._suspect, self._in_flight[i], (i - turn) % n))

    async def call(self, method: Callable[..., Any], *args: Any, stage: str, timeout_s: float,
                   idempotent: bool = False) -> Any:
        """`method(*args)` on the least busy actor; an idempotent call moves on if its actor is gone.

        `method`: the actor class's method, e.g. `ExpertActor.run_stage`."""
        name = method_name(method)

        async def once() -> Any:
            i = self._pick()
            self._in_flight[i] += 1
            try:
                ref = getattr(self.handles[i], name).remote(*args)
                out = await call(ref, actor=self.name(i), method=name, stage=stage, timeout_s=timeout_s)
            except ActorUnavailable:
                self._suspect.add(i)
                raise
            finally:
                self._in_flight[i] -= 1
            self._suspect.discard(i)
            return out

        if not idempotent:
            return await once()
        return await retrying(once)

    def broadcast(self, method: Callable[..., Any] | str, *args: Any, stage: str, timeout_s: float) -> list[Any]:
        """`method(*args)` on every actor, waiting for all (e.g. `ready`)."""
        name = method_name(method)
        refs = [getattr(h, name).remote(*args) for h in self.handles]
        return get(refs, actor=f"{self.label}[*]", method=name, stage=stage, timeout_s=timeout_s)

    def wait_ready(self, timeout_s: float = 120.0, stage: str = "startup") -> list[Any]:
        """Wait until every actor answers `ready()` (every raystorm actor has it: its node id)."""
        return self.broadcast("ready", stage=stage, timeout_s=timeout_s)

    def kill(self) -> None:
        for h in self.handles:
            ray.kill(h, no_restart=True)
