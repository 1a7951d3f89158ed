"""A user's mistake gets one line on stderr and exit 2 (usage) or 1 (runtime), never a traceback.

Each invocation runs the installed `raystorm` in its own process with a fresh
RAYSTORM_HOME, as a user would; the Ctrl-C case sends a real SIGINT."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import retrieval.ingest

EXAMPLE_DIR = Path(retrieval.ingest.__file__).parent / "example_corpus"
RAYSTORM = str(Path(sys.executable).with_name("raystorm"))
FILES = ("flood-rider-form-fr-12.md", "bulletin-2022-11-flood-rider-waiting-period.md", "flood-claims-handling-memo.md")


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """A folder with a small corpus `C`, a regular file `FILE`, and an ingested collection `h`."""
    root = tmp_path_factory.mktemp("cli")
    (root / "C").mkdir()
    for name in FILES:
        shutil.copy(EXAMPLE_DIR / name, root / "C" / name)
    (root / "FILE").write_text("not a folder\n")
    (root / "latin1.txt").write_bytes("caf\xe9 flood\n".encode("latin-1"))
    done = raystorm(root, "ingest", "C", "-c", "h", "-q", home=root / "home")
    assert done.returncode == 0, done.stderr
    return root


def raystorm(cwd: Path, *args: str, home: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "RAYSTORM_LLM_API_KEY")}
    environ.update(RAYSTORM_HOME=str(home or cwd / "home"), **(env or {}))
    return subprocess.run([RAYSTORM, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=300)


LONG = "x" * 300
BAD = [
    # (arguments, exit code, words the one line must hold)
    (["ingest", "C", "-c", "../x"], 2, "collection name '../x' is not allowed"),
    (["ingest", "C", "-c", "a/b"], 2, "is not allowed"),
    (["ingest", "C", "-c", ""], 2, "is not allowed"),
    (["ingest", "C", "-c", "."], 2, "is not allowed"),
    (["ingest", "C", "-c", LONG], 2, "is not allowed"),
    (["ingest", "C", "-c", "h", "--max-words", "0"], 2, "--max-words"),
    (["ingest", "C"], 2, "--collection"),
    (["nosuchcommand"], 2, "invalid choice"),
    (["search", "flood", "-c", "h", "-k", "0"], 2, "must be from 1"),
    (["search", "flood", "-c", "h", "-k", "many"], 2, "expected a whole number"),
    (["search", "  ", "-c", "h"], 2, "the query is empty"),
    (["search", "flood", "-c", "nope"], 1, "collection 'nope' not found"),
    (["ask", "what?", "-c", "h", "--max-iter", "0"], 2, "--max-iter"),
    (["ask", "what?", "-c", "../h"], 2, "is not allowed"),
    (["report", "T", "-c", "h", "--out", "FILE"], 2, "is a file, not a folder"),
    (["report", "T", "-c", "h", "--out", "FILE/sub"], 1, "cannot write there"),
    (["report", "T", "-c", "h", "--personas", "1000000"], 2, "--personas"),
    (["report", "T", "-c", "h", "--turns", "1000000"], 2, "--turns"),
    (["report", "T", "-c", "h", "--turns", "0"], 2, "--turns"),
    (["report", "", "-c", "h"], 2, "the topic is empty"),
    (["report", "T", "-c", "a/b"], 2, "is not allowed"),
    (["report", "--topics", "latin1.txt", "-c", "h"], 2, "not UTF-8"),
    (["report", "T", "--corpus", "C", "--llm", "openai:gpt-4o-mini"], 2, "OPENAI_API_KEY is not set"),
]


@pytest.mark.parametrize("args,code,words", BAD, ids=[" ".join(a)[:40] for a, _, _ in BAD])
def test_a_mistake_is_one_line_and_an_exit_code(place, tmp_path, args, code, words):
    done = raystorm(place, *args, home=tmp_path / "home")
    lines = done.stderr.splitlines()
    assert "Traceback" not in done.stderr
    assert (done.returncode, len(lines)) == (code, 1), done.stderr
    assert words in lines[0] and lines[0].startswith("raystorm")


def test_a_missing_key_is_said_before_the_ingest(place, tmp_path):
    done = raystorm(place, "report", "T", "--corpus", "C", "--llm", "openai:gpt-4o-mini", home=tmp_path / "home")
    assert done.returncode == 2 and "ingested" not in done.stderr
    assert not (tmp_path / "home" / "qdrant").exists() or not any((tmp_path / "home" / "qdrant").rglob("*.sqlite"))


def test_ctrl_c_during_the_conversations_is_one_line(place, tmp_path):
    """SIGINT while the writers and experts talk: exit 130, one line, no autogen tracebacks."""
    environ = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    environ["RAYSTORM_HOME"] = str(place / "home")
    err = tmp_path / "err.txt"
    with err.open("w") as stderr:
        proc = subprocess.Popen([RAYSTORM, "report", "Harborline flood claims handling", "-c", "h", "--out",
                                 str(tmp_path / "O"), "--personas", "3", "--turns", "6"],
                                cwd=place, env=environ, stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + 120
        while "conversations:" not in err.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before the conversations stage"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    text = err.read_text()
    assert "Traceback" not in text and "task_done" not in text, text
    progress = [line for line in text.splitlines() if line.startswith("[")]
    rest = [line for line in text.splitlines() if not line.startswith(("[", "no LLM configured"))]
    assert progress and rest == ["raystorm report: interrupted; rerun the same command to resume"], text


def test_ctrl_c_stops_a_run_even_when_a_library_swallows_one_cancellation():
    import asyncio
    import threading

    from cluster.commands.common import run_async

    finished = []

    async def stubborn():
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            pass  # as a library below may do
        await asyncio.sleep(30)
        finished.append(True)

    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        run_async(stubborn())
    assert not finished  # cancelled again, not run to its end


def test_the_command_leaves_ray_as_it_ends_not_in_rays_exit_hook(monkeypatch):
    """`raystorm` disconnects from Ray when its command ends, however it ends (Ray's own exit hook first
    sleeps half a second for worker logs, which raystorm only forwards with RAYSTORM_RAY_LOGS=1)."""
    import ray  # noqa: F401  (a command that joined Ray has it loaded)

    import cluster.cli
    import cluster.runtime

    seen: list[str] = []
    monkeypatch.setattr(cluster.runtime, "shutdown", lambda: seen.append("left Ray"))
    monkeypatch.setattr(cluster.cli, "main", lambda argv=None: seen.append("ran") or 3)
    monkeypatch.delenv("RAYSTORM_RAY_LOGS", raising=False)
    assert cluster.cli.run() == 3 and seen == ["ran", "left Ray"]

    def interrupted(argv=None):
        raise KeyboardInterrupt

    seen.clear()
    monkeypatch.setattr(cluster.cli, "main", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cluster.cli.run()
    assert seen == ["left Ray"]

    seen.clear()
    monkeypatch.setattr(cluster.cli, "main", lambda argv=None: 0)
    monkeypatch.setenv("RAYSTORM_RAY_LOGS", "1")  # worker logs forwarded: Ray's hook waits for them
    assert cluster.cli.run() == 0 and seen == []
