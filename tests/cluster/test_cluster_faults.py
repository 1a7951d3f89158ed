"""Faults: a node leaves mid-run, an LLM endpoint fails a share of calls; the reports still come out whole."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from pathlib import Path

import ray
from cluster_agents import flaky_llm_client
from conftest import EXAMPLE_COLLECTION, WORKER
from storm_runs import OPTIONS, TOPICS, artifacts, copy_home, flow_files

from actors.models import ModelRecipe
from agents.lm.backoff import RetryPolicy
from agents.lm.settings import LLMSettings, ModelSpec
from agents.storm.artifacts import CALL_HISTORY
from cluster.distributed import ClusterPlan, ResearchCluster, report_topics, run_reports_distributed

# three writers and three experts, on the two worker nodes only (the head stays: it holds the store)
PLAN = ClusterPlan(writer_actors=3, expert_actors=3, research_resources={"worker": 1}, turn_timeout_s=120,
                   stage_timeout_s=300)


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

    def progress(event):
        events.append((event.topic, event.stage, event.text()))
        if event.stage == "conversations" and event.kind == "started":
            conversing.set()

    def hosted_on(node_id: str) -> str:  # from the run's placement report: "... on 3 node(s): ab12cd34: X, Y; ..."
        placement = next(d for _, stage, d in events if stage == "cluster").split("node(s): ", 1)[1]
        return next((part.split(": ", 1)[1] for part in placement.split("; ") if part.startswith(node_id[:8])), "")

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
    # the worker node with a writer and the most actors: its conversations are cut mid-way
    victim = max(ray_cluster.worker_nodes,
                 key=lambda n: ("PersonaWriter" in hosted_on(n.node_id), len(hosted_on(n.node_id).split(", "))))
    lost = hosted_on(victim.node_id)
    placement = next(d for _, stage, d in events if stage == "cluster")
    assert "PersonaWriter" in lost or "Expert" in lost, (
        f"no worker node hosts the run's actors: {placement}; workers: {[n.node_id[:8] for n in ray_cluster.worker_nodes]}")
    ray_cluster.remove_node(victim, allow_graceful=False)
    driver.join(timeout=600)
    ray_cluster.add_node(**WORKER)  # the cluster the other tests expect: head + 2 workers
    assert not driver.is_alive(), "the run did not finish within its bound"
    if "error" in result:
        raise result["error"]

    assert [s.topic for s in result["summaries"]] == TOPICS
    # the run said which node it lost, as soon as Ray reported it
    assert any(stage == "cluster" and f"({victim.node_id[:8]}) was lost" in d for _, stage, d in events), events
    assert artifacts(out) == flow_files(reference)  # the lost work was redone, and redone the same way
    restarted = [d for _, stage, d in events if stage == "conversations" and "was lost" in d]
    print(f"lost {lost}; conversations started again: {restarted or 'none (the calls were reissued)'}")
    no_snippet_twice(out)


def test_a_conversation_whose_writer_dies_starts_again(ray_cluster, corpus_settings, reference, tmp_path):
    home = copy_home(corpus_settings, tmp_path / "home")
    out = tmp_path / "out"
    topic = TOPICS[0]
    # one writer actor hosting every persona; calls slowed so that it dies mid-conversation
    plan = ClusterPlan(writer_actors=1, expert_actors=1, inject_latency_ms=300, turn_timeout_s=120)
    run = ResearchCluster(home, EXAMPLE_COLLECTION, LLMSettings(), plan, personas_total=OPTIONS.personas + 1,
                          recipe=ModelRecipe.for_store(home))
    events: list[tuple[str, str, str]] = []

    def progress(event):
        events.append((event.topic, event.stage, event.text()))
        if event.stage == "conversations" and event.kind == "started":  # kill it (Ray restarts it) a turn later
            threading.Timer(0.8, ray.kill, args=(run.writers.handles[0],), kwargs={"no_restart": False}).start()

    try:
        run.wait_ready()
        (summary,) = asyncio.run(report_topics([topic], run, str(out), OPTIONS, progress))
    finally:
        run.shutdown()
    assert any(stage == "conversations" and "PersonaWriter[0] was lost" in d for _, stage, d in events)
    folder = Path(summary.directory).name
    assert artifacts(out) == {name: text for name, text in flow_files(reference).items()
                              if name.startswith(folder + "/")}


def test_reports_complete_through_a_flaky_llm_endpoint(ray_cluster, corpus_settings, reference, tmp_path):
    home = copy_home(corpus_settings, tmp_path / "home")
    out = tmp_path / "out"
    # the outline stage on an LLM endpoint that fails every other request; every other stage extractive
    endpoint = ModelSpec(provider="openai_compatible", model="flaky-outliner", base_url="http://llm.test/v1")
    llm = LLMSettings(roles={"outline": endpoint},
                      retry=RetryPolicy(max_retries=4, base_delay_s=0.01, max_delay_s=0.05, timeout_s=30))
    recipe = ModelRecipe.for_store(home, http_client_factory=functools.partial(flaky_llm_client, fail_every=2))
    topics = TOPICS[:2]
    plan = ClusterPlan(writer_actors=2, expert_actors=2)
    cache = tmp_path / "llm-cache"
    summaries = run_reports_distributed(topics, store=home, collection=EXAMPLE_COLLECTION, out_dir=str(out),
                                        options=OPTIONS, plan=plan, llm=llm, recipe=recipe, cache_dir=str(cache))
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
        outline_calls = [c for c in calls if c["role"] == "outline"]
        assert [c["model"] for c in outline_calls] == ["flaky-outliner"] * 2
        assert all(c["ok"] and c["attempts"] >= 2 and not c["cached"] for c in outline_calls)

    # redone from scratch, the same requests are answered from the gateway's cache: no endpoint, no failure
    again = run_reports_distributed(topics, store=home, collection=EXAMPLE_COLLECTION, out_dir=str(out),
                                    options=OPTIONS.model_copy(update={"force": True}), plan=plan, llm=llm,
                                    recipe=recipe, cache_dir=str(cache))
    assert artifacts(out) == produced
    for s in again:
        calls = [json.loads(line) for line in (Path(s.directory) / CALL_HISTORY).read_text().splitlines()]
        assert [(c["cached"], c["attempts"]) for c in calls if c["role"] == "outline"] == [(True, 1)] * 2
