"""The one retry schedule of raystorm: bounded tries, exponential backoff with jitter.

Model requests (`agents.lm.chat`), calls to restarting actors (`actors.calls.retrying`)
and conversations whose writer was lost (`cluster.ray_runtime`) all wait by a
`RetryPolicy`; each caller decides only *which* failures are worth another try
(`agents.lm.backoff.classify` for HTTP, `ActorUnavailable` for actors).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, Field

T = TypeVar("T")


class RetryPolicy(BaseModel):
    """Bounded retries with exponential backoff and jitter; a time limit per try."""

    max_retries: int = Field(4, ge=0, description="retries after the first attempt")
    base_delay_s: float = Field(1.0, ge=0)
    max_delay_s: float = Field(60.0, ge=0, description="caps every wait, Retry-After included")
    timeout_s: float = Field(120.0, gt=0, description="one try's limit")

    def delay(self, retry: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `retry` (0-based); `retry_after`: what the other side asked."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        ceiling = min(self.base_delay_s * (2**retry), self.max_delay_s)
        return ceiling * (0.5 + 0.5 * (rng or random).random())  # "equal jitter"

    async def wait(self, retry: int, retry_after: float | None = None) -> None:
        await asyncio.sleep(self.delay(retry, retry_after))

    async def run(self, make_call: Callable[[], Awaitable[T]], retryable: Callable[[Exception], bool]) -> T:
        """`make_call()` until it succeeds, raises what `retryable` refuses, or the retries are spent."""
        for retry in range(self.max_retries + 1):
            try:
                return await make_call()
            except Exception as exc:
                if retry == self.max_retries or not retryable(exc):
                    raise
            await self.wait(retry)
        raise AssertionError("unreachable")


# An actor that died is restarted by Ray within seconds (a lost node takes longer to notice):
# waits of about 1, 2, 4, 8 s.
ACTOR_RESTART = RetryPolicy(max_retries=4, base_delay_s=1.5, max_delay_s=16.0, timeout_s=600.0)
