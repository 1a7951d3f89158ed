"""`raystorm mcp` refusing what it must not take: every numeric tool argument out of range is a tool error
naming the argument, a report that fails reads `failed`, and over HTTP a foreign Host gets 403 and a 50 MB
body 413 at once. The server is a real process (stdio through the SDK's client; HTTP through raw sockets
and the SDK's streamable HTTP client)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal

import httpx
import pytest

from test_cli_errors import EXAMPLE_DIR, RAYSTORM, raystorm
from test_mcp import call
from tests.support.http_probe import free_port, post_large, rss_kb, start_face

mcp = pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

BROKEN_TOPIC = "A report that cannot be written"
# (tool, arguments, the argument its error must name): every numeric argument of every tool, out of range
OUT_OF_RANGE = [
    ("search", {"query": "flood", "k": -5}, "k"),
    ("search", {"query": "flood", "k": 10**6}, "k"),
    ("graph_locate", {"terms": "flood", "k": -5}, "k"),
    ("graph_locate", {"terms": "flood", "k": 10**6}, "k"),
    ("graph_expand", {"node": "x", "hops": 0}, "hops"),
    ("graph_expand", {"node": "x", "hops": 10**6}, "hops"),
    ("report_start", {"topic": "flood", "personas": -3}, "personas"),
    ("report_start", {"topic": "flood", "personas": 10**6}, "personas"),
    ("report_status", {"run_id": "x", "since": -1}, "since"),
    ("report_status", {"run_id": "x", "since": 10**9}, "since"),
    ("search", {"query": "why " * 1001}, "query"),
    ("ask", {"question": "why " * 1001}, "question"),
    ("ask", {"question": "and?", "history": [{"question": "q"}] * 21}, "history"),
    ("search", {"query": "flood", "sources": ["a"] * 101}, "sources"),
]


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    from agents.storm.artifacts import topic_slug

    root = tmp_path_factory.mktemp("mcp-limits")
    shutil.copytree(EXAMPLE_DIR, root / "corpus")
    done = raystorm(root, "ingest", "corpus", "-c", "ex", "-q")
    assert done.returncode == 0, done.stderr
    (root / "wiki").mkdir()
    (root / "runs").mkdir()
    (root / "runs" / topic_slug(BROKEN_TOPIC)).write_text("a file where the run's folder must go")
    return root


def test_every_numeric_argument_out_of_range_is_a_tool_error(place):
    async def script(s: ClientSession):
        tools = {t.name: t.inputSchema for t in (await s.list_tools()).tools}
        return tools, [await s.call_tool(tool, args) for tool, args, _ in OUT_OF_RANGE]

    tools, replies = call(place, script)
    for (tool, args, field), reply in zip(OUT_OF_RANGE, replies, strict=True):
        text = reply.content[0].text if reply.content else ""
        assert reply.isError and field in text, (tool, args, text[:300])
    # and every integer a tool takes has both bounds in its schema, so none was left out above
    for name, schema in tools.items():
        for prop, spec in schema["properties"].items():
            if spec.get("type") == "integer":
                assert "minimum" in spec and "maximum" in spec, (name, prop)


def test_a_report_that_fails_reads_failed(place):
    async def script(s: ClientSession):
        started = await s.call_tool("report_start", {"topic": BROKEN_TOPIC})
        run_id = started.structuredContent["run_id"]
        for _ in range(120):
            status = (await s.call_tool("report_status", {"run_id": run_id})).structuredContent
            if status["state"] != "running":
                return status
            await asyncio.sleep(0.5)
        return status

    status = call(place, script)
    assert status["state"] == "failed" and status["error"], status


def test_over_http_a_foreign_host_is_403_and_a_50_mb_body_413(place):
    port = free_port()
    env = {**os.environ, "RAYSTORM_HOME": str(place / "home")}
    env.pop("RAYSTORM_MCP_TOKEN", None)
    server = start_face([RAYSTORM, "mcp", "-c", "ex", "--runs", str(place / "runs"), "--transport", "http",
                         "--port", str(port)], place, env, port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        refused = httpx.post(url, json={}, headers={"host": "evil.example", "accept": "application/json"})
        assert refused.status_code == 403 and "evil.example" in refused.text, refused.text
        cross = httpx.post(url, json={}, headers={"origin": "http://evil.example"})
        assert cross.status_code == 403, cross.text
        before = rss_kb(server.pid)
        for chunked in (False, True):
            refusal = post_large(port, "/mcp", 50, chunked)
            assert refusal.status == 413 and refusal.seconds < 1, refusal
        assert rss_kb(server.pid) - before < 8 * 1024

        async def search():  # the server still answers a proper client
            async with streamable_http_client(url) as (read, write, _):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    return await s.call_tool("search", {"query": "flood rider waiting period", "k": 2})

        reply = asyncio.run(asyncio.wait_for(search(), 120))
        assert not reply.isError and len(reply.structuredContent["result"]) == 2
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(30)
