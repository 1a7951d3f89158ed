"""Reports on three hosts write the files of the one-process run: directly, through `serve`, as a job,
and while one worker's link goes down and another's raylet is killed (the log names the lost nodes).

An LLM endpoint only the driver's host reaches (its 127.0.0.1) is refused before any actor starts.
The fault test runs last: it takes two of the bed's three hosts away.
"""

from __future__ import annotations

import selectors
import time

import pytest

from cluster.cli import main
from tests.hosts.conftest import COLLECTION

TOPICS = ["Flood rider waiting period", "Small business policy revisions"]
SHAPE = ["--personas", "2", "--turns", "2"]
TIMING_FILES = {"llm_call_history.jsonl", "run_config.json"}  # call ids and times differ from run to run
FAULT_WAIT_S = 480.0


def artifacts(out_dir) -> dict[str, str]:
    return {str(p.relative_to(out_dir)): p.read_text(encoding="utf-8") for p in sorted(out_dir.rglob("*"))
            if p.is_file() and p.name not in TIMING_FILES}


@pytest.fixture(scope="module")
def bed_collection(bed_ingest):
    """The bundled corpus ingested on the bed (the ingest test checks its points)."""
    assert bed_ingest.returncode == 0, bed_ingest.stderr[-3000:]
    return COLLECTION


@pytest.fixture(scope="module")
def reference(one_process, tmp_path_factory) -> dict[str, str]:
    """Both topics researched in one process, one after another, as `raystorm report` does by default."""
    base = tmp_path_factory.mktemp("one-process-report")
    (base / "topics.txt").write_text("\n".join(TOPICS) + "\n")
    code = main(["report", "--topics", str(base / "topics.txt"), "-c", COLLECTION, "--data-dir",
                 one_process.data_dir, "--out", str(base / "out"), *SHAPE])
    assert code == 0
    return artifacts(base / "out")


def _topics_file(bed, name: str, topics: list[str]):
    path = bed.base / f"{name}-topics.txt"
    path.write_text("\n".join(topics) + "\n")
    return path


def assert_same_files(produced: dict[str, str], reference: dict[str, str]) -> None:
    """`produced` (one topic's files or more) is what the one-process run wrote for those topics."""
    folders = {name.split("/")[0] for name in produced}
    assert produced == {k: v for k, v in reference.items() if k.split("/")[0] in folders}


def test_a_report_on_three_hosts_writes_the_one_process_files(bed, bed_collection, reference):
    out = bed.base / "report-out"
    result = bed.raystorm(bed.head, "report", "--topics", str(_topics_file(bed, "report", TOPICS[:1])),
                          "-c", bed_collection, "--address", bed.address, "--out", str(out), *SHAPE)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_same_files(artifacts(out), reference)


def test_a_report_through_serve_and_a_submitted_job_write_the_one_process_files(bed, bed_collection, reference):
    started = bed.raystorm(bed.head, "serve", "-c", bed_collection, "--address", bed.address)
    assert started.returncode == 0, started.stderr[-3000:]
    try:
        out = bed.base / "serve-out"
        result = bed.raystorm(bed.head, "report", "--topics", str(_topics_file(bed, "serve", TOPICS[:1])),
                              "-c", bed_collection, "--address", bed.address, "--out", str(out), *SHAPE)
        assert result.returncode == 0, result.stderr[-3000:]
    finally:
        stopped = bed.raystorm(bed.head, "serve", "-c", bed_collection, "--address", bed.address, "--stop")
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    assert_same_files(artifacts(out), reference)

    # a job submitted from another host: its driver runs on the head, the paths are the head's
    out = bed.base / "job-out"
    job = bed.raystorm(bed.w1, "submit", "--address", bed.job_address, "--", "report", "--topics",
                       str(_topics_file(bed, "job", TOPICS[:1])), "-c", bed_collection, "--data-dir",
                       str(bed.head.home), "--out", str(out), *SHAPE)
    assert job.returncode == 0, (job.stdout + job.stderr)[-3000:]
    assert_same_files(artifacts(out), reference)


def test_an_endpoint_only_the_driver_reaches_is_refused_at_once(bed, bed_collection):
    port = 18048
    listener = bed.start(bed.head, [bed.python, "-c",
                                    "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', %d)); "
                                    "s.listen(); time.sleep(120)" % port])
    try:
        time.sleep(1.0)  # its bind
        started = time.monotonic()
        result = bed.raystorm(bed.head, "report", "Flood rider waiting period", "-c", bed_collection, "--address",
                              bed.address, "--llm", "local-model", "--llm-base-url", f"http://127.0.0.1:{port}/v1",
                              "--out", str(bed.base / "refused-out"), timeout=180)
        took = time.monotonic() - started
    finally:
        listener.kill()
        listener.wait(10)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if "LLM endpoint" in line]
    assert len(errors) == 1 and "not reachable from node 10.231.48." in errors[0], result.stderr[-3000:]
    assert took < 60, took  # refused before any actor started


def test_a_report_survives_a_link_down_and_a_killed_raylet_and_names_the_lost_nodes(bed, bed_collection, reference):
    out = bed.base / "fault-out"
    run = bed.start(bed.head, [bed.python, "-m", "cluster.cli", "report", "--topics",
                               str(_topics_file(bed, "fault", TOPICS)), "-c", bed_collection, "--address",
                               bed.address, "--out", str(out), *SHAPE])
    log, faults_at = [], None
    watch = selectors.DefaultSelector()
    watch.register(run.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + FAULT_WAIT_S
    try:
        while time.monotonic() < deadline:
            if watch.select(timeout=1.0):
                line = run.stderr.readline()
                if not line:
                    break
                log.append(line)
                if faults_at is None and "conversations" in line:  # mid-run: the interviews have started
                    bed.link_down(bed.w1)
                    bed.kill_raylet(bed.w2)
                    faults_at = time.monotonic()
        run.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(10)
    text = "".join(log)
    assert faults_at is not None, text[-3000:]
    assert run.returncode == 0, text[-3000:]
    for host in (bed.w1, bed.w2):
        assert f"node {host.ip} " in text and "was lost" in text, text[-3000:]
    produced = artifacts(out)
    assert {k: v for k, v in produced.items() if k.endswith("report.md")} == \
        {k: v for k, v in reference.items() if k.endswith("report.md")}
