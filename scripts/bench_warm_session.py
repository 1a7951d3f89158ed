"""How close to the critical path a run of N topics gets when its actors are already up.

`bench_scale.py` times `raystorm report` as users run it: start-up (Python, Ray, the actors) included.
This script asks what is left once start-up costs nothing, the most any long-lived service that kept
the actors warm could give: it opens one research session (`cluster.distributed.research_session`:
gateway, corpus, writers and experts up, on a local Ray or `--address`) and runs the same N topics
through it `--repeats` times (`report_topics`, the flow `raystorm report --distributed` runs), against
the stand-in endpoint (`tests/support/llm_endpoint.py`, `--latency-ms` per request, cap `--cap`). The first
repeat warms the actors' first-use caches; the clock of each repeat starts when its topics do.

Per repeat it prints the wall seconds, the model-call span (first request's start to last one's end),
the critical-path bound (`bench_cluster.chain_of`, as bench_scale counts it) and both ratios, and the
CPU seconds this process and the actors' processes spent in the repeat (from /proc). Run it under
`taskset -c 0` to see the same work on one core. Last lines: one JSON line per repeat.

    python -m scripts.bench_warm_session --topics 16
    taskset -c 0 python -m scripts.bench_warm_session --topics 16
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
import time
from pathlib import Path

from scripts.bench_cluster import chain_of
from scripts.bench_scale import CORPUS, topic_list
from scripts.proc_sampler import Sampler
from tests.support.llm_endpoint import peak_concurrency, start_endpoint

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", type=int, default=16, help="topics per repeat (default 16)")
    p.add_argument("--repeats", type=int, default=3, help="runs of the same topics in the one session (default 3)")
    p.add_argument("--personas", type=int, default=3, help="personas besides the basic fact writer (default 3)")
    p.add_argument("--turns", type=int, default=3, help="questions per conversation (default 3)")
    p.add_argument("--latency-ms", type=float, default=1000.0, help="endpoint latency per request (default 1000)")
    p.add_argument("--cap", type=int, default=256, help="endpoint's concurrent-request cap = the gateway's limit")
    p.add_argument("--address", default=None, help="join this Ray cluster (default: a local Ray)")
    p.add_argument("--keep", metavar="DIR", help="keep the data dir and the reports here")
    return p.parse_args()


async def repeats(args: argparse.Namespace, base: Path, home: Path) -> list[dict]:
    from agents.lm.settings import LLMSettings
    from agents.storm.flow import ReportOptions
    from cluster.distributed import ClusterPlan, report_topics, research_session
    from retrieval.config import StoreSettings

    endpoint = start_endpoint(latency=f"fixed:{args.latency_ms:g}", max_concurrency=args.cap,
                              log_path=base / "endpoint.jsonl")
    llm = LLMSettings.model_validate({
        "default": {"provider": "openai_compatible", "model": "standin", "base_url": endpoint.url},
        "concurrency": args.cap, "cache": False,
        "retry": {"max_retries": 8, "timeout_s": max(5.0, 3 * args.latency_ms / 1000)}})
    options = ReportOptions(personas=args.personas, turns=args.turns)
    topics = topic_list(args.topics)
    rows = []
    try:
        started = time.perf_counter()
        async with research_session(store=StoreSettings(data_dir=str(home)), collection="example", llm=llm,
                                    plan=ClusterPlan(llm_concurrency=args.cap), address=args.address,
                                    personas_total=len(topics) * (args.personas + 1)) as run:
            print(f"session up in {time.perf_counter() - started:.1f} s; {len(run.writers)} writers, "
                  f"{len(run.experts)} experts", flush=True)
            sampler = Sampler(os.getpid(), 0.5)
            sampler.start()
            await asyncio.sleep(2 * sampler.period_s)  # a first sample: start-up's CPU is not a repeat's
            for k in range(args.repeats):
                before_cpu, seen = dict(sampler.cpu), len(endpoint.requests())
                out = base / f"out{k}"
                t0 = time.perf_counter()
                await report_topics(topics, run, str(out), options)
                wall = time.perf_counter() - t0
                await asyncio.sleep(2 * sampler.period_s)  # one more sample of every process's CPU
                log = endpoint.requests()[seen:]
                done = sorted(d for d in out.iterdir() if (d / "report.md").exists())
                bound = max(chain_of(d, args.turns)[0] for d in done) * args.latency_ms / 1000
                span = max(e["end"] for e in log) - min(e["start"] for e in log)
                cpu = {kind: round(sum(s - before_cpu.get(pid, 0.0) for pid, s in sampler.cpu.items()
                                       if sampler.kind.get(pid) == kind), 1) for kind in ("driver", "actor")}
                rows.append({"topics": len(topics), "repeat": k, "reports": len(done), "wall_s": round(wall, 2),
                             "llm_span_s": round(span, 2), "critical_path_s": bound,
                             "wall_over_bound": round(wall / bound, 3), "span_over_bound": round(span / bound, 3),
                             "calls": len(log), "peak_concurrency": peak_concurrency(log), "cpu_s": cpu,
                             "cpus": len(os.sched_getaffinity(0)),
                             "loadavg": open("/proc/loadavg").read().split()[:3]})
                r = rows[-1]
                print(f"repeat {k}: {r['reports']} reports in {r['wall_s']} s (span {r['llm_span_s']} s), bound "
                      f"{bound:.1f} s -> {r['wall_over_bound']}x wall, {r['span_over_bound']}x span; "
                      f"{r['calls']} calls, peak {r['peak_concurrency']} in flight; CPU {cpu} on {r['cpus']} "
                      f"core(s); load {r['loadavg']}", flush=True)
            sampler.stop_event.set()
    finally:
        endpoint.stop()
    return rows


def main() -> None:
    args = parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="raystorm-warm-"))
    home = base / "home"
    subprocess.run([sys.executable, "-m", "cluster.cli", "ingest", str(CORPUS), "--collection", "example",
                    "--data-dir", str(home), "-q"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        rows = asyncio.run(repeats(args, base, home))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
