"""`raystorm report` end to end through the chat path against a real OpenAI-compatible server
(llama-cpp-python's, with Gemma 3 270M). The content will be poor; what must hold is that the run
completes or stops cleanly at a named stage, within a bound, without a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from storm_support import EXAMPLE_DIR

ROOT = Path(__file__).resolve().parents[2]
RUN_LIMIT_S = 1500  # ~9 tokens/s on two cores; a run that takes longer than this is hung


def test_report_through_a_real_llm_server(llama_server, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("flood-rider-form-fr-12.md", "bulletin-2022-11-flood-rider-waiting-period.md"):
        shutil.copy(EXAMPLE_DIR / name, corpus / name)
    cmd = [sys.executable, "-m", "cluster.cli", "report", "Harborline flood rider", "--corpus", str(corpus),
           "--data-dir", str(tmp_path / "home"), "--out", str(tmp_path / "out"),
           "--llm", llama_server.model, "--llm-base-url", llama_server.base_url,
           "--llm-max-tokens", "96", "--llm-timeout", "120", "--llm-retries", "1",
           "--personas", "0", "--turns", "1", "--search-k", "2"]
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_LIMIT_S)
    print(done.stdout[-2000:], done.stderr[-4000:], sep="\n")

    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    run_dir = tmp_path / "out" / "Harborline_flood_rider"
    assert (run_dir / "run_config.json").exists() and (run_dir / "llm_call_history.jsonl").exists()
    if done.returncode == 0:
        assert (run_dir / "report.md").read_text().startswith("# Harborline flood rider")
        assert "tokens" in done.stdout
    else:
        assert "stage '" in done.stderr and "rerun to resume" in done.stderr
    assert llama_server.model in (run_dir / "run_config.json").read_text()
