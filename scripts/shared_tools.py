"""The evaluation tools shared beside the repository (`../shared/tools`: `outline_metrics.py`,
`freshwiki_corpus.py`), loaded from their folder by path: they are files, not an installed package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1].parent / "shared" / "tools"


def metrics_module(tools: Path = TOOLS):
    """`outline_metrics.py` of `tools` as a module (STORM's heading metrics and its MiniLM embedder)."""
    spec = importlib.util.spec_from_file_location("outline_metrics", Path(tools) / "outline_metrics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
