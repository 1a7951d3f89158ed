"""A small agent that answers "what is current" questions through raystorm's MCP tools, scored next to
`raystorm ask` on the same questions.

The agent is the MCP SDK's client and a fixed loop (no model of its own): ask; when an answer cites a
passage the evidence graph marks superseded first (the one that states it), follow `superseded_by` edges with `graph_expand` to the
document in force and search inside it for the question; answer from the best current passage. `ask`
alone is the single `ask` call of the same loop, so both run on one server and one collection.

    python -m scripts.mcp_agent                  # the bundled corpus and tests/data/current_questions.json
    python -m scripts.mcp_agent --corpus DIR --questions FILE.json

It prints one line per question and ends with one JSON line:
{"questions": N, "agent_accuracy": ..., "ask_accuracy": ..., "agent_tool_calls": ...}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def correct(text: str, item: dict) -> bool:
    """The answer holds the value in force (any of `current`), and no replaced value unless it holds
    the current one too."""
    low = text.lower()
    return any(c.lower() in low for c in item["current"])


def data(reply) -> object:
    if reply.isError:
        raise RuntimeError(reply.content[0].text)
    content = reply.structuredContent
    return content["result"] if set(content) == {"result"} else content


async def agent_answer(session, question: str) -> tuple[str, str, int]:
    """(the agent's answer, `ask`'s answer, tool calls made)."""
    asked = data(await session.call_tool("ask", {"question": question}))
    calls, answer = 1, asked["answer"]
    stale = [c for c in asked["citations"] if (c.get("status") or {}).get("state") == "superseded"]
    if not stale or stale[0] is not asked["citations"][0]:  # the answer stands on a current passage
        return answer, asked["answer"], calls
    # a cited passage is out of date: go to the document in force and look there
    current_docs: list[str] = []
    for cited in stale:
        node = cited.get("url") or cited.get("source") or cited["path"]
        expansion = data(await session.call_tool("graph_expand", {"node": node, "edges": ["superseded_by"],
                                                                  "hops": 5}))
        calls += 1
        current_docs += [e["other"] for e in expansion["edges"] if e["name"] == "superseded_by"]
    hits = data(await session.call_tool("search", {"query": question, "k": 5, "sources": current_docs or None}))
    calls += 1
    current = [h for h in hits if not h["status"] or h["status"]["state"] != "superseded"]
    if current:
        answer = current[0]["text"]
    return answer, asked["answer"], calls


async def run(corpus: Path, questions: list[dict], home: Path) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    raystorm = str(Path(sys.executable).with_name("raystorm"))
    env = {**os.environ, "RAYSTORM_HOME": str(home)}
    subprocess.run([raystorm, "ingest", str(corpus), "-c", "agent", "-q"], env=env, check=True)
    params = StdioServerParameters(command=raystorm, args=["mcp", "-c", "agent"], env=env)
    agent_ok = ask_ok = calls = 0
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for item in questions:
                mine, plain, used = await agent_answer(session, item["question"])
                good, base = correct(mine, item), correct(plain, item)
                agent_ok, ask_ok, calls = agent_ok + good, ask_ok + base, calls + used
                print(f"{'ok ' if good else 'NO '} ask:{'ok ' if base else 'NO '} {used} calls  {item['question']}")
    n = len(questions)
    return {"questions": n, "agent_accuracy": round(agent_ok / n, 3), "ask_accuracy": round(ask_ok / n, 3),
            "agent_tool_calls": calls}


def main() -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=ROOT / "retrieval" / "example_corpus")
    p.add_argument("--questions", type=Path, default=ROOT / "tests" / "data" / "current_questions.json",
                   help="JSON with a `questions` list of {question, current: [...], superseded: [...]}")
    args = p.parse_args()
    questions = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    home = Path(tempfile.mkdtemp(prefix="mcp-agent-"))
    try:
        summary = asyncio.run(run(args.corpus, questions, home))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
