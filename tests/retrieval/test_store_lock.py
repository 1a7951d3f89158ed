"""A data dir held by another command: who holds it, since when, how far it is, said at once.

The long ingest is a real `raystorm ingest` of a few thousand generated files; the second command is a
real `raystorm search` of the same data dir, started while the ingest embeds."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from pathlib import Path

from retrieval.store_lock import Holder, StoreLock, read_holder
from test_cli_errors import RAYSTORM

WORDS = ("harbor tide lantern keeper granite ledger copper orchard meadow falcon river summit quarry "
         "willow ember beacon cobalt thistle marble saffron").split()


def write_corpus(folder: Path, files: int) -> None:
    folder.mkdir()
    for i in range(files):  # one short passage each: the ingest is long by their number, not their size
        words = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(12))
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\nEntry {i}: {words}.\n")


def env_for(root: Path) -> dict:
    return {**os.environ, "RAYSTORM_HOME": str(root / "home")}


def lines_of(stream) -> queue.Queue:
    """The lines of `stream` as they come, read on a thread."""
    out: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in stream:
            out.put(line)
        out.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return out


def test_a_search_during_a_long_ingest_says_at_once_what_it_waits_for_then_answers(tmp_path):
    write_corpus(tmp_path / "corpus", 4000)
    ingest = subprocess.Popen([RAYSTORM, "ingest", "corpus", "-c", "big", "-q"], cwd=tmp_path, env=env_for(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = tmp_path / "home" / "edge" / ".lock"
    try:
        deadline = time.monotonic() + 240
        while (holder := read_holder(lock)) is None or holder.stage != "embedding passages":
            assert ingest.poll() is None, ingest.stderr.read()
            assert time.monotonic() < deadline, "the ingest never started embedding"
            time.sleep(0.2)
        started = time.monotonic()
        search = subprocess.Popen([RAYSTORM, "search", "harbor tide lantern", "-c", "big", "-k", "2"], cwd=tmp_path,
                                  env=env_for(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        said, first = lines_of(search.stderr), ""
        while first is not None and "held by" not in first:
            first = said.get(timeout=60)
        told_after = time.monotonic() - started
        assert first is not None and "held by `raystorm ingest corpus" in first, first
        assert f"(pid {ingest.pid})" in first and "embedding passages" in first and " of " in first, first
        assert told_after < 30, told_after  # at once: well before the ingest ends (a generous bound)
        assert ingest.poll() is None, "the ingest ended before the search was told (make the corpus larger)"
        out, _ = search.communicate(timeout=300)
        assert search.returncode == 0, "".join(iter(said.get, None))
        assert "note-" in out, out
        assert ingest.wait(60) == 0
    finally:
        for proc in (ingest,):
            if proc.poll() is None:
                proc.kill()


def test_the_holder_line(tmp_path):
    now = time.time()
    holder = Holder(pid=7, command="ingest", argv="raystorm ingest docs", since=now - 300,
                    stage="embedding passages", done=250, total=1000, stage_since=now - 100)
    line = holder.line(now)
    assert line.startswith("held by `raystorm ingest docs` (pid 7) since ")
    assert "5 min ago: embedding passages 250 of 1,000, about 5 min left" in line
    lock = StoreLock(tmp_path, wait_s=1)
    lock.note("reading files", 12)
    assert read_holder(tmp_path / ".lock").line().endswith("reading files (12 so far)")
    lock.release()
