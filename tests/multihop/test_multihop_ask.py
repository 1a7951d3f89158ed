"""`raystorm ask`: the answer, the hop trace and the cited passages, as text or one JSON object."""

from __future__ import annotations

import json

import pytest

from tests.support.multihop_helpers import COLLECTION, ingest_two_hop, two_hop_questions

QUESTION = two_hop_questions()[0]["question"]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    # a data dir of its own: the CLI opens the embedded store itself, and a folder has one owner
    return str(ingest_two_hop(tmp_path_factory.mktemp("ask-home")).data_dir)


def test_ask_json_holds_answer_trace_and_citations(home, capsys):
    from cluster.cli import main

    assert main(["ask", QUESTION, "-c", COLLECTION, "--strategy", "chain", "--json", "--data-dir", home]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["strategy"] == "chain" and "Tressling" in out["answer"]
    # the first hop asks the question's first nested relation (agents/multihop/decompose)
    assert out["hops"][0]["query"] == "engineer who designed the Kestrel Street Bridge" and len(out["hops"]) == 4
    assert all({"query", "answer", "passages", "supporting"} <= set(h) for h in out["hops"])
    cited = out["citations"][0]
    assert {"n", "title", "source", "line_start", "line_end", "text"} <= set(cited)
    assert out["usage"]["calls"] > 0 and out["usage"]["prompt_tokens"] == 0
    assert "no LLM configured" in captured.err


def test_ask_text_shows_hops_and_sources(home, capsys):
    from cluster.cli import main

    # --min-confidence 0: the answer's layout, whatever its confidence
    assert main(["ask", QUESTION, "-c", COLLECTION, "--data-dir", home, "--min-confidence", "0"]) == 0
    out = capsys.readouterr().out
    assert "chose 'chain'" in out and "Hops:" in out and "Sources:" in out
    assert "  2. In which city was Oona Marchetti born?" in out  # hop 2 asks the bridge's sub-question
    assert "oona-marchetti:" in out  # source with its line range


def test_ask_refuses_what_it_would_ignore(home, capsys):
    from cluster.cli import main

    assert main(["ask", QUESTION, "-c", COLLECTION, "--strategy", "naive", "--max-iter", "2",
                 "--data-dir", home]) == 2
    assert "--max-iter does not apply to naive" in capsys.readouterr().err
    assert main(["ask", QUESTION, "-c", "nope", "--data-dir", home]) == 1
    assert "collection 'nope' not found" in capsys.readouterr().err
