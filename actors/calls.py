"""Bounded actor calls: every wait has a timeout, every failure names the actor and the stage.

`call` (async) and `get` (blocking) are the only ways raystorm waits on a Ray
object ref. A timeout becomes `ActorTimeout`, a dead or unreachable actor
`ActorUnavailable`, and an exception raised inside the actor comes back as
itself when it is a `RaystormError` (its message already says what to do), or
as `ActorCallError` with the remote exception's type and message otherwise.
`retrying` reissues a call whose actor died, for calls that are safe to repeat.
Both unwrap a result that carries usage records (`actors.filing.Filed`): the
caller gets the value, the records stay in its process's outbox.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import ray
from ray.exceptions import (
    ActorUnavailableError,
    GetTimeoutError,
    RayActorError,
    RayTaskError,
    UnserializableException,
)

from actors.filing import unwrap
from agents.retry import ACTOR_RESTART, RetryPolicy
from retrieval.errors import RaystormError

T = TypeVar("T")


class ActorCallError(RaystormError):
    """A call to an actor failed; the message names the actor, the method and the stage."""

    def __init__(self, actor: str, method: str, stage: str, reason: str, hint: str = ""):
        message = f"actor {actor}, {method}() in stage '{stage}': {reason}"
        super().__init__(f"{message}. {hint}" if hint else message)
        self.actor = actor
        self.method = method
        self.stage = stage
        self.reason = reason


class ActorTimeout(ActorCallError):
    def __init__(self, actor: str, method: str, stage: str, timeout_s: float):
        super().__init__(actor, method, stage, f"no answer after {timeout_s:.0f} s",
                         "The cluster may be overloaded or the actor stuck: check `ray status` and the actor's "
                         "log (`ray logs`), raise --call-timeout, or rerun: finished stages are kept")
        self.timeout_s = timeout_s


class ActorUnavailable(ActorCallError):
    """The actor could not take the call: restarting (`restarting`), or dead for good."""

    def __init__(self, actor: str, method: str, stage: str, reason: str, restarting: bool = False):
        if restarting:
            super().__init__(actor, method, stage, f"the actor is restarting ({reason})",
                             "Calls that are safe to repeat are retried; if this persists, check `ray status` "
                             "for lost nodes, then rerun to resume from the last finished stage")
        else:
            super().__init__(actor, method, stage, f"the actor is gone ({reason})",
                             "Its node may have left the cluster and its restarts are used up; rerun to resume "
                             "from the last finished stage")
        self.restarting = restarting


def _translate(exc: BaseException, actor: str, method: str, stage: str) -> BaseException:
    if isinstance(exc, UnserializableException):  # an error type that cannot be rebuilt here
        return ActorCallError(actor, method, stage, _last_line(str(exc)))
    if isinstance(exc, RayTaskError):
        cause = exc.cause
        if isinstance(cause, RaystormError):
            return cause
        if isinstance(cause, RayActorError):  # the actor called another actor that died
            return ActorUnavailable(actor, method, stage, _brief(cause), _restarting(cause))
        return ActorCallError(actor, method, stage, f"{type(cause).__name__}: {_brief(cause)}")
    if isinstance(exc, RayActorError):
        return ActorUnavailable(actor, method, stage, _brief(exc), _restarting(exc))
    return exc


def _last_line(trace: str) -> str:
    """`Type: message` of a remote traceback's text."""
    lines = [line.strip() for line in trace.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "an error that could not be sent back"


def _restarting(exc: BaseException) -> bool:
    return isinstance(exc, ActorUnavailableError)


def _brief(exc: BaseException) -> str:
    text = " ".join(str(getattr(exc, "error_msg", None) or exc).split())
    return text[:300] + ("..." if len(text) > 300 else "")


async def call(ref: Awaitable[T], *, actor: str, method: str, stage: str, timeout_s: float) -> T:
    """Await one actor call with a bound."""
    try:
        return unwrap(await asyncio.wait_for(ref, timeout_s))
    except asyncio.TimeoutError:
        if isinstance(ref, ray.ObjectRef):
            ray.cancel(ref)
        raise ActorTimeout(actor, method, stage, timeout_s) from None
    except (RayTaskError, RayActorError, UnserializableException) as exc:
        raise _translate(exc, actor, method, stage) from exc


def get(refs: ray.ObjectRef | Sequence[ray.ObjectRef], *, actor: str, method: str, stage: str,
        timeout_s: float) -> Any:
    """`ray.get` with a bound, for the few places outside an event loop."""
    try:
        out = ray.get(refs, timeout=timeout_s)
    except GetTimeoutError:
        raise ActorTimeout(actor, method, stage, timeout_s) from None
    except (RayTaskError, RayActorError, UnserializableException) as exc:
        raise _translate(exc, actor, method, stage) from exc
    return [unwrap(o) for o in out] if isinstance(refs, Sequence) else unwrap(out)


async def retrying(make_call: Callable[[], Awaitable[T]], policy: RetryPolicy = ACTOR_RESTART) -> T:
    """Reissue an idempotent call while its actor is unavailable (restarting, or its node left),
    waiting by `policy` (time for Ray to notice a lost node and restart the actor).

    Timeouts and errors raised by the actor's own code are not retried: the first
    would double the wait, the second would fail again the same way.
    """
    return await policy.run(make_call, lambda exc: isinstance(exc, ActorUnavailable))
