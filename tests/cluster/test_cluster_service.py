"""`raystorm serve`: a collection's actors stay up, and `raystorm report --address` runs its topics on them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import EXAMPLE_COLLECTION
from storm_runs import OPTIONS, TOPICS, artifacts, copy_home
from test_cli_errors import EXAMPLE_DIR

from agents.storm.artifacts import CALL_HISTORY, topic_slug
from cluster.cli import main
from cluster.service import find_service, service_info
from retrieval.ingest import Ingestor
from tests.support.llm_endpoint import start_endpoint  # the stand-in for a remote LLM, at the HTTP layer


def test_reports_run_on_the_service_keep_its_actors_and_leave_nothing_behind(
        ray_cluster, corpus_settings, tmp_path, capsys):
    """Two runs on one service, on the chat path (real HTTP to the stand-in endpoint): the second
    run's actors are the first run's, and it writes what the first wrote."""
    home = copy_home(corpus_settings, tmp_path / "home")
    endpoint = start_endpoint(latency="fixed:0")
    llm = ["--llm", "standin", "--llm-base-url", endpoint.url, "--no-llm-cache"]  # every run asks the endpoint
    where = ["-c", EXAMPLE_COLLECTION, "--data-dir", home.data_dir, "--address", ray_cluster.address]
    assert main(["serve", *where, *llm, "--writers", "2", "--experts", "2"]) == 0
    service = find_service(EXAMPLE_COLLECTION)
    try:
        assert "PersonaWriter[1]" in capsys.readouterr().out  # the placement of the service's actors
        topics = tmp_path / "topics.txt"
        topics.write_text("\n".join(TOPICS) + "\n")
        report = ["report", "--topics", str(topics), *where, *llm, "--personas", str(OPTIONS.personas),
                  "--turns", str(OPTIONS.turns), "--search-k", str(OPTIONS.search_k)]
        for run in ("first", "second"):
            assert main([*report, "--out", str(tmp_path / run)]) == 0
            printed = capsys.readouterr()
            assert "using the report service" in printed.err and "conversations: started" in printed.err
            assert printed.out.count("report.md") == len(TOPICS)
        assert artifacts(tmp_path / "second") == artifacts(tmp_path / "first")
        calls = [json.loads(line) for f in (tmp_path / "second").rglob(CALL_HISTORY) for line in f.open()]
        assert calls and all(c["ok"] and not c["cached"] and c["fallback"] is None and c["model"] == "standin"
                             for c in calls)
        assert main(["serve", *where, "--status"]) == 0
        assert "2 run(s) so far" in capsys.readouterr().out
        status = service_info(service)
        assert status.runs == 2 and status.topics_in_flight == 0
        # what the finished topics left on the actors went with them: the service does not grow
        assert status.held_writers == 0 and status.held_usage_records == 0

        # a report that asks for other settings, or to ingest, is told why it cannot use the service
        extractive = [a for a in report if a not in llm]
        assert main([*extractive, "--out", str(tmp_path / "other")]) == 2
        assert "llm.default differ" in capsys.readouterr().err
        assert main(["report", TOPICS[0], "--corpus", str(tmp_path), *where[2:], "--collection",
                     EXAMPLE_COLLECTION]) == 2
        assert "holds this collection's store" in capsys.readouterr().err
        assert main([*report, "--out", str(tmp_path / "react"), "--writer", "react"]) == 2
        assert "--report-agents" in capsys.readouterr().err
        assert main(["serve", *where]) == 2  # one service per collection
        assert "already running" in capsys.readouterr().err
    finally:
        assert main(["serve", *where, "--stop"]) == 0
        endpoint.stop()
    assert find_service(EXAMPLE_COLLECTION) is None
    Ingestor(home).store.close()  # the store is free again


def test_a_rerun_through_the_service_writes_what_changed(ray_cluster, tmp_path, capsys):
    """A topic reported through the service, one line it cites edited in a copy of the corpus (ingested
    again while the service is stopped: it holds the store), the topic reported again through a new
    service into the same folder: changes.md lists that claim, as a rerun without the service does."""
    shutil.copytree(EXAMPLE_DIR, tmp_path / "corpus")
    where = ["-c", "edited", "--data-dir", str(tmp_path / "home"), "--address", ray_cluster.address]
    report = ["report", TOPICS[0], *where, "--out", str(tmp_path / "runs"), "--personas", "1", "--turns", "2"]
    run = tmp_path / "runs" / topic_slug(TOPICS[0])

    def through_the_service() -> str:
        assert main(["ingest", str(tmp_path / "corpus"), *where[:4], "--quiet"]) == 0
        assert main(["serve", *where]) == 0
        try:
            assert main(report) == 0
        finally:
            assert main(["serve", *where, "--stop"]) == 0
        printed = capsys.readouterr().err
        assert "using the report service" in printed
        return printed

    assert "what changed" not in through_the_service() and not (run / "changes.md").exists()
    # a cited claim whose evidence is one line holding its text, so the edit changes that claim only
    claims = json.loads((run / "report.claims.json").read_text())["claims"]
    for claim in claims:
        (place,) = claim["evidence"]
        file = tmp_path / "corpus" / Path(place["path"]).name
        lines = file.read_text().splitlines(keepends=True)
        if place["line_start"] == place["line_end"] and claim["text"].endswith(".") \
                and lines[place["line_start"] - 1].rstrip().endswith(claim["text"]):
            break
    else:
        raise AssertionError("no claim cites a line of its own")
    lines[place["line_start"] - 1] = lines[place["line_start"] - 1].rstrip()[:-1] + ", as revised.\n"
    file.write_text("".join(lines))

    printed = through_the_service()
    assert f"what changed since the previous run: {run / 'changes.md'}" in printed
    changes = json.loads((run / "changes.json").read_text())
    edited = [c for c in changes["claims"] if c["kind"] == "changed"]
    assert [(c["before"]["text"], c["after"]["text"]) for c in edited] == \
        [(claim["text"], claim["text"][:-1] + ", as revised.")]
    assert claim["text"][:-1] + ", as revised." in (run / "changes.md").read_text()
    assert (run / "previous").is_dir()


def test_serve_needs_a_cluster_that_outlives_it(capsys, monkeypatch):
    for name in ("RAY_ADDRESS", "RAYSTORM_RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    assert main(["serve", "-c", EXAMPLE_COLLECTION]) == 2
    assert "ray start --head" in capsys.readouterr().err
