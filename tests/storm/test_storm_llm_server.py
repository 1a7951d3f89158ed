"""`raystorm report` and `raystorm ask --strategy chain` end to end through the chat path against a real
OpenAI-compatible server: llama-cpp-python's, serving SmolLM2-135M-Instruct (tests/llm_server.py).

The content of a 135M model is poor; what must hold is that both runs complete (a bad reply degrades
that one call to the extractive model, never the run), every citation resolves to a source, and the
fallback counts are reported — in the run's output and per call in llm_call_history.jsonl."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storm_support import EXAMPLE_DIR

ROOT = Path(__file__).resolve().parents[2]
RUN_LIMIT_S = 1200  # a run that takes longer than this on two loaded cores is hung
FILES = ("flood-rider-form-fr-12.md", "bulletin-2022-11-flood-rider-waiting-period.md",
         "endorsement-fe-24-flood-waiting-period-exceptions.md")
FELL_BACK = re.compile(r"LLM calls: (\d+) of (\d+) calls fell back to the extractive model(; by step: .+)?")


@pytest.fixture(scope="module")
def home(tmp_path_factory, llama_server):
    """The corpus ingested once as collection 'ex', and the options that point at the server."""
    base = tmp_path_factory.mktemp("smollm2")
    corpus = base / "corpus"
    corpus.mkdir()
    for name in FILES:
        shutil.copy(EXAMPLE_DIR / name, corpus / name)
    done = raystorm("ingest", str(corpus), "-c", "ex", "--data-dir", str(base / "home"), "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    llm = ["--llm", llama_server.model, "--llm-base-url", llama_server.base_url, "--llm-max-tokens", "160",
           "--llm-timeout", "300", "--llm-retries", "1"]
    return base, llm


def raystorm(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    done = subprocess.run([sys.executable, "-m", "cluster.cli", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=RUN_LIMIT_S)
    print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
    assert "Traceback" not in done.stderr
    return done


def reported_fallbacks(stdout: str) -> tuple[int, int]:
    found = FELL_BACK.search(stdout)
    assert found, "the run does not say how many calls fell back"
    return int(found[1]), int(found[2])


def test_report_completes_on_a_small_instruct_model(home, llama_server):
    base, llm = home
    done = raystorm("report", "Harborline Mutual flood coverage", "-c", "ex", "--data-dir", str(base / "home"),
                    "--out", str(base / "out"), "--personas", "1", "--turns", "1", "--search-k", "3", *llm)

    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = base / "out" / "Harborline_Mutual_flood_coverage"
    report = (run_dir / "report.md").read_text()
    assert report.startswith("# Harborline Mutual flood coverage")
    body, _, references = report.partition("\n## References")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    listed = {int(n) for n in re.findall(r"^\s*(?:\d+\.\s*)?\[(\d+)\]", references, re.MULTILINE)}
    # a 135M model's outline may leave nothing to write (the report then says so); what is cited resolves
    assert cited <= listed, f"citations {sorted(cited - listed)} resolve to no reference"
    calls = [json.loads(line) for line in (run_dir / "llm_call_history.jsonl").read_text().splitlines()]
    chat = [c for c in calls if c["model"] == llama_server.model]
    assert chat and all(c["ok"] for c in chat)
    fell_back = [c for c in chat if c["fallback"] == "extractive"]
    assert all(c["fallback_reason"] for c in fell_back)
    # the summary counts the whole run; the history is this topic's, here the same
    assert reported_fallbacks(done.stdout) == (len(fell_back), len(chat))
    assert llama_server.model in (run_dir / "run_config.json").read_text()


def test_chain_ask_completes_and_cites_on_a_small_instruct_model(home):
    base, llm = home
    done = raystorm("ask", "How long is the waiting period of the Harborline flood rider?", "-c", "ex",
                    "--data-dir", str(base / "home"), "--strategy", "chain", "--max-iter", "1", "--json", *llm)

    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert answer["answer"].strip() and len(answer["hops"]) >= 1
    retrieved = {p["text"] for p in answer["retrieved"]}
    from agents.multihop.trace import found_nothing

    assert answer["citations"] or found_nothing(answer["answer"]), "a claim with no sources"
    assert all(c["text"] in retrieved for c in answer["citations"])
    numbers = {c["n"] for c in answer["citations"]}
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])} <= numbers
    usage = answer["usage"]
    assert usage["calls"] >= 3 and usage["fallback_calls"] <= usage["calls"]
    reported = re.match(r"(\d+) of (\d+) calls fell back to the extractive model", usage["fallback_summary"])
    assert reported and int(reported[1]) == usage["fallback_calls"] and int(reported[2]) == usage["calls"]


def test_the_report_agent_goes_on_when_the_server_ignores_tools(home, llama_server):
    """llama.cpp's server (chat format chatml) ignores `tools` and answers in prose: the agent must see
    that no tool was called, never take the prose for a result, and ask for its decisions as JSON."""
    base, _ = home
    react = f"react={llama_server.model}@{llama_server.base_url}"
    done = raystorm("report", "Harborline Mutual flood coverage", "-c", "ex", "--data-dir", str(base / "home"),
                    "--out", str(base / "react"), "--personas", "1", "--turns", "1", "--writer", "react",
                    "--react-max-calls", "2", "--role-llm", react, "--llm-max-tokens", "160", "--llm-timeout", "300",
                    "--llm-retries", "1")

    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = base / "react" / "Harborline_Mutual_flood_coverage"
    calls = [json.loads(line) for line in (run_dir / "llm_call_history.jsonl").read_text().splitlines()]
    choose = [c for c in calls if c["step"] == "report.react.choose"]
    assert choose[0]["output_mode"] == "tools" and choose[0]["fallback"] == "extractive"  # prose twice: no call
    assert all(c["output_mode"] != "tools" for c in choose[1:])  # asked as JSON from then on
    log = [json.loads(line) for line in (run_dir / "agent_log.jsonl").read_text().splitlines()]
    results = {e["call_id"] for e in log if e["kind"] == "tool_result"}
    assert results and results == {e["call_id"] for e in log if e["kind"] == "tool_call"}
    assert (run_dir / "report.md").read_text().startswith("# Harborline Mutual flood coverage")
