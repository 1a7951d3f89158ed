"""Hopper actors on a real local Ray, and `raystorm bench multihop` end to end (with resume)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from tests.support.multihop_helpers import TWO_HOP, two_hop_questions

QUESTIONS = two_hop_questions()


@pytest.fixture(scope="module")
def pools(ray_session, ray_two_hop):
    from actors.corpus import CorpusPool
    from actors.hopper import HopperPool, HopperRecipe
    from tests.support.multihop_helpers import COLLECTION

    corpus = CorpusPool(ray_two_hop, COLLECTION)
    corpus.wait_ready()
    hoppers = HopperPool(HopperRecipe(), corpus.retriever(), size=2, concurrency=3)
    hoppers.wait_ready()
    yield corpus, hoppers
    hoppers.kill()
    corpus.kill()


def test_hoppers_answer_questions_in_parallel(pools):
    _, hoppers = pools

    async def all_three():
        return await asyncio.gather(*(hoppers.answer(q["question"], "chain") for q in QUESTIONS))

    results = asyncio.run(all_three())

    for case, result in zip(QUESTIONS, results):
        assert case["hop2_doc"] in [Path(p.path).name for p in result.answer.retrieved[:5]]
        assert result.tokens == 0 and result.calls > 0 and result.latency_s > 0  # extractive: no tokens


def test_a_question_past_its_timeout_names_the_actor(pools):
    from actors.calls import ActorTimeout

    _, hoppers = pools
    hoppers.timeout_s = 0.001
    try:
        with pytest.raises(ActorTimeout, match=r"actor Hopper\[\d\], answer\(\) in stage 'multihop'"):
            asyncio.run(hoppers.answer(QUESTIONS[0]["question"], "deep"))
    finally:
        hoppers.timeout_s = 600.0


def musique_layout(folder: Path) -> Path:
    """tests/data/two_hop as a multi-hop set in MuSiQue's layout: corpus.json + questions.json."""
    corpus = []
    for md in sorted(TWO_HOP.glob("*.md")):
        text = md.read_text(encoding="utf-8")
        title = re.search(r"^title: (.+)$", text, re.M).group(1)
        body = " ".join(line for line in text.split("---", 2)[2].splitlines() if line and not line.startswith("#"))
        corpus.append({"title": title, "text": body, "file": md.name})
    questions = []
    for i, q in enumerate(QUESTIONS):
        gold = {q["hop1_doc"], q["hop2_doc"]}
        questions.append({"id": f"q{i}", "question": q["question"], "answer": q["answer"], "answer_aliases": [],
                          "paragraphs": [{"title": c["title"], "paragraph_text": c["text"],
                                          "is_supporting": c["file"] in gold} for c in corpus]})
    folder.mkdir()
    (folder / "corpus.json").write_text(json.dumps([{"title": c["title"], "text": c["text"]} for c in corpus],
                                                   indent=1), encoding="utf-8")
    (folder / "questions.json").write_text(json.dumps(questions, indent=1), encoding="utf-8")
    return folder


def test_bench_multihop_writes_a_line_per_question_and_resumes(ray_session, tmp_path, capsys):
    from cluster.cli import main

    dataset = musique_layout(tmp_path / "bridges")
    out = tmp_path / "chain.jsonl"
    common = ["bench", "multihop", "--dataset", str(dataset), "--strategy", "chain", "--out", str(out),
              "--data-dir", str(tmp_path / "home"), "--hoppers", "1"]

    assert main(common + ["--limit", "2"]) == 0
    first = capsys.readouterr()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    record = json.loads(lines[0])
    assert {"id", "question", "gold_answer", "answer", "retrieved", "hops", "tokens", "latency_s"} <= set(record)
    assert {"title", "text"} == set(record["retrieved"][0]) and record["hops"][0]["query"]
    summary = json.loads(first.out.strip().splitlines()[-1])
    assert summary["n"] == 2 and summary["Recall@5"] == 1.0 and summary["mean_tokens"] == 0
    assert "corpus in 'bench-bridges-" in first.err and "9 added" in first.err

    assert main(common) == 0  # the third question only; the first two are in the file
    second = capsys.readouterr()
    assert "2 already in chain.jsonl" in second.err and "0 added" in second.err  # the corpus was cached
    ids = [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert ids[:2] == [json.loads(line)["id"] for line in lines] and sorted(ids) == ["q0", "q1", "q2"]
    assert json.loads(second.out.strip().splitlines()[-1])["n"] == 3

    assert main(common + ["--strategy", "deep"]) == 2  # one file, one strategy
    assert "holds answers of strategy chain" in capsys.readouterr().err
