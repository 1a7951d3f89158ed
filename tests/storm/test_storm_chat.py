"""The chat-model path: agents driven by autogen's ReplayChatCompletionClient, and the whole
pipeline through the OpenAI client over an httpx.MockTransport (request shape, 429 retry,
junk JSON repaired, a stage that keeps failing named and resumed)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from autogen_core.models import ModelFamily
from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.lm.backoff import RetryPolicy
from agents.lm.chat import ChatModel
from agents.lm.models import RoleModels
from agents.lm.settings import LLMSettings, ModelSpec
from agents.storm.artifacts import RunFiles
from agents.storm.conversation import run_conversation
from agents.storm.records import THANK_YOU, Persona
from agents.storm.steps_perspectives import FindPerspectives
from agents.storm.checkpoints import StageFailed
from storm_support import FLOOD, FakeLLM, completion, user_message

INFO = {"vision": False, "function_calling": False, "json_output": True, "family": ModelFamily.UNKNOWN,
        "structured_output": True}


def test_a_conversation_on_replayed_replies(example_retriever):
    replies = [
        '{"question": "What does the flood rider cover?"}',
        '{"queries": ["flood rider coverage", "flood rider limits"]}',
        # cites a source that exists, one that does not, and ends mid-sentence
        '{"answer": "The rider treats flood as a covered peril [1]. Limits apply [99]. It also covers the"}',
        json.dumps({"question": f"Great, that is all. {THANK_YOU}"}),
    ]
    client = ReplayChatCompletionClient(replies, model_info=INFO)
    model = ChatModel(client, model="replay")
    persona = Persona(name="Homeowner", description="owns a house by the river", focus=["coverage"])

    conv = asyncio.run(run_conversation(FLOOD, persona, model, example_retriever, max_turns=3))

    (turn,) = conv.dlg_turns  # the writer's thanks ended it before the turn limit
    assert turn.user_utterance == "What does the flood rider cover?"
    assert turn.search_queries == ["flood rider coverage", "flood rider limits"]
    assert turn.agent_utterance == "The rider treats flood as a covered peril [1]. Limits apply."
    assert turn.cited == [1] and len(turn.search_results) >= 2
    assert conv.perspective.startswith("Homeowner: ")
    asked = client.create_calls[0]["messages"][1].content
    assert "Your persona: Homeowner" in asked and "coverage" in asked


def _polish(body: dict) -> httpx.Response:
    return completion(json.dumps({"text": user_message(body).split("Section text:\n", 1)[1]}))


def scripted_server() -> FakeLLM:
    """A fake server that plays every STORM step sensibly, with one 429 and one junk reply on the way."""
    state = {"perspectives": 0, "draft": 0}

    def perspectives(body):
        state["perspectives"] += 1
        if state["perspectives"] == 1:
            return httpx.Response(429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}})
        return completion(json.dumps({"relevant": True, "basic_focus": ["what the rider covers"], "personas": [
            {"name": "Claims adjuster", "description": "handles flood claims", "focus": ["claims"]}]}))

    def draft(body):
        state["draft"] += 1
        if state["draft"] == 1:
            return completion("Sure! Here is an outline: Coverage, Claims.")
        return completion(json.dumps({"sections": [{"heading": "Coverage"}, {"heading": "References"}]}))

    return FakeLLM({
        "storm_perspectives": perspectives,
        "storm_writer_ask": lambda b: completion(json.dumps({"question": "What does the flood rider cover?"})),
        "storm_expert_queries": lambda b: completion(json.dumps({"queries": ["flood rider coverage"]})),
        "storm_expert_answer": lambda b: completion(json.dumps(
            {"answer": "The rider treats flood as a covered peril [1]. Claims follow a memo [2]."})),
        "storm_outline_draft": draft,
        "storm_outline_refine": lambda b: completion(json.dumps({"sections": [
            {"heading": "Coverage", "subsections": ["Limits"]}, {"heading": "Claims"}, {"heading": "See also"}]})),
        "storm_article_section": lambda b: completion(json.dumps(
            {"text": "## Coverage\n\nThe rider covers flood [1]. Limits apply [2][42].\n\n### Limits\n\nThey vary [1]. And the"})),
        "storm_article_lead": lambda b: completion(json.dumps({"lead": "Harborline sells a flood rider [1]."})),
        "storm_article_polish": _polish,
    })


def chat_models(server: FakeLLM, **options) -> RoleModels:
    settings = LLMSettings(default=ModelSpec(provider="openai_compatible", model="fake-model",
                                             base_url="http://llm.test/v1"),
                           retry=RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.05), cache=False,
                           **options)
    return RoleModels.from_settings(settings, http_client=server.client())


def test_the_whole_pipeline_through_the_openai_client(parts, tmp_path):
    server = scripted_server()
    summary = parts.report(FLOOD, tmp_path, chat_models(server), personas=1, turns=1)
    files = RunFiles(tmp_path, FLOOD)

    first = server.bodies[0]
    assert first["model"] == "fake-model" and [m["role"] for m in first["messages"]] == ["system", "user"]
    fmt = first["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "storm_perspectives"
    assert fmt["json_schema"]["schema"] == FindPerspectives.output_schema()
    assert "Reply with one JSON object" in first["messages"][0]["content"]
    assert len(server.calls("storm_perspectives")) == 2  # the 429, then the retry
    repair = server.calls("storm_outline_draft")[1]["messages"]
    assert repair[2]["content"].startswith("Sure!") and "no JSON object" in repair[3]["content"]

    assert summary.personas == 2 and summary.turns == 2  # the basic fact writer and the adjuster, one turn each
    assert files.path("direct_gen_outline.txt").read_text() == "# Coverage\n"
    assert files.path("storm_gen_outline.txt").read_text() == "# Coverage\n## Limits\n# Claims\n"
    report = files.path("report.md").read_text()
    assert "## Coverage" in report and "### Limits" in report and "## Claims" in report
    assert "[42]" not in report and "And the" not in report and "See also" not in report
    assert report.count("\n## ") == 3  # Coverage, Claims, References
    history = [json.loads(line) for line in files.path("llm_call_history.jsonl").read_text().splitlines()]
    assert {r["model"] for r in history} == {"fake-model"} and any(r["repaired"] for r in history)
    assert summary.prompt_tokens > 0 and summary.completion_tokens > 0


def test_a_step_that_keeps_failing_stops_the_run_at_its_stage_and_a_rerun_resumes(parts, tmp_path):
    broken = scripted_server()
    broken.replies["storm_outline_refine"] = lambda b: completion("")  # empty text, every time
    with pytest.raises(StageFailed) as failed:  # asked to fail: today's behaviour
        parts.report(FLOOD, tmp_path, chat_models(broken, on_bad_output="fail"), personas=1, turns=1)
    assert failed.value.stage == "outline" and "storm.outline.refine" in str(failed.value)
    assert len(broken.calls("storm_outline_refine")) == 2  # the reply, then one repair
    files = RunFiles(tmp_path, FLOOD)
    assert files.done("conversations") and not files.done("outline")

    fixed = scripted_server()
    summary = parts.report(FLOOD, tmp_path, chat_models(fixed), personas=1, turns=1)
    assert summary.reused == ["personas", "conversations"]
    assert not fixed.calls("storm_perspectives") and not fixed.calls("storm_expert_answer")
    assert files.path("report.md").exists()


def test_a_step_that_keeps_failing_falls_back_to_the_extractive_model_and_the_run_completes(parts, tmp_path):
    broken = scripted_server()
    broken.replies["storm_outline_refine"] = lambda b: completion("")  # empty text, every time
    models = chat_models(broken)  # the default: --on-bad-output extractive

    parts.report(FLOOD, tmp_path, models, personas=1, turns=1)

    files = RunFiles(tmp_path, FLOOD)
    assert files.path("report.md").exists() and len(broken.calls("storm_outline_refine")) == 2
    history = [json.loads(line) for line in files.path("llm_call_history.jsonl").read_text().splitlines()]
    (refine,) = [r for r in history if r["step"] == "storm.outline.refine"]
    assert refine["ok"] and refine["fallback"] == "extractive" and refine["fallback_reason"] == "the reply was empty"
    assert all(r["fallback"] is None for r in history if r["step"] != "storm.outline.refine")
    assert models.ledger.fallback_summary() == (
        f"1 of {len(history)} calls fell back to the extractive model; by step: storm.outline.refine 1")
