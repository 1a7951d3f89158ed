"""`raystorm mcp` as an agent host runs it: a subprocess over stdio, driven by the MCP SDK's own client,
on the bundled corpus."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from test_cli_errors import EXAMPLE_DIR, RAYSTORM, raystorm

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

BULLETIN = "bulletin-2022-11-flood-rider-waiting-period.md"


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """The bundled corpus (a copy, so a test may edit it) ingested as `ex`, and its wiki."""
    root = tmp_path_factory.mktemp("mcp")
    shutil.copytree(EXAMPLE_DIR, root / "corpus")
    for args in (["ingest", "corpus", "-c", "ex", "-q"], ["wiki", "build", "-c", "ex", "--out", "wiki"]):
        done = raystorm(root, *args)
        assert done.returncode == 0, done.stderr
    return root


def call(place: Path, script) -> object:
    """Run `script(session)` against `raystorm mcp -c ex` started over stdio."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "RAYSTORM_LLM_API_KEY")}
    env["RAYSTORM_HOME"] = str(place / "home")
    params = StdioServerParameters(command=RAYSTORM, args=["mcp", "-c", "ex", "--runs", str(place / "runs"),
                                                           "--wiki", str(place / "wiki")], env=env, cwd=str(place))

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)

    return asyncio.run(asyncio.wait_for(go(), 240))


def result(reply):
    assert not reply.isError, reply.content
    content = reply.structuredContent
    return content["result"] if set(content) == {"result"} else content


def test_every_tool_over_stdio(place):
    async def script(s: ClientSession):
        out = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
        out["search"] = result(await s.call_tool("search", {"query": "flood rider waiting period 30 days", "k": 8}))
        out["ask"] = result(await s.call_tool("ask", {"question": "What is the current waiting period for the "
                                                                  "Flood Rider?"}))
        first = result(await s.call_tool("ask", {"question": "Who signed the bulletin that set the flood "
                                                                 "rider's current waiting period?"}))
        out["follow"] = result(await s.call_tool("ask", {"question": "When did he sign it?",
                                                         "history": [first["turn"]]}))
        out["locate"] = result(await s.call_tool("graph_locate", {"terms": "Bulletin 2021-04 deductible schedule"}))
        node = out["locate"][0]["node"]["id"]
        out["expand"] = result(await s.call_tool("graph_expand", {"node": node}))
        out["page"] = result(await s.call_tool("wiki_page", {"page": Path(BULLETIN).stem}))
        run_id = result(await s.call_tool("report_start", {"topic": "Flood rider waiting period"}))["run_id"]
        seen, status = [], {"state": "running", "next": 0}
        for _ in range(240):
            status = result(await s.call_tool("report_status", {"run_id": run_id, "since": status["next"]}))
            seen += status["events"]
            if status["state"] != "running":
                break
            await asyncio.sleep(0.5)
        out["status"], out["events"] = status, seen
        out["report"] = result(await s.call_tool("report_result", {"run_id": run_id}))
        out["interview"] = result(await s.call_tool("interview", {"run_id": run_id, "persona": "all",
                                                                  "question": "What is the waiting period?"}))
        out["resource"] = await s.read_resource(f"raystorm://report/{run_id}")
        out["outside"] = await s.call_tool("report_result", {"run_id": "../../../etc"})
        out["absolute"] = await s.call_tool("claims_check", {"folder": "/etc"})
        return out

    out = call(place, script)
    assert set(out["tools"]) == {"search", "ask", "graph_locate", "graph_expand", "wiki_page", "claims_check",
                                 "report_start", "report_status", "report_result", "interview", "roundtable_start",
                                 "roundtable_turn", "roundtable_observe", "roundtable_mindmap", "roundtable_report"}
    assert set(out["tools"]["search"].inputSchema["properties"]["source"]["enum"]) == {"corpus", "web", "hybrid"}
    assert out["tools"]["search"].inputSchema["properties"]["k"]["type"] == "integer"
    states = {Path(h["path"]).name: h["status"]["state"] for h in out["search"] if h["status"]}
    assert states.get("bulletin-2021-04-deductible-schedule.md") == "superseded"
    assert states.get(BULLETIN) == "current"
    assert "14 days" in out["ask"]["answer"] and out["ask"]["citations"]
    assert all(c["status"] is None or c["status"]["state"] for c in out["ask"]["citations"])
    assert out["follow"]["question"] != "When did he sign it?"  # rewritten from the dialogue
    assert any(e["name"] == "superseded_by" for e in out["expand"]["edges"])
    assert out["page"]["claims"]["claims"] and out["page"]["markdown"].startswith("#")
    assert out["status"]["state"] == "done", out["status"]
    assert any("polish" in e for e in out["events"])  # the progress events came while it ran
    assert out["report"]["report"].startswith("# Flood rider waiting period") and out["report"]["references"]
    assert out["interview"] and all(a["answer"] and "persona" in a for a in out["interview"])
    assert out["resource"].contents[0].text == out["report"]["report"]
    for refused in (out["outside"], out["absolute"]):
        assert refused.isError and "outside the runs and wiki folders" in refused.content[0].text


def test_a_stale_claim_after_editing_a_line(place):
    bulletin = place / "corpus" / BULLETIN
    before = bulletin.read_text()
    lines = before.splitlines()
    target = next(i for i, line in enumerate(lines) if "14 days" in line)
    lines[target] = lines[target].replace("14 days", "21 days")
    bulletin.write_text("\n".join(lines) + "\n")

    async def script(s: ClientSession):
        return result(await s.call_tool("claims_check", {"folder": str(place / "wiki")}))

    try:
        report = call(place, script)
    finally:
        bulletin.write_text(before)
    assert report["counts"]["stale"] >= 1
    stale = [c for c in report["claims"] if c["state"] == "stale"]
    assert any(BULLETIN.removesuffix(".md") in c["page"] or "14 days" in c["text"] for c in stale), stale
    assert json.dumps(report)  # the CLI's --json shape: plain JSON
