"""Answer metrics (SQuAD EM/F1 with aliases), benchmark records and their summary."""

from __future__ import annotations

import pytest

from agents.multihop.evaluation import BenchRecord, append_record, read_records, summarize
from agents.multihop.metrics import exact_match, f1_score, normalize_answer, percentile
from agents.multihop.trace import AgentAnswer, Hop, merge_hops
from retrieval.datasets import GoldPassage, MultihopQuestion
from retrieval.documents import Passage
from retrieval.errors import RaystormError


def passage(title: str, text: str, i: int) -> Passage:
    return Passage(passage_id=f"p{i}", doc_id=f"d{i}", path="/c.json", title=title, line_start=i, line_end=i,
                   text=text, sha256="x")


def test_squad_normalization():
    assert normalize_answer("The  Finnish markka!") == "finnish markka"
    assert normalize_answer("an Apple, a day") == "apple day"


def test_exact_match_and_f1_take_the_best_alias():
    golds = ["The Finnish markka", "markka"]
    assert exact_match("markka", golds) == 1.0
    assert exact_match("the finnish markka.", golds) == 1.0
    assert exact_match("Finnish mark", golds) == 0.0
    assert f1_score("Finnish mark", golds) == pytest.approx(0.5)
    assert f1_score("it was the markka", golds) == pytest.approx(0.5)  # vs "markka": P 1/3, R 1
    assert f1_score("", golds) == 0.0


def test_percentile():
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0 and percentile([], 0.5) == 0.0


def test_merged_ranking_puts_supporting_passages_first_then_hop_order():
    a, b, c, d = (passage(t, t, i) for i, t in enumerate("abcd"))
    hops = [Hop(query="q1", answer="x", passages=[a, b], supporting=[0]),
            Hop(query="q2", answer="y", passages=[c, a, d], supporting=[2])]
    assert [p.title for p in merge_hops(hops)] == ["a", "d", "b", "c"]


def test_a_record_scores_recall_and_answer_and_the_file_resumes(tmp_path):
    q = MultihopQuestion(id="q1", question="Where?", answer="Tressling", aliases=["Tressling port"],
                         gold="passages", gold_passages=[GoldPassage(title="A", text="alpha"),
                                                         GoldPassage(title="B", text="beta")], hops=2)
    retrieved = [passage("A", "alpha", 0), passage("C", "gamma", 1), passage("B", "beta", 2)]
    answer = AgentAnswer(question="Where?", strategy="chain", answer="She was born in Tressling.",
                         short_answer="Tressling", retrieved=retrieved,
                         hops=[Hop(query="Where?", answer="x", passages=retrieved, supporting=[0])])

    record = BenchRecord.score(q, answer, tokens=120, latency_s=0.5)

    assert record.recall == {"2": 0.5, "5": 1.0}
    assert (record.em, record.f1) == (1.0, 1.0)
    assert [r.title for r in record.retrieved] == ["A", "C", "B"] and record.hops[0].supporting == ["A"]
    out = tmp_path / "run.jsonl"
    append_record(out, record)
    again = read_records(out)
    assert list(again) == ["q1"] and again["q1"] == record
    summary = summarize(list(again.values()), wall_s=2.0)
    assert summary.model_dump(by_alias=True) == {
        "n": 1, "Recall@2": 0.5, "Recall@5": 1.0, "EM": 1.0, "F1": 1.0, "EM_answered": 1.0, "F1_answered": 1.0,
        "abstention_rate": 0.0, "calibration": {}, "mean_tokens": 120.0, "p50_latency_s": 0.5, "wall_s": 2.0}


def test_the_summary_scores_answered_questions_abstention_and_calibration():
    q = MultihopQuestion(id="q", question="Where?", answer="Tressling", gold="titles", gold_titles=["A"], hops=1)

    def record(i: int, confidence: float, guess: str, abstained: bool) -> BenchRecord:
        answer = AgentAnswer(question="Where?", strategy="chain", answer="...", confidence=confidence, guess=guess,
                             short_answer=None if abstained else guess, abstained=abstained,
                             abstain_reason="below" if abstained else None)
        return BenchRecord.score(q.model_copy(update={"id": f"q{i}"}), answer, tokens=0, latency_s=0.1)

    records = [record(0, 0.9, "Tressling", False), record(1, 0.85, "Fenby", False),
               record(2, 0.1, "Tressling", True), record(3, 0.15, "Fenby", True)]
    # an abstention scores 0 over all questions, is left out of the answered figures, and still counts
    # for calibration through its guess
    assert [r.em for r in records] == [1.0, 0.0, 0.0, 0.0] and records[2].guess_em == 1.0
    s = summarize(records)
    assert (s.em, s.em_answered, s.abstention_rate) == (0.25, 0.5, 0.5)
    assert s.calibration == {"0.0-0.2": {"n": 2, "right": 0.5}, "0.8-1.0": {"n": 2, "right": 0.5}}


def test_a_foreign_line_is_refused_with_the_fix(tmp_path):
    out = tmp_path / "run.jsonl"
    out.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(RaystormError, match="run.jsonl:1 is not a benchmark record"):
        read_records(out)
