"""A roundtable's folder, `ROOT/<session id>/`: session.json (saved atomically after every turn) and, once
written, report.md with its claim sidecar. A damaged session file is one `DamagedFile` line."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from agents.roundtable.records import RoundtableSession
from agents.storm.artifacts import _write, topic_slug
from retrieval.errors import UsageError
from retrieval.saved import load_json

SESSION = "session.json"
_ID = re.compile(r"^[^\W][\w.-]{0,159}$")


def new_session_id(topic: str) -> str:
    return f"{topic_slug(topic)[:60].strip('_-') or 'roundtable'}-{uuid.uuid4().hex[:8]}"


class SessionFiles:
    """Where sessions live (`root`, e.g. $RAYSTORM_HOME/roundtables)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).expanduser().resolve()

    def folder(self, session_id: str) -> Path:
        if not _ID.match(session_id) or session_id in (".", ".."):
            raise UsageError(f"'{session_id}' is not a roundtable session id (letters, digits, '.', '-', '_')")
        return self.root / session_id

    def save(self, session: RoundtableSession) -> Path:
        path = self.folder(session.id) / SESSION
        _write(path, session.model_dump_json(indent=1) + "\n")
        return path

    def locate(self, ref: str) -> Path:
        """The session file of `ref`: a session id under `root`, a session's folder, or its session.json."""
        given = Path(ref).expanduser()
        for candidate in (given, given / SESSION):
            if candidate.is_file():
                return candidate.resolve()
        if "/" not in ref and _ID.match(ref) and (self.root / ref / SESSION).is_file():
            return self.root / ref / SESSION
        known = sorted(p.parent.name for p in self.root.glob(f"*/{SESSION}"))[-5:] if self.root.is_dir() else []
        hint = f"; sessions in {self.root}: {', '.join(known)}" if known else f"; none in {self.root} yet"
        raise UsageError(f"no roundtable session '{ref}'{hint}")

    def load_id(self, session_id: str) -> RoundtableSession:
        """A session by its id alone (what a face takes from outside: never a path)."""
        path = self.folder(session_id) / SESSION
        if not path.is_file():
            raise UsageError(f"no roundtable session '{session_id}'")
        return load_json(path, RoundtableSession, "the session cannot be resumed; start a new roundtable")

    def load(self, ref: str) -> RoundtableSession:
        return load_json(self.locate(ref), RoundtableSession,
                         "the session cannot be resumed; start a new roundtable (the report, if written, stays)")

    def list(self) -> list[str]:
        return sorted(p.parent.name for p in self.root.glob(f"*/{SESSION}")) if self.root.is_dir() else []
