"""`raystorm report --distributed` goes through the actor system and writes what the pipeline writes."""

from __future__ import annotations

from conftest import EXAMPLE_COLLECTION
from storm_runs import OPTIONS, TOPICS, artifacts, copy_home

from cluster.cli import main


def test_report_command_runs_distributed(ray_cluster, corpus_settings, reference, tmp_path, capsys):
    home = copy_home(corpus_settings, tmp_path / "home")
    topics = tmp_path / "topics.txt"
    topics.write_text("\n".join(TOPICS) + "\n")
    out = tmp_path / "out"
    args = ["report", "--topics", str(topics), "-c", EXAMPLE_COLLECTION, "--out", str(out),
            "--data-dir", home.data_dir, "--distributed", "--writers", "2", "--experts", "2",
            "--personas", str(OPTIONS.personas), "--turns", str(OPTIONS.turns), "--search-k", str(OPTIONS.search_k)]
    if not OPTIONS.polish:
        args.append("--no-polish")
    assert main(args) == 0
    printed = capsys.readouterr()
    assert "writers and" in printed.err  # the cluster placement line reached the driver
    assert printed.out.count("report.md") == len(TOPICS)
    assert artifacts(out) == reference


def test_cluster_options_are_refused_without_ray(capsys):
    assert main(["report", "topic", "-c", "x", "--writers", "2"]) == 2
    assert "only apply on Ray" in capsys.readouterr().err
