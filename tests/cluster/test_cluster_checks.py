"""What raystorm checks of a cluster and a join, without the multi-host bed (tests/hosts runs them on hosts).

- an LLM endpoint is probed from every node before the actors start: one that answers passes, one
  that refuses is named with the node that could not reach it;
- a refused join names the setting missing on this host: no token anywhere, or RAY_AUTH_MODE set
  to something other than token;
- an ingest that could not read a file it was asked for exits 3 naming it, unless --allow-skips;
- more embedding actors than the cluster has CPUs are refused before anything is read.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import retrieval.config
from cluster.cli import main
from cluster.distributed_checks import EndpointUnreachable, check_endpoints, lost_line
from cluster.runtime import refused_join, token_source

CORPUS = Path(retrieval.config.__file__).parent / "example_corpus"


def test_an_endpoint_is_checked_from_every_node(ray_cluster):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        check_endpoints([f"http://127.0.0.1:{port}/v1"])  # every node of this cluster shares the loopback
    with pytest.raises(EndpointUnreachable, match=r"http://127\.0\.0\.1:\d+/v1 is not reachable from node "
                                                  r"\S+ \(Connection refused\) \(a loopback address means"):
        check_endpoints([f"http://127.0.0.1:{port}/v1"])


def test_a_lost_node_line_says_what_ran_there_and_what_is_redone():
    line = lost_line("3f9a1c2e" + "0" * 48, "10.0.0.7", ["Expert[1]", "PersonaWriter[2]"])
    assert line.startswith("node 10.0.0.7 (3f9a1c2e) was lost") and "Expert[1], PersonaWriter[2]" in line
    assert "starts again on a fresh writer" in line


def test_a_refused_join_names_the_missing_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "absent"))
    assert token_source() is None
    error = refused_join("10.0.0.1:6379", ConnectionError("Failed to connect"))
    assert "no Ray token on this host" in str(error) and "$RAY_AUTH_TOKEN_PATH" in str(error)

    (tmp_path / "token").write_text("abc")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "token"))
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    error = refused_join("10.0.0.1:6379", ConnectionError("Failed to connect"))
    assert "RAY_AUTH_MODE=disabled, so the token in $RAY_AUTH_TOKEN_PATH" in str(error)


def test_an_ingest_that_could_not_read_a_file_exits_3_unless_allowed(tmp_path, capsys):
    missing = tmp_path / "gone.md"
    args = ["ingest", str(CORPUS / "glossary.md"), str(missing), "-c", "skips", "--data-dir", str(tmp_path / "home"),
            "-q"]
    assert main(args) == 3
    assert f"1 file(s) asked for could not be read on this host: {missing}" in capsys.readouterr().err
    assert main([*args, "--allow-skips"]) == 0


def test_more_embedding_workers_than_cpus_is_refused_before_any_work(ray_cluster, tmp_path):
    from cluster.ingest_pipeline import cluster_cpus, ingest_on_ray
    from retrieval.config import StoreSettings
    from retrieval.errors import UsageError
    from retrieval.ingest import Ingestor

    ingestor = Ingestor(StoreSettings.resolve(str(tmp_path / "home")))
    try:
        with pytest.raises(UsageError, match=rf"--embed-workers {cluster_cpus() + 1}: the cluster has"):
            ingest_on_ray(ingestor, [CORPUS], "too-many", workers=cluster_cpus() + 1)
        assert not ingestor.store.exists("too-many")
    finally:
        ingestor.store.close()
