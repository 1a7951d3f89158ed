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
    assert summary.model_dump(by_alias=True) == {"n": 1, "Recall@2": 0.5, "Recall@5": 1.0, "EM": 1.0, "F1": 1.0,
                                                 "mean_tokens": 120.0, "p50_latency_s": 0.5, "wall_s": 2.0}


def test_a_foreign_line_is_refused_with_the_fix(tmp_path):
    out = tmp_path / "run.jsonl"
    out.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(RaystormError, match="run.jsonl:1 is not a benchmark record"):
        read_records(out)
