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
RIGHT_F1 = 0.5  # an answer counts as right for calibration at this token F1 or more
BUCKETS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


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
    short_answer: str | None = None  # None when raystorm abstained
    strategy_span: str | None = None  # the strategy's own span, before the answer layer
    guess: str | None = None  # the fused candidate, also when abstaining: calibration reads it
    answer_type: str | None = None
    confidence: float | None = None
    abstained: bool = False
    abstain_reason: str | None = None
    retrieved: list[GoldPassage]  # title + text, rank order, union over hops, deduplicated
    hops: list[HopLine]
    tokens: int = 0
    latency_s: float = 0.0
    recall: dict[str, float] = Field(default_factory=dict)  # "2", "5" -> Recall@k
    em: float = 0.0  # of the short answer; 0 when abstaining
    f1: float = 0.0
    guess_em: float = 0.0  # of the fused candidate whether returned or not (calibration)
    guess_f1: float = 0.0

    @classmethod
    def score(cls, question: MultihopQuestion, answer: AgentAnswer, tokens: int, latency_s: float) -> "BenchRecord":
        retrieved = [GoldPassage(title=p.title, text=p.text) for p in answer.retrieved]
        if answer.confidence is None:  # no answer layer ran: the short span when there is one
            predicted = answer.short_answer or answer.answer
        else:
            predicted = "" if answer.abstained else (answer.short_answer or "")
        guess = answer.guess if answer.confidence is not None else predicted
        return cls(
            id=question.id, question=question.question, gold_answer=question.answer, strategy=answer.strategy,
            answer=answer.answer, short_answer=answer.short_answer, strategy_span=answer.strategy_span,
            guess=answer.guess, answer_type=answer.answer_type, confidence=answer.confidence,
            abstained=answer.abstained, abstain_reason=answer.abstain_reason, retrieved=retrieved,
            hops=[HopLine(query=h.query, answer=h.answer, supporting=[p.title for p in h.supporting_passages])
                  for h in answer.hops],
            tokens=tokens, latency_s=round(latency_s, 3),
            recall={str(k): recall_at_k(retrieved, question, k) for k in KS},
            em=exact_match(predicted, question.answers) if predicted else 0.0,
            f1=f1_score(predicted, question.answers) if predicted else 0.0,
            guess_em=exact_match(guess, question.answers) if guess else 0.0,
            guess_f1=f1_score(guess, question.answers) if guess else 0.0)


class BenchSummary(BaseModel):
    n: int
    recall_at_2: float = Field(serialization_alias="Recall@2")
    recall_at_5: float = Field(serialization_alias="Recall@5")
    em: float = Field(serialization_alias="EM")  # over all questions, an abstention scoring 0
    f1: float = Field(serialization_alias="F1")
    em_answered: float = Field(0.0, serialization_alias="EM_answered")
    f1_answered: float = Field(0.0, serialization_alias="F1_answered")
    abstention_rate: float = 0.0
    # confidence bucket -> questions in it and the share whose fused answer was right (F1 >= RIGHT_F1)
    calibration: dict[str, dict[str, int | float]] = Field(default_factory=dict)
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
    answered = [r for r in records if not r.abstained]
    return BenchSummary(
        n=len(records),
        em_answered=round(mean(r.em for r in answered), 3) if answered else 0.0,
        f1_answered=round(mean(r.f1 for r in answered), 3) if answered else 0.0,
        abstention_rate=round(1 - len(answered) / len(records), 3),
        calibration=confidence_buckets([(r.confidence, r.guess_f1 >= RIGHT_F1) for r in records
                                        if r.confidence is not None and r.guess]),
        recall_at_2=round(mean(r.recall["2"] for r in records), 3),
        recall_at_5=round(mean(r.recall["5"] for r in records), 3),
        em=round(mean(r.em for r in records), 3),
        f1=round(mean(r.f1 for r in records), 3),
        mean_tokens=round(mean(r.tokens for r in records), 1),
        p50_latency_s=round(percentile([r.latency_s for r in records], 0.5), 3),
        wall_s=None if wall_s is None else round(wall_s, 1))


def confidence_buckets(pairs: list[tuple[float, bool]]) -> dict[str, dict[str, int | float]]:
    """Calibration: per confidence bucket ("0.8-1.0"), how many answers and the share that were right.
    A calibrated model's answers at 0.8 are right about 80% of the time."""
    out: dict[str, dict[str, int | float]] = {}
    for low, high in zip(BUCKETS, BUCKETS[1:]):
        inside = [right for c, right in pairs if low <= c < high or (high == BUCKETS[-1] and c == high)]
        if inside:
            out[f"{low:.1f}-{high:.1f}"] = {"n": len(inside), "right": round(sum(inside) / len(inside), 3)}
    return out
