"""Files raystorm wrote and reads back (run logs, checkpoints, claims, histories, run configs).

Nothing is trusted because raystorm once wrote it: a file may be cut short by a full disk, edited by
hand or replaced. Each is validated on load, and a bad one is one `DamagedFile` line naming the file,
what is wrong with it and what to do, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from retrieval.errors import RaystormError

T = TypeVar("T")


class DamagedFile(RaystormError):
    """A file raystorm reads back is missing a part, is not JSON, or does not have the expected shape."""

    def __init__(self, path: Path, problem: str, fix: str):
        super().__init__(f"{path}: {problem}; {fix}")
        self.path = str(path)


def load_json(path: Path, shape: Any, fix: str) -> Any:
    """The content of `path` validated as `shape` (a pydantic model or any type pydantic knows);
    `fix` says what the user can do when the file is damaged."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DamagedFile(path, f"unreadable ({exc.strerror or exc})", fix) from None
    try:
        return TypeAdapter(shape).validate_json(data)
    except ValidationError as exc:
        raise DamagedFile(path, problem_of(exc), fix) from None


def problem_of(exc: ValidationError) -> str:
    """The first problem pydantic found, in one line."""
    error = exc.errors()[0]
    if error["type"] == "json_invalid":
        return f"not valid JSON ({error['msg'].removeprefix('Invalid JSON: ')}): the file was cut short or edited"
    where = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in error["loc"]).lstrip(".") or "the top level"
    return f"unexpected content at {where}: {error['msg']}"
