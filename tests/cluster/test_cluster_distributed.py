"""The distributed run writes the same reports as the in-process pipeline, and resumes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from conftest import EXAMPLE_COLLECTION
from storm_runs import OPTIONS, TOPICS, artifacts, copy_home, flow_files

from actors.calls import call
from agents.storm.artifacts import CALL_HISTORY, STAGES, RunFiles
from agents.storm.flow import INFO_TABLE
from retrieval.graph.current import without_history
from cluster.distributed import ClusterPlan, report_topics, research_session, run_reports_distributed

PLAN = ClusterPlan(writer_actors=2, expert_actors=2)
STAGES = list(STAGES)


def test_distributed_run_writes_what_the_pipeline_writes(ray_cluster, corpus_settings, reference, tmp_path):
    home = copy_home(corpus_settings, tmp_path / "home")
    out = tmp_path / "out"
    events: list[tuple[str, str, str]] = []

    async def run_and_ask_the_writers():
        # a session keeps the actors after the run: every persona's writer still holds its conversation
        async with research_session(store=home, collection=EXAMPLE_COLLECTION, plan=PLAN,
                                    personas_total=len(TOPICS) * (OPTIONS.personas + 1)) as run:
            done = await report_topics(TOPICS, run, str(out), OPTIONS, lambda e: events.append((e.topic, e.stage, e.text())))
            held = {}
            for s in done:
                for conv in json.loads((Path(s.directory) / "conversation_log.json").read_text()):
                    actor, key = run.writer_for(s.topic, conv["persona"]["name"])
                    held[(s.topic, conv["persona"]["name"])] = (conv, await call(
                        actor.conversation.remote(key), actor="PersonaWriter", method="conversation", stage="test",
                        timeout_s=30))
            # during the session, a persona is interviewed on its live writer actor, from what it heard
            persona = json.loads((Path(done[0].directory) / "conversation_log.json").read_text())[0]["persona"]["name"]
            heard = await run.interview(done[0].topic, persona, "What did you find out?")
            return done, held, heard

    summaries, held, heard = asyncio.run(run_and_ask_the_writers())
    assert heard.cited(), heard.answer  # it answered from the passages its conversation retrieved
    for s in heard.cited():
        lines = " ".join(Path(s.path).read_text().splitlines()[s.line_start - 1:s.line_end])
        assert " ".join(without_history(s.text).split()[:4]) in " ".join(lines.split())
    assert len(held) == len(TOPICS) * (OPTIONS.personas + 1)
    for conv, turns in held.values():
        assert [q for q, _ in turns] == [t["user_utterance"] for t in conv["dlg_turns"]]
        assert [a for _, a in turns] == [t["agent_utterance"] for t in conv["dlg_turns"]]
    assert [s.topic for s in summaries] == TOPICS
    assert all(s.sections > 0 and s.citations > 0 for s in summaries)

    distributed, expected = artifacts(out), flow_files(reference)
    assert sorted(distributed) == sorted(expected)
    for name in expected:
        assert distributed[name] == expected[name], f"{name} differs"

    for topic in TOPICS:  # progress reached the driver for every topic and stage
        stages = {stage for t, stage, _ in events if t == topic}
        assert {*STAGES, INFO_TABLE} <= stages
    for s in summaries:  # every model call is in its topic's history
        history = (Path(s.directory) / CALL_HISTORY).read_text().splitlines()
        assert history and all(json.loads(line)["ok"] for line in history)

    # a job killed part way: topic 0 lost its article and polish, topic 1 everything from the outline on
    for stage in ("article", "polish"):
        RunFiles(str(out), TOPICS[0]).clear(stage)
    for stage in ("outline", "article", "polish"):
        RunFiles(str(out), TOPICS[1]).clear(stage)
    again = run_reports_distributed(TOPICS, store=home, collection=EXAMPLE_COLLECTION, out_dir=str(out),
                                    options=OPTIONS, plan=PLAN)
    assert [s.reused for s in again] == [STAGES[:3], STAGES[:2], STAGES]
    assert artifacts(out) == distributed  # the table was rebuilt from the log: no snippet twice
    assert table_collections(home) == []  # each finished run dropped its table


def table_collections(home) -> list[str]:
    from retrieval.store import PassageStore

    store = PassageStore(home)
    try:
        return [c.name for c in store.collections() if c.name.startswith("infotable-")]
    finally:
        store.close()
