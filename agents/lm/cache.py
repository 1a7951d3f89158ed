"""A disk cache of chat completions, so that a rerun replays instead of paying twice.

An entry is keyed by the sha256 of the canonical JSON of the whole request (model,
messages, response_format, temperature, max_tokens, ...), never the endpoint URL or
the API key, so the same request to a moved server still hits. One file per entry,
written to a temporary file and renamed into place: several processes may share a
directory, and a reader never sees half an entry. Nothing is cached unless a
`CompletionCache` is constructed with a directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError


def request_key(request: dict) -> str:
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedCompletion(BaseModel):
    key: str
    model: str
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    request: dict = Field(description="the request that produced it, for inspection")


class CompletionCache:
    """Completions on disk under `directory/ab/abcdef....json`."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedCompletion | None:
        path = self._path(key)
        try:
            entry = CachedCompletion.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValidationError, ValueError):
            return None  # unreadable or from an older layout: a miss, overwritten by the next put
        return entry if entry.key == key else None

    def put(self, entry: CachedCompletion) -> None:
        path = self._path(entry.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(entry.model_dump_json().encode("utf-8"))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json")) if self.directory.exists() else 0
