"""Usage records carried back with results: `Filed`, and the `UsageOutbox` of each process.

An actor method that ran models returns its value wrapped in `Filed`, with the
usage records of those calls, instead of filing them with the gateway in a
message of its own before returning (that message was one actor call in five).
`actors.calls.call` unwraps it, so callers see the plain value, and keeps the
records in its process's outbox; whoever reads the gateway's ledger files the
outbox first (`UsageOutbox.flush`: one message for every record held), so the
orchestrator still never reads a ledger that lacks a call whose result it has
seen. An actor that calls other actors (a report agent asking hoppers) carries
what their results brought along with its own result, so records travel up to
the orchestrator the way results do. A method that fails files its records
with the gateway before raising: no result carries them then.

Records are keyed by gateway (its actor id), so a process driving two clusters
files each record with its own gateway.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

from agents.lm.usage import UsageRecord

# (holder: the actor that made the calls, topic, its records)
Filing = tuple[str, str | None, list[UsageRecord]]
FILE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Filed:
    """An actor method's `value`, with usage records for the gateway `gateway` not filed yet."""

    value: Any
    gateway: str
    filings: list[Filing]


def gateway_key(gateway: Any) -> str:
    """The key records for `gateway` (an actor handle) are held under."""
    return gateway._actor_id.hex()


class UsageOutbox:
    """The records results brought into this process, by gateway, until filed or carried on."""

    def __init__(self) -> None:
        self._held: dict[str, list[Filing]] = {}
        self._lock = threading.Lock()  # `get` may unwrap results on other threads
        self._sending: set[asyncio.Task] = set()  # flushes whose message is not answered yet

    def put(self, gateway: str, filings: list[Filing]) -> None:
        if filings:
            with self._lock:
                self._held.setdefault(gateway, []).extend(filings)

    def take(self, gateway: str) -> list[Filing]:
        with self._lock:
            return self._held.pop(gateway, [])

    def held(self, gateway: str) -> int:
        """Records held for `gateway`."""
        with self._lock:
            return sum(len(records) for _, _, records in self._held.get(gateway, []))

    async def flush(self, gateway: Any, stage: str = "llm") -> None:
        """File every record held for `gateway` with it, in one message (none when nothing is held), and
        return once every flush under way here is answered too: a record another flush took is in the
        ledger only then (Ray may run an async actor's calls out of order, so sending first is not enough)."""
        from actors.calls import call  # (here: `actors.calls` imports this module to unwrap results)

        key = gateway_key(gateway)
        loop = asyncio.get_running_loop()
        filings = self.take(key)
        mine = None
        if filings:
            mine = loop.create_task(call(gateway.file.remote(filings), actor="LLMGateway", method="file",
                                         stage=stage, timeout_s=FILE_TIMEOUT_S))
            self._sending.add(mine)
            mine.add_done_callback(self._sending.discard)
        others = [t for t in self._sending if t is not mine and t.get_loop() is loop]
        if others:
            await asyncio.wait(others)
        if mine is not None:
            try:
                await mine
            except BaseException:
                self.put(key, filings)  # kept for the next flush: the gateway counts a record once
                raise


OUTBOX = UsageOutbox()  # this process's


def unwrap(value: Any) -> Any:
    """`value`, its carried records kept in this process's outbox."""
    if type(value) is Filed:
        OUTBOX.put(value.gateway, value.filings)
        return value.value
    return value
