"""Per-question usage when many questions share one set of models.

A `Hopper` runs several questions at once on the same `RoleModels` (one ledger,
one concurrency limit per endpoint). `QuestionLedger` is that ledger; inside
`with ledger.question() as records:` every call the current asyncio task (and
the tasks it spawns) makes is also appended to `records`, through a context
variable, so concurrent questions never mix their tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from agents.lm.usage import UsageLedger, UsageRecord

_current: ContextVar[list[UsageRecord] | None] = ContextVar("raystorm_question_usage", default=None)


class QuestionLedger(UsageLedger):
    """A `UsageLedger` that also files each record under the question being answered."""

    def record(self, record: UsageRecord) -> None:
        super().record(record)
        bucket = _current.get()
        if bucket is not None:
            bucket.append(record)

    @contextmanager
    def question(self) -> Iterator[list[UsageRecord]]:
        bucket: list[UsageRecord] = []
        token = _current.set(bucket)
        try:
            yield bucket
        finally:
            _current.reset(token)


def tokens(records: list[UsageRecord]) -> int:
    return sum(r.prompt_tokens + r.completion_tokens for r in records)
