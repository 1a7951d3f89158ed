"""Token, cost and latency accounting for every model call.

A `UsageLedger` is a pydantic model, so it pickles to Ray actors and back and
serialises to JSON; ledgers from several actors merge into one (records carry a
unique `call_id`, so merging the same ledger twice counts its calls once). Its
`history()` is what `llm_call_history.jsonl` holds: no prompts, no keys.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path

from pydantic import AliasChoices, BaseModel, Field


EXTRACTIVE_MODEL = "extractive"  # the model name the extractive model records under


class ModelPrice(BaseModel):
    """USD per one million tokens."""

    input_per_1m: float = Field(ge=0)
    output_per_1m: float = Field(ge=0)


# Public list prices (USD / 1M tokens) of common OpenAI models; others cost 0 unless
# given. Dated snapshots ("gpt-4o-mini-2024-07-18") take their family's price.
KNOWN_PRICES: dict[str, ModelPrice] = {
    "gpt-4o-mini": ModelPrice(input_per_1m=0.15, output_per_1m=0.60),
    "gpt-4o": ModelPrice(input_per_1m=2.50, output_per_1m=10.00),
    "gpt-4.1-nano": ModelPrice(input_per_1m=0.10, output_per_1m=0.40),
    "gpt-4.1-mini": ModelPrice(input_per_1m=0.40, output_per_1m=1.60),
    "gpt-4.1": ModelPrice(input_per_1m=2.00, output_per_1m=8.00),
    "gpt-4-turbo": ModelPrice(input_per_1m=10.00, output_per_1m=30.00),
    "gpt-3.5-turbo": ModelPrice(input_per_1m=0.50, output_per_1m=1.50),
    "o3-mini": ModelPrice(input_per_1m=1.10, output_per_1m=4.40),
    "o4-mini": ModelPrice(input_per_1m=1.10, output_per_1m=4.40),
}


def price_for(model: str, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of `model`: an exact entry, else the longest entry it extends with '-'."""
    name = model.split(":", 1)[1] if model.startswith("openai:") else model
    if name in prices:
        return prices[name]
    families = [k for k in prices if name.startswith(k + "-")]
    return prices[max(families, key=len)] if families else None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, prices: Mapping[str, ModelPrice]) -> float:
    price = price_for(model, prices)
    if price is None:
        return 0.0
    return (prompt_tokens * price.input_per_1m + completion_tokens * price.output_per_1m) / 1_000_000


# The topic whose work the current task does (set by a report's flow), so that a ledger shared by
# topics researched at once still knows which call was whose.
CURRENT_TOPIC: ContextVar[str | None] = ContextVar("raystorm_topic", default=None)
# Where in a report the call was made (the report agent sets them): kept in the history file, so
# usage can be read per section and per tool.
CURRENT_SECTION: ContextVar[int | None] = ContextVar("raystorm_section", default=None)
CURRENT_TOOL: ContextVar[str | None] = ContextVar("raystorm_tool", default=None)


def report_place() -> tuple[int | None, str | None]:
    """(section, tool) the current task works for, to carry into another actor's calls."""
    return CURRENT_SECTION.get(), CURRENT_TOOL.get()


@contextmanager
def in_report_place(section: int | None, tool: str | None) -> Iterator[None]:
    """Model calls made inside are filed under `section` and `tool`."""
    scopes = CURRENT_SECTION.set(section), CURRENT_TOOL.set(tool)
    try:
        yield
    finally:
        CURRENT_TOOL.reset(scopes[1])
        CURRENT_SECTION.reset(scopes[0])


class UsageRecord(BaseModel):
    """One `LanguageModel.run`: a line of llm_call_history.jsonl."""

    call_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    started_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    step: str
    role: str = Field(validation_alias=AliasChoices("role", "stage"))  # "stage": histories before the rename
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = Field(False, description="every request of the call was answered from the disk cache")
    attempts: int = Field(1, description="requests sent or replayed, retries and the repair included")
    repaired: bool = False
    fallback: str | None = Field(None, description='"extractive" when the reply was unusable even after '
                                 "the repair and the step's extractive implementation answered instead")
    fallback_reason: str | None = Field(None, description="what was wrong with the last reply")
    ok: bool = True
    error: str | None = None
    output_mode: str | None = None
    request_key: str | None = Field(None, description="cache key of the first request")
    topic: str | None = Field(default_factory=CURRENT_TOPIC.get, exclude=True,
                              description="whose call it was; kept out of the history file")
    section: int | None = Field(default_factory=CURRENT_SECTION.get, description="report section (react writer)")
    tool: str | None = Field(default_factory=CURRENT_TOOL.get, description="report agent tool the call served")
    actor: str | None = Field(None, description="the Ray actor that made the call (set by the run's gateway)")


