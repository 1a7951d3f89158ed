"""What the parts of one model call cost in CPU on this machine, each measured alone.

`bench_scale` measures CPU per model call of whole runs; this script measures the parts every call
is made of, so that a per-call figure can be read against them:

- a Ray actor call: CPU of the caller and of the callee (an async actor, as the gateway and the
  agents' actors are) for a call with small arguments, one at a time and 50 in flight, with Ray's
  task events on and off (raystorm's actors run with them off, `actors.pool.ActorOptions.task_events`)
  (`ray.init()` starts a local Ray here, or `--address` joins one);
- a query embedding: thread CPU of one dense query vector (all-MiniLM-L6-v2 int8, one thread, as an
  actor embeds), of one of three embedded together (an expert turn's queries, `embed_queries`), and
  of its BM25 vector;
- a chat step: CPU of `ChatModel.run` (render, client, parse, validate, ledger) with raystorm's
  `DirectChatClient` (aiohttp) and with autogen's OpenAI client (`--llm-client autogen`), against
  the stand-in endpoint (`tests/support/llm_endpoint.py` in a child process: its CPU is not counted),
  beside the same request body posted with httpx alone and with aiohttp alone, its JSON read back;
- a conversation's team: CPU of autogen's `RoundRobinGroupChat` (the team `agents.storm.conversation`
  runs for each persona) carrying a 3-turn conversation between two agents that answer at once (the
  expert's reply a `DialogueTurn` with 8 search results, as a real turn's), no model, no Ray: what the
  team runtime itself costs per conversation and per model call (a 3-turn conversation is 9 calls).

    python -m scripts.bench_call_floor
    python -m scripts.bench_call_floor --calls 2000 --address auto
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time

import aiohttp
import httpx
import ray


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@ray.remote(num_cpus=0, max_concurrency=1000)
class Callee:
    async def acquire(self, endpoint: str, holder: str) -> tuple[str, bool]:
        return f"{holder}#1", True

    def cpu_s(self) -> float:
        return cpu_s()


def actor_calls(n: int, task_events: bool) -> dict[str, float]:
    callee = Callee.options(enable_task_events=task_events).remote()
    ray.get(callee.cpu_s.remote())

    async def calls(in_flight: int) -> None:
        slots = asyncio.Semaphore(in_flight)

        async def one() -> None:
            async with slots:
                await callee.acquire.remote("endpoint", "holder")

        await asyncio.gather(*(one() for _ in range(n)))

    out = {}
    for in_flight in (1, 50):
        mine, theirs = cpu_s(), ray.get(callee.cpu_s.remote())
        asyncio.run(calls(in_flight))
        mine, theirs = cpu_s() - mine, ray.get(callee.cpu_s.remote()) - theirs
        events = "" if task_events else "_no_events"
        out[f"actor_call_caller_ms_{in_flight}{events}"] = round(1000 * mine / n, 3)
        out[f"actor_call_callee_ms_{in_flight}{events}"] = round(1000 * theirs / n, 3)
    ray.kill(callee)
    return out


def embeddings(n: int) -> dict[str, float]:
    from retrieval.config import StoreSettings
    from retrieval.embeddings import embed_threads
    from retrieval.query import QueryEncoder

    embed_threads(1)
    encoder = QueryEncoder.for_store(StoreSettings(data_dir=tempfile.mkdtemp(prefix="raystorm-floor-")))
    encoder.warm()
    queries = [f"flood rider waiting period question {i} about coverage and claims" for i in range(n + 20)]
    for q in queries[:20]:
        encoder.dense.embed_query(q)
    started = time.thread_time()
    for q in queries[20:]:
        encoder.dense.embed_query(q)
    dense = time.thread_time() - started
    threes = [[f"{q} (variant {j})" for j in range(3)] for q in queries[20:]]
    started = time.thread_time()
    for three in threes:
        encoder.dense.embed_queries(three)
    batched = time.thread_time() - started
    started = time.thread_time()
    for q in queries[20:]:
        encoder.sparse.embed_query(q)
    sparse = time.thread_time() - started
    return {"dense_query_ms": round(1000 * dense / n, 3), "dense_query_ms_of_3": round(1000 * batched / (3 * n), 3),
            "bm25_query_ms": round(1000 * sparse / n, 3)}


def chat_steps(n: int) -> dict[str, float]:
    from agents.lm.models import chat_model
    from agents.lm.output import response_format, system_prompt
    from agents.lm.settings import LLMSettings, ModelSpec
    from agents.lm.usage import UsageLedger
    from agents.storm.steps_research import AnswerInput, AnswerQuestion, NumberedSource

    server = subprocess.Popen(
        [sys.executable, "-c", "import time; from tests.support.llm_endpoint import start_endpoint; "
         "print(start_endpoint().url, flush=True); time.sleep(3600)"], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        spec = ModelSpec(provider="openai_compatible", model="standin", base_url=url)
        sources = [NumberedSource(n=i, title=f"Bulletin {i}", section="Flood rider",
                                  text="The waiting period of the flood rider is thirty days after purchase. " * 6)
                   for i in range(1, 9)]
        inp = AnswerInput(topic="Harborline Mutual flood coverage", question="What is the waiting period?",
                          sources=sources)
        body = {"model": "standin", "response_format": response_format(AnswerQuestion, "json_schema"),
                "messages": [{"role": "system", "content": system_prompt(AnswerQuestion)},
                             {"role": "user", "content": AnswerQuestion.render_input(inp)}]}

        async def steps(client: str) -> float:
            model = chat_model(spec, LLMSettings(default=spec, client=client), cache=None, ledger=UsageLedger())
            for _ in range(10):
                await model.run(AnswerQuestion, inp)
            started = cpu_s()
            for _ in range(n):
                await model.run(AnswerQuestion, inp)
            spent = cpu_s() - started
            await model.close()
            return round(1000 * spent / n, 3)

        async def posts(post) -> float:
            payload = json.dumps(body).encode()
            for _ in range(10):
                await post(payload)
            started = cpu_s()
            for _ in range(n):
                await post(payload)
            return round(1000 * (cpu_s() - started) / n, 3)

        async def run() -> dict[str, float]:
            out = {"chat_step_ms": await steps("direct"), "chat_step_ms_autogen": await steps("autogen")}
            headers = {"content-type": "application/json"}
            async with httpx.AsyncClient() as client:
                async def with_httpx(payload: bytes) -> None:
                    json.loads((await client.post(f"{url}/chat/completions", content=payload, headers=headers)).content)

                out["raw_httpx_post_ms"] = await posts(with_httpx)
            async with aiohttp.ClientSession() as session:
                async def with_aiohttp(payload: bytes) -> None:
                    async with session.post(f"{url}/chat/completions", data=payload, headers=headers) as reply:
                        json.loads(await reply.read())

                out["raw_aiohttp_post_ms"] = await posts(with_aiohttp)
            return out

        return asyncio.run(run())
    finally:
        server.kill()


def conversation_teams(n: int) -> dict[str, float]:
    from autogen_agentchat.agents import BaseChatAgent
    from autogen_agentchat.base import Response
    from autogen_agentchat.messages import TextMessage

    from agents.storm.conversation import conversation_team
    from agents.storm.expert import TurnMessage
    from agents.storm.records import THANK_YOU, DialogueTurn, SearchResult

    results = [SearchResult(url=f"file://bulletin-{i}.md", title="Flood rider bulletin", path=f"bulletin-{i}.md",
                            snippets=["The waiting period of the flood rider is thirty days after purchase. " * 3],
                            line_start=1, line_end=3, passage_id=f"p{i}") for i in range(8)]

    class Asker(BaseChatAgent):
        def __init__(self) -> None:
            super().__init__("writer", "asks three questions, then thanks")
            self.asked = 0

        @property
        def produced_message_types(self):
            return (TextMessage,)

        async def on_messages(self, messages, cancellation_token) -> Response:
            self.asked += 1
            text = f"What is the waiting period, part {self.asked}?" if self.asked <= 3 else THANK_YOU
            return Response(chat_message=TextMessage(content=text, source=self.name))

        async def on_reset(self, cancellation_token) -> None:
            self.asked = 0

    class Answerer(BaseChatAgent):
        @property
        def produced_message_types(self):
            return (TurnMessage,)

        async def on_messages(self, messages, cancellation_token) -> Response:
            turn = DialogueTurn(user_utterance=messages[-1].content, search_queries=["flood rider waiting period"],
                                search_results=results, agent_utterance="Thirty days after purchase [1].", cited=[1])
            return Response(chat_message=TurnMessage(content=turn, source=self.name))

        async def on_reset(self, cancellation_token) -> None:
            pass

    async def one() -> None:
        team = conversation_team(Asker(), Answerer("expert", "answers at once"), max_turns=3)
        async for _ in team.run_stream(task=TextMessage(content="Topic: flood coverage.", source="user")):
            pass

    async def run() -> float:
        for _ in range(10):
            await one()
        started = cpu_s()
        for _ in range(n):
            await one()
        return cpu_s() - started

    spent = asyncio.run(run())
    per_conversation = 1000 * spent / n
    return {"team_ms_per_conversation": round(per_conversation, 3),
            "team_ms_per_model_call": round(per_conversation / 9, 3)}  # a 3-turn conversation is 9 model calls


def main() -> None:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=1000, help="actor calls per setting (default 1000)")
    p.add_argument("--queries", type=int, default=200, help="queries embedded (default 200)")
    p.add_argument("--steps", type=int, default=200, help="chat steps (default 200)")
    p.add_argument("--conversations", type=int, default=200, help="conversation teams run (default 200)")
    p.add_argument("--address", default=None, help="join this Ray cluster (default: a local Ray)")
    args = p.parse_args()
    load = open("/proc/loadavg").read().split()[:3]
    ray.init(address=args.address, logging_level="ERROR", **({} if args.address else {"include_dashboard": False}))
    try:
        result = {**actor_calls(args.calls, task_events=True), **actor_calls(args.calls, task_events=False),
                  **embeddings(args.queries), **chat_steps(args.steps),
                  **conversation_teams(args.conversations), "loadavg": load}
    finally:
        ray.shutdown()
    print(f"Ray actor call, CPU ms: caller {result['actor_call_caller_ms_1']} + callee {result['actor_call_callee_ms_1']} "
          f"one at a time; {result['actor_call_caller_ms_50']} + {result['actor_call_callee_ms_50']} with 50 in flight; "
          f"task events off: {result['actor_call_caller_ms_1_no_events']} + {result['actor_call_callee_ms_1_no_events']}"
          f" and {result['actor_call_caller_ms_50_no_events']} + {result['actor_call_callee_ms_50_no_events']}")
    print(f"query embedding, thread CPU ms: dense {result['dense_query_ms']} alone, {result['dense_query_ms_of_3']} "
          f"each of three together; BM25 {result['bm25_query_ms']}")
    print(f"chat step, CPU ms: ChatModel.run {result['chat_step_ms']} (raystorm's client), "
          f"{result['chat_step_ms_autogen']} (--llm-client autogen); the same request posted with httpx alone "
          f"{result['raw_httpx_post_ms']}, with aiohttp alone {result['raw_aiohttp_post_ms']}")
    print(f"conversation team (autogen's runtime, two agents answering at once), CPU ms: "
          f"{result['team_ms_per_conversation']} a 3-turn conversation, "
          f"{result['team_ms_per_model_call']} per model call")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
