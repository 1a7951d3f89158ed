"""The stand-in LLM endpoint (`tests/support/llm_endpoint.py`) under a real `raystorm report`.

The report runs in this process through the chat path (autogen's OpenAI client, real HTTP on
loopback) against the endpoint: every step gets a schema-valid reply that cites passages of the
prompt; the concurrency cap answers 429 and raystorm retries through it; injected failures
(500, 429, timeouts, truncated and junk replies) are retried, repaired or fall back per call, and
the run completes; the endpoint's log and the run's llm_call_history.jsonl count the same requests.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from cluster.cli import main
from tests.support.llm_endpoint import (Latency, parse_mix, peak_concurrency, read_log, reply_text,
                                        start_endpoint)

ROOT = Path(__file__).resolve().parents[2]

TOPIC = "Harborline Mutual flood coverage"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A data dir holding the bundled example corpus as collection 'example' (ingested once)."""
    import retrieval.config

    home = tmp_path_factory.mktemp("home")
    corpus = Path(retrieval.config.__file__).parent / "example_corpus"
    assert main(["ingest", str(corpus), "--collection", "example", "--data-dir", str(home), "--quiet"]) == 0
    return home


def report(home: Path, out: Path, url: str, *extra: str) -> int:
    return main(["report", TOPIC, "-c", "example", "--data-dir", str(home), "--out", str(out),
                 "--personas", "1", "--turns", "2", "--llm", "standin", "--llm-base-url", url,
                 "--no-llm-cache", *extra])


def history(out: Path) -> list[dict]:
    folder = next(p for p in out.iterdir() if p.is_dir())
    return [json.loads(line) for line in (folder / "llm_call_history.jsonl").read_text().splitlines()]


def test_a_report_through_the_endpoint_cites_real_sources(home, tmp_path):
    with start_endpoint(latency="fixed:5") as ep:
        assert report(home, tmp_path / "out", ep.url) == 0
        log = ep.requests()
    calls = history(tmp_path / "out")
    steps = Counter(c["step"] for c in calls)
    for step in ("storm.perspectives", "storm.writer.ask", "storm.expert.queries", "storm.expert.answer",
                 "storm.outline.draft", "storm.outline.refine", "storm.article.section", "storm.article.polish"):
        assert steps[step] > 0, f"no {step} call"
    # every step took the endpoint's first reply as it was: no repair, no fallback, no error
    assert all(c["ok"] and not c["repaired"] and c["fallback"] is None and c["model"] == "standin" for c in calls)
    assert all(e["status"] == 200 and e["reply"] == "schema" for e in log)
    assert len(log) == sum(c["attempts"] for c in calls)
    folder = next(p for p in (tmp_path / "out").iterdir() if p.is_dir())
    text = (folder / "report.md").read_text()
    body, _, references = text.partition("## References")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    assert cited, "the report cites nothing"
    listed = {int(n): rest for n, rest in re.findall(r"^\[(\d+)\] (.+?)\s*$", references, re.MULTILINE)}
    assert cited <= set(listed), f"citations {sorted(cited - set(listed))} have no reference"
    corpus = ROOT / "retrieval" / "example_corpus"
    assert all("harborline.example" in ref or any(p.name in ref for p in corpus.iterdir()) for ref in listed.values())
    # what a [n] follows is text of the corpus, copied from a passage of the prompt
    words = " ".join(" ".join(p.read_text().split()) for p in corpus.iterdir())
    claims = [" ".join(c.split()) for c in re.findall(r"([^\]\n#]{30,}?)\[\d+\]", body)]
    found = [c for c in claims if c.strip(" .")[-40:] in words]
    assert claims and len(found) >= 0.8 * len(claims), f"{len(found)} of {len(claims)} cited sentences are corpus text"


def test_the_cap_answers_429_and_raystorm_retries_through_it(home, tmp_path):
    with start_endpoint(latency="fixed:20", max_concurrency=1) as ep:
        assert report(home, tmp_path / "out", ep.url, "--llm-concurrency", "4", "--llm-retries", "12") == 0
        log = ep.requests()
    over = [e for e in log if e["outcome"] == "over_cap"]
    assert over and all(e["status"] == 429 for e in over), "4 requests in flight against a cap of 1 never hit it"
    assert peak_concurrency(log) == 1
    calls = history(tmp_path / "out")
    assert all(c["ok"] and c["fallback"] is None for c in calls)
    assert sum(c["attempts"] for c in calls) == len(log)
    assert any(c["attempts"] > 1 for c in calls)


