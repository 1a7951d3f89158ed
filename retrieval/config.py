"""Where raystorm keeps its data, and how a store is reached.

`RAYSTORM_HOME` (default `~/.raystorm`) holds the embedded Qdrant store, model
folders, caches and runs; every command's `--data-dir` overrides it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, Field

from retrieval.errors import UsageError

DEFAULT_DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def data_home(override: str | os.PathLike | None = None) -> Path:
    if override:
        return Path(override).expanduser().resolve()
    env = os.environ.get("RAYSTORM_HOME")
    return Path(env).expanduser().resolve() if env else Path.home() / ".raystorm"


class StoreSettings(BaseModel):
    """How to reach the passage store and which models embed it. Safe to print and to ship."""

    data_dir: str = Field(description="RAYSTORM_HOME: embedded store, models, caches, runs")
    qdrant_url: str | None = Field(default=None, description="a Qdrant server; None = embedded on disk")
    dense_model: str = DEFAULT_DENSE_MODEL

    @classmethod
    def resolve(cls, data_dir: str | None = None, qdrant_url: str | None = None,
                dense_model: str | None = None) -> "StoreSettings":
        return cls(data_dir=str(data_home(data_dir)),
                   qdrant_url=qdrant_url or os.environ.get("QDRANT_URL") or None,
                   dense_model=dense_model or os.environ.get("RAYSTORM_DENSE_MODEL") or DEFAULT_DENSE_MODEL)

    @property
    def qdrant_api_key(self) -> str | None:
        # read at use, never stored, so settings written to run_config.json hold no secret
        return os.environ.get("QDRANT_API_KEY") or None

    @property
    def edge_path(self) -> Path:
        """The embedded store (Qdrant Edge): one shard per collection."""
        return Path(self.data_dir) / "edge"

    @property
    def qdrant_path(self) -> Path:
        """Where raystorm's store was before the Edge engine (qdrant-client's local mode): read only by
        `raystorm collections migrate`."""
        return Path(self.data_dir) / "qdrant"

    @property
    def models_dir(self) -> Path:
        return Path(self.data_dir) / "models"


_COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def check_collection_name(name: str) -> str:
    """`name` if it can name a collection (a folder in embedded mode), else a `UsageError` saying what can."""
    if not _COLLECTION_NAME.fullmatch(name or ""):
        shown = name if len(name or "") <= 40 else f"{name[:37]}..."
        raise UsageError(f"collection name {shown!r} is not allowed: use 1 to 100 letters, digits, '-', '_' "
                         f"or '.', starting with a letter or digit (e.g. harborline-2024)")
    return name
