"""Faults: a node leaves mid-run, an LLM endpoint fails a share of calls; the reports still come out whole."""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from cluster_agents import flaky_llm_client
from conftest import EXAMPLE_COLLECTION, NODE
from storm_runs import OPTIONS, TOPICS, artifacts, copy_home

from actors.models import ModelRecipe
from agents.lm.backoff import RetryPolicy
from agents.lm.settings import LLMSettings, ModelSpec
from agents.storm.artifacts import CALL_HISTORY
from cluster.distributed import ClusterPlan, run_reports_distributed

# three writers and three experts: the scheduler spreads them, so every node hosts some
PLAN = ClusterPlan(writer_actors=3, expert_actors=3, turn_timeout_s=120, stage_timeout_s=300)


def no_snippet_twice(out: Path) -> None:
    for path in out.rglob("url_to_info.json"):
        table = json.loads(path.read_text())["url_to_info"]
        for url, entry in table.items():
            places = [(p["passage_id"], text) for p, text in zip(entry["places"], entry["snippets"])]
            assert len(set(places)) == len(places), f"{url} has a snippet twice in {path}"


def test_run_survives_losing_a_worker_node(ray_cluster, corpus_settings, reference, tmp_path):
    home = copy_home(corpus_settings, tmp_path / "home")
    out = tmp_path / "out"
    conversing = threading.Event()
    events: list[tuple[str, str, str]] = []

    def progress(topic, stage, detail):
        events.append((topic, stage, detail))
        if stage == "conversations" and detail == "started":
            conversing.set()

    result: dict = {}

    def run() -> None:
        try:
            result["summaries"] = run_reports_distributed(TOPICS, store=home, collection=EXAMPLE_COLLECTION,
                                                          out_dir=str(out), options=OPTIONS, plan=PLAN,
                                                          progress=progress)
        except BaseException as exc:  # handed to the test thread below
            result["error"] = exc

    driver = threading.Thread(target=run, daemon=True)
    driver.start()
    assert conversing.wait(timeout=300), "the run never reached its conversations"
    victim = next(iter(ray_cluster.worker_nodes))
    ray_cluster.remove_node(victim, allow_graceful=False)
    driver.join(timeout=600)
    ray_cluster.add_node(**NODE)  # the cluster the other tests expect: head + 2 workers
    assert not driver.is_alive(), "the run did not finish within its bound"
    if "error" in result:
        raise result["error"]

    assert [s.topic for s in result["summaries"]] == TOPICS
    assert artifacts(out) == reference  # the lost work was redone, and redone the same way
    no_snippet_twice(out)


def test_reports_complete_through_a_flaky_llm_endpoint(ray_cluster, corpus_settings, reference, tmp_path):
    home = copy_home(corpus_settings, tmp_path / "home")
    out = tmp_path / "out"
    # the outline stage on an LLM endpoint that fails every other request; every other stage extractive
    endpoint = ModelSpec(provider="openai_compatible", model="flaky-outliner", base_url="http://llm.test/v1")
    llm = LLMSettings(stages={"outline": endpoint}, cache=False,
                      retry=RetryPolicy(max_retries=4, base_delay_s=0.01, max_delay_s=0.05, timeout_s=30))
    recipe = ModelRecipe.for_store(home, http_client_factory=functools.partial(flaky_llm_client, fail_every=2))
    topics = TOPICS[:2]
    summaries = run_reports_distributed(topics, store=home, collection=EXAMPLE_COLLECTION, out_dir=str(out),
                                        options=OPTIONS, plan=ClusterPlan(writer_actors=2, expert_actors=2),
                                        llm=llm, recipe=recipe)
    assert [s.topic for s in summaries] == topics
    produced = artifacts(out)
    for s in summaries:
        folder = Path(s.directory)
        assert s.sections >= 1 and s.citations >= 1
        assert "## References" in (folder / "report.md").read_text()
        # the research before the outline is the extractive reference's; the outline is the endpoint's
        for name in ("personas.json", "conversation_log.json", "raw_search_results.json"):
            assert produced[f"{folder.name}/{name}"] == reference[f"{folder.name}/{name}"]
        assert (folder / "storm_gen_outline.txt").read_text() != reference[f"{folder.name}/storm_gen_outline.txt"]
        # both outline calls went to the endpoint, and each got through on a retry
        calls = [json.loads(line) for line in (folder / CALL_HISTORY).read_text().splitlines()]
        outline_calls = [c for c in calls if c["stage"] == "outline"]
        assert [c["model"] for c in outline_calls] == ["flaky-outliner"] * 2
        assert all(c["ok"] and c["attempts"] >= 2 for c in outline_calls)
