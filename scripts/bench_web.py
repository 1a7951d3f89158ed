"""Load check of `raystorm web`: N concurrent `POST /api/ask` on one embedded collection, and the time to
the first byte of a streamed answer.

    python -m scripts.bench_web                    # the bundled corpus, 20 concurrent asks
    python -m scripts.bench_web --concurrent 50 --corpus DIR

It ingests the corpus into a fresh data dir, starts `raystorm web` (in its own process), waits for
/api/health, then sends the asks at once and prints the latency percentiles, then streams one answer
and prints when its first byte and its answer arrived. Ends with one JSON line:
{"concurrent": N, "answered": K, "p50_s": ..., "p95_s": ..., "first_byte_ms": ..., "stream_answer_s": ..., "load": ...}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [q["question"] for q in json.loads(
    (ROOT / "tests" / "data" / "current_questions.json").read_text())["questions"]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def one(client: httpx.AsyncClient, url: str, question: str) -> tuple[float, bool]:
    started = time.perf_counter()
    reply = await client.post(f"{url}/api/ask", json={"collection": "bench", "question": question}, timeout=600)
    return time.perf_counter() - started, reply.status_code == 200 and "answer" in reply.json()


async def load_check(url: str, n: int) -> dict:
    async with httpx.AsyncClient() as client:
        results = await asyncio.gather(*(one(client, url, QUESTIONS[i % len(QUESTIONS)]) for i in range(n)))
        times = sorted(t for t, _ in results)
        body = {"collection": "bench", "question": QUESTIONS[0]}
        started = time.perf_counter()
        first = answer = None
        async with client.stream("POST", f"{url}/api/ask", json=body, timeout=600,
                                 headers={"accept": "text/event-stream"}) as reply:
            async for line in reply.aiter_lines():
                first = first or time.perf_counter() - started
                if line.startswith("event: answer"):
                    answer = time.perf_counter() - started
    return {"concurrent": n, "answered": sum(ok for _, ok in results), "p50_s": round(statistics.median(times), 2),
            "p95_s": round(times[max(0, int(round(0.95 * n)) - 1)], 2), "first_byte_ms": round(first * 1000, 1),
            "stream_answer_s": round(answer or 0, 2)}


def main() -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--concurrent", type=int, default=20)
    p.add_argument("--corpus", type=Path, default=ROOT / "retrieval" / "example_corpus")
    args = p.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-web-"))
    raystorm = str(Path(sys.executable).with_name("raystorm"))
    env = {**os.environ, "RAYSTORM_HOME": str(home)}
    subprocess.run([raystorm, "ingest", str(args.corpus), "-c", "bench", "-q"], env=env, check=True)
    port = free_port()
    server = subprocess.Popen([raystorm, "web", "-c", "bench", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        started = time.perf_counter()
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        ready = time.perf_counter() - started
        row = asyncio.run(load_check(url, args.concurrent))
        row.update(ready_s=round(ready, 1), load=os.getloadavg()[0], cpus=os.cpu_count())
        print(json.dumps(row))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
