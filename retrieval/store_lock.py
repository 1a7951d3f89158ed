"""Who owns a data dir's embedded store: the lock file, what it says about its holder, and the wait for it.

An embedded store opens in one process at a time. The owner holds an exclusive `flock` on `DATA_DIR/edge/
.lock` and writes there who it is: pid, command line, since when, and (an ingest) how far it has come,
updated as it goes. A command that finds the store held reads that and says it at once ("held by
`raystorm ingest docs` (pid 4242) since 03:41:07, 2 min ago: embedding 3,400 of 10,000 passages, about
3 min left"), then waits: for as long as the holder keeps making progress (an ingest that moves on is
worth waiting for; each new step is told), but no longer than `wait_s` with no progress, and not at all
for a long-lived server (`raystorm web`, `mcp`, `serve`), which would never let go.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sys
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

SERVERS = ("web", "mcp", "serve")  # commands that hold the store for as long as they run
NOTE_EVERY_S = 1.0  # an ingest's progress is written at most this often: a line in a file, not a log
TELL_EVERY_S = 10.0  # a waiting command repeats the holder's progress this often
_log = logging.getLogger(__name__)


class StoreInUse(RuntimeError):
    """Another process owns this data dir's embedded store (the message says who, since when, how far)."""


class Holder(BaseModel):
    """What the lock file says about the process that owns the store."""

    pid: int
    command: str  # the raystorm subcommand ("ingest", "web", ...), or the program's name
    argv: str = ""  # its command line, shortened
    since: float = 0.0  # when it took the store (Unix time)
    stage: str | None = None  # what it is doing now ("embedding passages")
    done: int | None = None
    total: int | None = None
    stage_since: float | None = None  # when the current stage began, for an estimate of what is left
    updated: float | None = None  # when the progress was last written

    def line(self, now: float | None = None) -> str:
        now = now or time.time()
        out = f"held by `{self.argv or 'raystorm ' + self.command}` (pid {self.pid})"
        if self.since:
            out += f" since {time.strftime('%H:%M:%S', time.localtime(self.since))}, {_ago(now - self.since)} ago"
        if self.stage:
            out += f": {self.stage}"
            if self.done is not None and not self.total:
                out += f" ({self.done:,} so far)"
            elif self.done is not None and self.total:
                out += f" {self.done:,} of {self.total:,}"
                if self.stage_since and 0 < self.done < self.total:
                    left = (now - self.stage_since) / self.done * (self.total - self.done)
                    out += f", about {_ago(left)} left"
        return out


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min"


def _command() -> str:
    """The raystorm command this process runs ("ask", "web", ...)."""
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    return args[0] if args and Path(sys.argv[0]).name == "raystorm" else Path(sys.argv[0]).name


def _argv() -> str:
    line = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])
    return line if len(line) <= 120 else line[:117] + "..."


class StoreLock:
    """The exclusive hold on one store folder; `note` tells waiting commands how far the holder is."""

    def __init__(self, root: Path, wait_s: float):
        self.path = root / ".lock"
        self._file = open(self.path, "a+")
        try:
            self._acquire(wait_s)
        except BaseException:
            self._file.close()
            raise
        self.holder = Holder(pid=os.getpid(), command=_command(), argv=_argv(), since=time.time())
        self._written = 0.0
        self._write()

    def _acquire(self, wait_s: float) -> None:
        deadline, told, last = time.monotonic() + wait_s, 0.0, None
        while True:
            try:
                fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                pass
            holder = read_holder(self.path)  # (None while the holder rewrites it, or wrote nothing)
            if holder is not None and holder.command in SERVERS:
                raise StoreInUse(holder.line())
            said = holder.line() if holder else "held by another process (it wrote no name)"
            progress = (holder.stage, holder.done) if holder else last
            if progress != last:  # the holder moves on: it is worth waiting for, as long again
                deadline, last = time.monotonic() + wait_s, progress
            if time.monotonic() >= deadline:
                raise StoreInUse(f"{said}; it made no progress for {wait_s:.0f} s")
            if time.monotonic() - told >= TELL_EVERY_S:
                _log.warning("waiting for the embedded store at %s, %s", self.path.parent, said)
                told = time.monotonic()
            time.sleep(0.2)

    def note(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        """Record how far this holder is, for commands that wait for the store (written at most once a
        second, and whenever the stage changes)."""
        h = self.holder
        changed = stage != h.stage
        h.stage, h.done, h.total = stage, done, total
        if changed:
            h.stage_since = time.time()
        if changed or time.monotonic() - self._written >= NOTE_EVERY_S or (done is not None and done == total):
            self._write()

    def _write(self) -> None:
        self.holder.updated = time.time()
        self._file.seek(0)
        self._file.truncate()
        self._file.write(self.holder.model_dump_json())
        self._file.flush()
        self._written = time.monotonic()

    def release(self) -> None:
        if not self._file.closed:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()


def read_holder(path: Path) -> Holder | None:
    """What the lock file at `path` says of its holder (None: nothing readable)."""
    try:
        return Holder.model_validate(json.loads(path.read_text() or "null") or {})
    except (OSError, ValueError, ValidationError):
        return None
