"""`raystorm report` on the command line: bad input is refused with the fix, a run prints
progress per stage and per conversation, then the report path and a summary."""

from __future__ import annotations

import shutil

import pytest

from cluster.cli import main
from storm_support import EXAMPLE_DIR

FILES = ("flood-rider-form-fr-12.md", "bulletin-2022-11-flood-rider-waiting-period.md", "flood-claims-handling-memo.md")


@pytest.fixture
def small_corpus(tmp_path):
    folder = tmp_path / "flood docs"
    folder.mkdir()
    for name in FILES:
        shutil.copy(EXAMPLE_DIR / name, folder / name)
    return folder


def test_an_empty_topic_is_a_usage_error(tmp_path, capsys):
    assert main(["report", "  ", "--collection", "x", "--data-dir", str(tmp_path)]) == 2
    assert "the topic is empty" in capsys.readouterr().err


def test_a_topic_needs_something_to_research(tmp_path, capsys):
    assert main(["report", "flood", "--data-dir", str(tmp_path)]) == 2
    assert "--corpus PATH" in capsys.readouterr().err


def test_an_unknown_collection_names_the_fix(tmp_path, capsys):
    assert main(["report", "flood", "--collection", "nope", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "collection 'nope' not found" in err and "raystorm ingest" in err


def test_an_empty_corpus_names_the_fix(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", "flood", "--corpus", str(tmp_path / "empty"), "--data-dir", str(tmp_path / "home")]) == 1
    assert "no loadable documents found" in capsys.readouterr().err


def test_llm_tuning_without_an_llm_is_refused(tmp_path, small_corpus, capsys):
    assert main(["report", "flood", "--corpus", str(small_corpus), "--llm-max-tokens", "64",
                 "--data-dir", str(tmp_path / "home")]) == 2
    assert "--llm-max-tokens" in capsys.readouterr().err


def test_topics_from_a_file_end_to_end(tmp_path, small_corpus, capsys):
    topics = tmp_path / "topics.txt"
    topics.write_text("# flood topics\nHarborline flood rider\n\nflood claims handling  # the memo\n")
    args = ["report", "--topics", str(topics), "--corpus", str(small_corpus), "--data-dir", str(tmp_path / "home"),
            "--out", str(tmp_path / "out"), "--personas", "1", "--turns", "2"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "into 'flood-docs'" in err and "no LLM configured" in err
    assert "[Harborline flood rider] conversations: 1/2 done" in err and "[flood claims handling] outline:" in err
    reports = [line for line in out.splitlines() if line.endswith("report.md")]
    assert [r.split("/")[-2] for r in reports] == ["Harborline_flood_rider", "flood_claims_handling"]
    assert "personas, " in out and " citations, 0 tokens, " in out
    assert (tmp_path / "out" / "flood_claims_handling" / "storm_gen_article_polished.txt").exists()

    assert main(args) == 0  # everything is reused the second time
    assert "(reused: personas, conversations, outline, article, polish)" in capsys.readouterr().out
