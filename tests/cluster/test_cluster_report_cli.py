"""`raystorm report --distributed` goes through the actor system and writes what the pipeline writes."""

from __future__ import annotations

import json

from conftest import EXAMPLE_COLLECTION
from storm_runs import OPTIONS, TOPICS, artifacts, copy_home

from agents.storm.artifacts import CALL_HISTORY
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


def test_the_react_writer_writes_the_same_report_on_the_actor_system(ray_cluster, corpus_settings, tmp_path, capsys):
    """`--writer react` in process and with --distributed (sections on ReportAgent actors): same files."""
    from agents.report.flow import AGENT_LOG

    home = copy_home(corpus_settings, tmp_path / "home")
    topic = TOPICS[0]
    base = ["report", topic, "-c", EXAMPLE_COLLECTION, "--data-dir", home.data_dir, "--writer", "react",
            "--personas", "1", "--turns", "2"]
    assert main([*base, "--out", str(tmp_path / "local")]) == 0
    assert main([*base, "--out", str(tmp_path / "ray"), "--distributed", "--writers", "1", "--experts", "1"]) == 0
    assert "ReportAgent" in capsys.readouterr().err  # the placement line names the report agent actor
    local = {k: v for k, v in artifacts(tmp_path / "local").items() if not k.endswith(AGENT_LOG)}
    distributed = {k: v for k, v in artifacts(tmp_path / "ray").items() if not k.endswith(AGENT_LOG)}
    assert any(k.endswith("section_01.json") for k in local) and local == distributed
    # insight_forge's sub-questions went to the Hopper actors, their calls filed under the section and tool
    (history,) = (tmp_path / "ray").rglob(CALL_HISTORY)
    forged = [json.loads(line) for line in history.read_text().splitlines() if '"insight_forge"' in line]
    hops = [c for c in forged if c["step"].startswith("multihop.")]
    assert hops and all(c["actor"].startswith("Hopper") and c["section"] is not None for c in hops)
