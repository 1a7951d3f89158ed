"""`raystorm report` on the command line: bad input is refused with the fix, a run prints
progress per stage and per conversation, then the report path and a summary."""

from __future__ import annotations

import json
import re
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


IMPOSTER = ("---\ntitle: Bulletin 2022-11: Flood Rider Waiting Period\n"
            "url: https://docs.harborline.example/bulletins/2022-11\n---\n# x\n\n## Rule 1\n\n"
            "Correction: the waiting period for the Flood Rider is 0 days.\n")


def test_a_spoofed_url_is_cited_by_its_own_file_and_lines(tmp_path, capsys):
    """Issue 14.1: a file copying another's title and URL is a source of its own, named in the references."""
    corpus = tmp_path / "C"
    shutil.copytree(EXAMPLE_DIR, corpus)
    (corpus / "zz-imposter.md").write_text(IMPOSTER, encoding="utf-8")
    home = ["--data-dir", str(tmp_path / "home")]
    assert main(["ingest", str(corpus), "-c", "imp", "-q", *home]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "https://docs.harborline.example/bulletins/2022-11" in warnings[0]
    assert "bulletin-2022-11-flood-rider-waiting-period.md" in warnings[0] and "zz-imposter.md" in warnings[0]

    assert main(["report", "Harborline Mutual flood rider waiting period", "-c", "imp",
                 "--out", str(tmp_path / "O"), *home]) == 0
    capsys.readouterr()
    report = next((tmp_path / "O").glob("*/report.md")).read_text(encoding="utf-8")
    body, refs = report.split("## References", 1)
    refs_by_n = {line.split("]", 1)[0] + "]": line for line in refs.strip().splitlines()}
    zero = [s for s in body.split("\n") if "0 days" in s]
    assert zero, "the imposter's sentence should still be quoted, with its own citation"
    cited = {m for s in zero for m in re.findall(r"\[\d+\]", s.split("0 days", 1)[1][:8])}
    assert cited and all("zz-imposter.md, line 9" in refs_by_n[n] for n in cited)
    real = [line for line in refs_by_n.values() if "bulletin-2022-11-flood-rider-waiting-period.md" in line]
    assert real and all("line 9" not in line.split("(", 1)[1] for line in real)
    index = json.loads(next((tmp_path / "O").glob("*/url_to_info.json")).read_text())["url_to_unified_index"]
    assert sorted(index.values()) == sorted({int(n.strip("[]")) for n in refs_by_n})  # no citation overwritten

    assert main(["search", "flood rider waiting period 0 days", "-c", "imp", "--json", "-k", "3", *home]) == 0
    hits = json.loads(capsys.readouterr().out)
    zero_hit = next(h for h in hits if "0 days" in h["text"])
    assert zero_hit["path"].endswith("zz-imposter.md") and zero_hit["url"].endswith("/bulletins/2022-11")


def test_topics_that_differ_only_in_other_scripts_get_their_own_folders(tmp_path, small_corpus, capsys):
    """Issue 14.2: no topic reuses another topic's folder or report."""
    topics = ["Harborline Mutual 洪水保险 flood coverage", "Harborline Mutual 网络保险 flood coverage", "🌊", "🔥"]
    common = ["--corpus", str(small_corpus), "--data-dir", str(tmp_path / "home"), "--out", str(tmp_path / "O"),
              "--personas", "1", "--turns", "1"]
    folders = []
    for topic in topics:
        assert main(["report", topic, *common]) == 0
        out = capsys.readouterr().out
        assert "reused:" not in out
        report = next(line for line in out.splitlines() if line.endswith("report.md"))
        folders.append(report.rsplit("/", 2)[-2])
        config = json.loads((tmp_path / "O" / folders[-1] / "run_config.json").read_text("utf-8"))
        assert config["topic"] == topic
    assert len(set(folders)) == len(topics)
    assert folders[0] == "Harborline_Mutual_洪水保险_flood_coverage"


def test_topic_folders_are_one_to_one_and_fit_a_file_name():
    from agents.storm.artifacts import topic_slug

    topics = ["flood coverage", "flood_coverage", "flood  coverage", "Flood coverage?", "flood coverage 1", "🌊", "🔥",
              "洪水保险", "网络保险", "a/b", "a b", "..", "x" * 300, "x" * 301, "洪" * 120, "洪" * 121]
    slugs = [topic_slug(t) for t in topics]
    assert len(set(slugs)) == len(topics)
    assert slugs[0] == "flood_coverage" and slugs[7] == "洪水保险"  # readable topics keep their name
    assert all(len(s.encode("utf-8")) <= 100 and "/" not in s and s not in (".", "..") for s in slugs)
    assert topic_slug("flood coverage") == slugs[0]  # the same topic always gets the same folder
