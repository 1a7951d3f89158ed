"""Scoring multi-hop answers against a dataset: one `BenchRecord` per question, a `BenchSummary` per run.

Records are JSON lines (`FILE.jsonl`); a rerun reads the file first and skips
the questions it holds, so a benchmark resumes where it stopped. The summary is
computed over every record of the file that belongs to the questions asked, so
a resumed run reports the same figures as an uninterrupted one.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from agents.multihop.metrics import exact_match, f1_score, percentile
from agents.multihop.trace import AgentAnswer
from retrieval.datasets import GoldPassage, MultihopQuestion, recall_at_k
from retrieval.errors import RaystormError

KS = (2, 5)


class HopLine(BaseModel):
    query: str
    answer: str
    supporting: list[str] = Field(default_factory=list)  # titles


class BenchRecord(BaseModel):
    """One line of a benchmark file."""

    id: str
    question: str
    gold_answer: str
    strategy: str
    answer: str
    short_answer: str | None = None
    retrieved: list[GoldPassage]  # title + text, rank order, union over hops, deduplicated
    hops: list[HopLine]
    tokens: int = 0
    latency_s: float = 0.0
    recall: dict[str, float] = Field(default_factory=dict)  # "2", "5" -> Recall@k
    em: float = 0.0
    f1: float = 0.0

    @classmethod
    def score(cls, question: MultihopQuestion, answer: AgentAnswer, tokens: int, latency_s: float) -> "BenchRecord":
        retrieved = [GoldPassage(title=p.title, text=p.text) for p in answer.retrieved]
        predicted = answer.short_answer or answer.answer  # EM/F1 read the short span when there is one
        return cls(
            id=question.id, question=question.question, gold_answer=question.answer, strategy=answer.strategy,
            answer=answer.answer, short_answer=answer.short_answer, retrieved=retrieved,
            hops=[HopLine(query=h.query, answer=h.answer, supporting=[p.title for p in h.supporting_passages])
                  for h in answer.hops],
            tokens=tokens, latency_s=round(latency_s, 3),
            recall={str(k): recall_at_k(retrieved, question, k) for k in KS},
            em=exact_match(predicted, question.answers), f1=f1_score(predicted, question.answers))


class BenchSummary(BaseModel):
    n: int
    recall_at_2: float = Field(serialization_alias="Recall@2")
    recall_at_5: float = Field(serialization_alias="Recall@5")
    em: float = Field(serialization_alias="EM")
    f1: float = Field(serialization_alias="F1")
    mean_tokens: float
    p50_latency_s: float
    wall_s: float | None = None  # this run's wall time, when known

    def line(self) -> str:
        return json.dumps(self.model_dump(by_alias=True))


def read_records(path: Path) -> dict[str, BenchRecord]:
    """The records already in `path` by question id (none if it does not exist)."""
    if not path.exists():
        return {}
    out: dict[str, BenchRecord] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = BenchRecord.model_validate_json(line)
        except ValidationError as exc:
            raise RaystormError(f"{path}:{number} is not a benchmark record ({exc.errors()[0]['msg']}): "
                                "write to a new --out file, or remove that line to resume") from None
        out[record.id] = record
    return out


def append_record(path: Path, record: BenchRecord) -> None:
    """One line per question, flushed at once, so an interrupted run keeps what it finished."""
    with path.open("a", encoding="utf-8") as f:
        f.write(record.model_dump_json() + "\n")
        f.flush()


def summarize(records: list[BenchRecord], wall_s: float | None = None) -> BenchSummary:
    mean = statistics.fmean
    if not records:
        return BenchSummary(n=0, recall_at_2=0, recall_at_5=0, em=0, f1=0, mean_tokens=0, p50_latency_s=0,
                            wall_s=wall_s)
    return BenchSummary(
        n=len(records),
        recall_at_2=round(mean(r.recall["2"] for r in records), 3),
        recall_at_5=round(mean(r.recall["5"] for r in records), 3),
        em=round(mean(r.em for r in records), 3),
        f1=round(mean(r.f1 for r in records), 3),
        mean_tokens=round(mean(r.tokens for r in records), 1),
        p50_latency_s=round(percentile([r.latency_s for r in records], 0.5), 3),
        wall_s=None if wall_s is None else round(wall_s, 1))
