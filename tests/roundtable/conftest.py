"""Fixtures shared by the roundtable tests, so the bundled corpus is ingested once and Ray starts once.

- `settings` — retrieval/example_corpus ingested into a temp data dir as collection "example" (the discussion,
  the MCP tools and the web page all use it, one after another: the embedded store has one owner at a time).
- `ray_session` — tests/webresearch's local Ray for the session (reused when one runs); the `--distributed`
  runs join it in this process instead of each starting its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.store_points import ingested_settings
from tests.webresearch.conftest import ray_session  # noqa: F401  (the fixture: a local Ray, reused when one runs)

CORPUS = Path(__file__).resolve().parents[2] / "retrieval" / "example_corpus"


@pytest.fixture(scope="session")
def settings(tmp_path_factory):
    return ingested_settings(tmp_path_factory, CORPUS, "example", name="roundtable-home")