class UsageTotals(BaseModel):
    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    fallback_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def add(self, r: UsageRecord) -> None:
        self.calls += 1
        self.cached_calls += r.cached
        self.failed_calls += not r.ok
        self.fallback_calls += r.fallback is not None
        self.prompt_tokens += r.prompt_tokens
        self.completion_tokens += r.completion_tokens
        self.cost_usd += r.cost_usd
        self.latency_s += r.latency_s


class UsageSummary(BaseModel):
    total: UsageTotals
    by_role: dict[str, UsageTotals]
    by_model: dict[str, UsageTotals]

    def lines(self) -> list[str]:
        """A short human-readable account, one line per role then the total."""
        def line(name: str, t: UsageTotals) -> str:
            fell_back = f", {t.fallback_calls} fell back" if t.fallback_calls else ""
            return (f"{name}: {t.calls} calls ({t.cached_calls} cached, {t.failed_calls} failed{fell_back}), "
                    f"{t.prompt_tokens}+{t.completion_tokens} tokens, ${t.cost_usd:.4f}")
        return [line(s, t) for s, t in sorted(self.by_role.items())] + [line("total", self.total)]


class UsageLedger(BaseModel):
    records: list[UsageRecord] = Field(default_factory=list)

    def record(self, record: UsageRecord) -> None:
        self.records.append(record)

    def merge(self, *others: UsageLedger) -> None:
        """Add the records of `others` that this ledger does not hold yet."""
        seen = {r.call_id for r in self.records}
        for other in others:
            for r in other.records:
                if r.call_id not in seen:
                    seen.add(r.call_id)
                    self.records.append(r)

    @classmethod
    def merged(cls, ledgers: Iterable[UsageLedger]) -> UsageLedger:
        out = cls()
        out.merge(*ledgers)
        return out

    def of_topic(self, topic: str) -> UsageLedger:
        """The calls made while `topic` was being researched (`CURRENT_TOPIC`)."""
        return UsageLedger(records=[r for r in self.records if r.topic == topic])

    def history(self) -> list[UsageRecord]:
        """The llm_call_history.jsonl records, oldest first."""
        return sorted(self.records, key=lambda r: r.started_at)

    def summary(self) -> UsageSummary:
        total, by_role, by_model = UsageTotals(), {}, {}
        for r in self.records:
            total.add(r)
            by_role.setdefault(r.role, UsageTotals()).add(r)
            by_model.setdefault(r.model, UsageTotals()).add(r)
        return UsageSummary(total=total, by_role=by_role, by_model=by_model)

    def fallback_summary(self) -> str | None:
        """"37 of 312 calls fell back to the extractive model; by step: storm.expert.answer 30, ...",
        counting the calls that went to a language model (not those run extractive by choice);
        None when no call went to one."""
        calls = [r for r in self.records if r.model != EXTRACTIVE_MODEL]
        if not calls:
            return None
        by_step: dict[str, int] = {}
        for r in calls:
            if r.fallback is not None:
                by_step[r.step] = by_step.get(r.step, 0) + 1
        n = sum(by_step.values())
        line = f"{n} of {len(calls)} calls fell back to the extractive model"
        if by_step:
            line += "; by step: " + ", ".join(f"{s} {k}" for s, k in sorted(by_step.items(), key=lambda x: (-x[1], x[0])))
        return line

    def to_jsonl(self) -> str:
        return "".join(r.model_dump_json() + "\n" for r in self.history())

    def write_jsonl(self, path: str | os.PathLike) -> Path:
        """Write llm_call_history.jsonl atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_text(self.to_jsonl(), encoding="utf-8")
        os.replace(tmp, path)
        return path