def test_injected_failures_are_survived(home, tmp_path):
    with start_endpoint(latency="fixed:5", fail_rate=0.3, fail_mix="429=1,500=1,timeout=1,truncated=1,junk=1",
                        stall_s=1.5, seed=7) as ep:
        assert report(home, tmp_path / "out", ep.url, "--llm-timeout", "0.5", "--llm-retries", "8") == 0
        log = ep.requests()
    outcomes = Counter(e["outcome"] for e in log)
    for kind in ("injected", "timeout", "truncated", "junk"):
        assert outcomes[kind] > 0, f"no {kind} failure was injected: {outcomes}"
    calls = history(tmp_path / "out")
    assert all(c["ok"] for c in calls)
    assert any(c["repaired"] for c in calls), "a truncated or junk reply earns a repair turn"
    assert sum(c["attempts"] for c in calls) == len(log)
    folder = next(p for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert re.search(r"\[\d+\]", (folder / "report.md").read_text())


def test_plain_text_prompts_go_to_the_answerers_then_the_fallback():
    from tests.support import llm_endpoint

    messages = [{"role": "user", "content": "Write about it.\n\n[1] Doc\n<document>\nThe rider covers "
                                            "flood damage to homes.\n</document>"}]
    assert reply_text({"messages": messages}) == ("The rider covers flood damage to homes.", "fallback")

    def outline(msgs):
        return "# Heading" if "outline" in msgs[-1]["content"] else None

    llm_endpoint.PLAIN_TEXT_ANSWERERS.append(outline)
    try:
        assert reply_text({"messages": messages}) == ("The rider covers flood damage to homes.", "fallback")
        assert reply_text({"messages": [{"role": "user", "content": "an outline"}]}) == ("# Heading", "plain:outline")
    finally:
        llm_endpoint.PLAIN_TEXT_ANSWERERS.remove(outline)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="fixed:MS"):
        Latency.parse("gaussian:3")
    with pytest.raises(ValueError, match="not one of"):
        parse_mix("429=1,oops=2")
    with pytest.raises(ValueError, match="fail rate"):
        start_endpoint(fail_rate=1.5)
    assert Latency.parse("lognormal:median=1000,sigma=0.5").median_ms == 1000


def test_the_log_counts_peak_concurrency(tmp_path):
    log = tmp_path / "log.jsonl"
    rows = [{"start": 0, "end": 3, "outcome": "ok"}, {"start": 1, "end": 2, "outcome": "ok"},
            {"start": 1.5, "end": 1.6, "outcome": "over_cap"}, {"start": 2, "end": 4, "outcome": "ok"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert peak_concurrency(read_log(log)) == 2


def test_multihop_and_the_report_agent_run_on_the_endpoint(home, tmp_path, capsys):
    """Chain-of-RAG's hops and the report agent's native tool calls get usable replies too."""
    with start_endpoint(latency="fixed:0") as ep:
        common = ["--data-dir", str(home), "--llm", "standin", "--llm-base-url", ep.url, "--no-llm-cache"]
        assert main(["ask", "What is the waiting period of the flood rider after Bulletin 2022-11?", "-c",
                     "example", "--strategy", "chain", "--json", *common]) == 0
        answer = json.loads(capsys.readouterr().out)
        assert answer["usage"]["fallback_calls"] == 0 and answer["usage"]["failed_calls"] == 0
        assert any(h["passages"] for h in answer["hops"]) and "the topic" not in [h["query"] for h in answer["hops"]]
        assert main(["report", TOPIC, "-c", "example", "--out", str(tmp_path / "out"), "--personas", "0",
                     "--turns", "1", "--writer", "react", *common]) == 0
        log = ep.requests()
    assert {"multihop_chain_follow_up", "multihop_chain_intermediate_answer"} <= {e["schema"] for e in log}
    assert any(e.get("reply") == "tool" for e in log), "the report agent's tool steps were not offered tools"
    calls = history(tmp_path / "out")
    chosen = [c for c in calls if c["step"] == "report.react.choose"]
    assert chosen and all(c["ok"] and not c["repaired"] and c["fallback"] is None for c in chosen)
