"""The bundled report, written once for the export tests as a user writes it: `raystorm report` on a copy
of the bundled corpus, in its own RAYSTORM_HOME (embedded Qdrant, the offline models)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from test_cli_errors import EXAMPLE_DIR, raystorm

TOPIC = "Harborline Mutual flood coverage"


@pytest.fixture(scope="session")
def bundled_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bundled")
    shutil.copytree(EXAMPLE_DIR, root / "corpus")
    done = raystorm(root, "report", TOPIC, "--corpus", "corpus", "--out", "runs")
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "runs" / TOPIC.replace(" ", "_")
