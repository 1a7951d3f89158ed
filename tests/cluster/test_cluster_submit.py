"""`raystorm submit` against a real Ray head with its job server, token auth on, loopback only."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import EXAMPLE_COLLECTION
from storm_runs import copy_home

from agents.storm.artifacts import RunFiles
from cluster.commands.submit import entrypoint
from retrieval.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
START_TIMEOUT_S = 180
JOB_TIMEOUT_S = 420


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.fixture(scope="module")
def job_head(tmp_path_factory):
    """`ray start --head --block` with its own temp dir, ports and token; stopped by ending that process
    (never `ray stop`, which would end every Ray on the machine)."""
    base = Path(tmp_path_factory.mktemp("ray-head"))
    temp_dir = Path("/tmp") / f"rs-head-{os.getpid()}"  # short: Ray's socket paths must fit in 107 bytes
    (gcs, dash, client, agent_http, agent_grpc, runtime_env, metrics, node_manager, object_manager) = free_ports(9)
    # started as a service manager would: `/venv/bin/ray start` with the venv NOT on PATH, so a job's
    # bare `python` would be the system's (which lacks raystorm's dependencies)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != VENV_BIN)
    env = {**os.environ, "PATH": path, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env.pop("VIRTUAL_ENV", None)
    for name in ("RAY_ADDRESS", "RAYSTORM_RAY_ADDRESS"):
        env.pop(name, None)
    cmd = [str(VENV_BIN / "ray"), "start", "--head", "--block", "--disable-usage-stats",
           "--node-ip-address=127.0.0.1", "--dashboard-host=127.0.0.1", "--include-dashboard=true",
           f"--port={gcs}", f"--dashboard-port={dash}", f"--ray-client-server-port={client}",
           f"--dashboard-agent-listen-port={agent_http}", f"--dashboard-agent-grpc-port={agent_grpc}",
           f"--runtime-env-agent-port={runtime_env}", f"--metrics-export-port={metrics}",
           f"--node-manager-port={node_manager}", f"--object-manager-port={object_manager}",
           "--num-cpus=2", f"--temp-dir={temp_dir}"]
    log = open(base / "head.log", "w")
    head = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"http://127.0.0.1:{dash}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                urllib.request.urlopen(f"{address}/api/version", timeout=2)
                break
            except urllib.error.HTTPError:  # 401 without the token: the job server is up
                break
            except OSError:
                if head.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the Ray head did not start: {(base / 'head.log').read_text()[-2000:]}")
                time.sleep(1)
        yield address, env, base
    finally:
        head.terminate()
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_entrypoint_runs_the_cli_through_the_python_that_runs_ray():
    assert entrypoint(["--", "report", "--topics", "t.txt"]).endswith('exec "$py" -m cluster.cli report --topics t.txt')
    assert entrypoint(["raystorm", "ask", "why?"]).endswith("-m cluster.cli ask 'why?'")
    # run as the job supervisor runs it (`sh -c`, from a process of this venv's Python, whose own
    # executable resolves past the venv's symlink), with a PATH that has no venv on it
    shell = subprocess.run([sys.executable, "-c", "import ray, subprocess, sys; sys.exit(subprocess.run("
                            "sys.argv[1], shell=True, env={'PATH': '/usr/bin:/bin'}).returncode)",
                            entrypoint(["--", "collections", "--help"])], capture_output=True, text=True, timeout=120)
    assert shell.returncode == 0 and "collections" in shell.stdout, shell.stderr[-2000:]
    with pytest.raises(UsageError, match="nothing to submit"):
        entrypoint(["--"])
    with pytest.raises(UsageError, match="`submit` is not a raystorm command that runs as a job"):
        entrypoint(["submit"])


def test_submit_runs_a_report_job_and_waits_for_it(job_head, corpus_settings, tmp_path):
    address, env, _ = job_head
    home = copy_home(corpus_settings, tmp_path / "home")
    out = tmp_path / "runs"
    topics = tmp_path / "topics.txt"
    topics.write_text("Flood rider waiting period\n", encoding="utf-8")
    report = ["report", "--topics", str(topics), "--collection", EXAMPLE_COLLECTION, "--data-dir", home.data_dir,
              "--out", str(out), "--personas", "1", "--turns", "1"]
    done = subprocess.run([str(VENV_BIN / "raystorm"), "submit", "--address", address, "--working-dir", str(REPO),
                           "--timeout", str(JOB_TIMEOUT_S), "--", *report],
                          env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT_S + 60)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "SUCCEEDED" in done.stderr
    assert "[Flood rider waiting period]" in done.stdout + done.stderr  # the job's log was streamed here
    folder = RunFiles(out, "Flood rider waiting period").dir
    assert "## References" in (folder / "report.md").read_text()
    for name in ("conversation_log.json", "storm_gen_outline.txt", "url_to_info.json", "llm_call_history.jsonl"):
        assert (folder / name).is_file()


def token_home(env: dict, tmp_path: Path) -> dict:
    """The environment of a user whose token is only in ~/.ray/auth_token (RAY_AUTH_MODE unset)."""
    home = tmp_path / "user"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(env["RAY_AUTH_TOKEN"])
    user = {k: v for k, v in env.items() if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH")}
    user["HOME"] = str(home)
    return user


def test_submit_reads_the_token_file_and_plain_ray_job_submit_works_too(job_head, tmp_path):
    address, env, _ = job_head
    user = token_home(env, tmp_path)
    data = tmp_path / "empty-home"
    done = subprocess.run([str(VENV_BIN / "raystorm"), "submit", "--address", address, "--no-wait", "--",
                           "collections", "--data-dir", str(data)], env=user, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith("raysubmit_")
    # the documented plain form: `ray job submit` sends the token once RAY_AUTH_MODE=token is set (the
    # head's PATH lacks the venv here, so the job names the installed command by its path)
    done = subprocess.run([str(VENV_BIN / "ray"), "job", "submit", "--address", address, "--working-dir", str(REPO),
                           "--", str(VENV_BIN / "raystorm"), "collections", "--data-dir", str(data)],
                          env={**user, "RAY_AUTH_MODE": "token"}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no collections in" in done.stdout and "succeeded" in done.stdout.lower()


def test_submit_without_the_token_is_refused_with_the_fix(job_head, tmp_path):
    address, env, _ = job_head
    anonymous = {k: v for k, v in env.items() if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
    anonymous["HOME"] = str(tmp_path)  # no ~/.ray/auth_token either
    done = subprocess.run([str(VENV_BIN / "raystorm"), "submit", "--address", address, "--no-wait", "--",
                           "collections"], env=anonymous, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "refused the token" in done.stderr and "RAY_AUTH_TOKEN" in done.stderr
