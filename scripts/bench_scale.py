"""How raystorm scales with the number of topics when a remote LLM's latency sets the time.

For each size N of `--topics 1,4,16,64`, N distinct topics over the bundled example corpus (its
documents' titles x a few aspects) go through `raystorm report --topics FILE --distributed` (a
subprocess, as users run it) on the chat path, against the stand-in endpoint
(`tests/support/llm_endpoint.py`, started here: `--latency-ms` per request, at most `--cap` requests in
flight, answering 429 beyond; raystorm's `--llm-concurrency` is set to the cap). Per size it prints:

- wall seconds (start-up included) and start-up seconds (until every actor was up);
- model calls (HTTP requests the endpoint served) and steps (llm_call_history.jsonl lines);
- the critical-path bound: the longest chain of calls that must follow one another, counted per
  topic from what the run recorded by `bench_cluster.chain_of`, times the latency; wall / bound;
- the model-call span (the first request's start to the last one's end) and span / bound, and the
  seconds before the first request and after the last (start-up; writing the last files and exiting);
- the peak of concurrent requests the endpoint saw (its request log);
- peak RSS of the driver and of the Ray actor processes (largest one, and all together), and the
  CPU seconds of driver, actors and Ray's own daemons spent during the run, sampled from /proc (what a
  running service's processes had spent before, their start-up included, is not counted);
- CPU-milliseconds per model call: all of that CPU over the requests the endpoint served
  (`"cpu_ms_per_call"`), and with `--profile DIR` where it goes (py-spy on the driver and every actor,
  `scripts/cpu_breakdown.py`'s parts, `"cpu_ms_per_call_by_part"`; py-spy slows what it samples, so
  take the totals from runs without it).

`--service` (with `--address`) starts `raystorm serve` before the first size and runs every size on it:
the actors are up before the clock starts, as on a long-lived cluster that keeps them (its start-up
is printed, not counted). `--in-process` adds the baseline: the same topics through `raystorm report` without Ray, one
topic after another (the stand-in for STORM's own way of running several topics). `--fail-rate
0.1` fails that share of requests (429/500/timeout/truncated/junk mixed) and checks that every
report completed and that no information table holds a snippet twice. One JSON line per size at
the end:

    python -m scripts.bench_scale --topics 1,4,16 --personas 3 --latency-ms 1000
    python -m scripts.bench_scale --topics 16 --fail-rate 0.1 --llm-timeout 5
    python -m scripts.bench_scale --topics 4 --in-process --address auto
    python -m scripts.bench_scale --topics 1,16,64 --address auto --service --cluster-pid PID
    python -m scripts.bench_scale --topics 16,16,16,64,64,64 --address auto --service --cluster-pid PID
    python -m scripts.bench_scale --topics 16 --address auto --service --cluster-pid PID --profile prof
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.bench_cluster import chain_of  # one copy of the critical-path count
from scripts.cpu_breakdown import Profiler, per_call_parts
from scripts.proc_sampler import Sampler
from tests.support.llm_endpoint import peak_concurrency, start_endpoint

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CORPUS = ROOT / "retrieval" / "example_corpus"
ASPECTS = ["", "history and changes", "coverage and exclusions", "claims and procedures", "costs and limits"]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", default="1,4,16", help="sizes, comma-separated (default 1,4,16)")
    p.add_argument("--personas", type=int, default=3, help="personas besides the basic fact writer (default 3)")
    p.add_argument("--turns", type=int, default=3, help="questions per conversation (default 3)")
    p.add_argument("--latency-ms", type=float, default=1000.0, help="endpoint latency per request (default 1000)")
    p.add_argument("--latency", default=None, help="an endpoint latency spec instead, e.g. "
                   "lognormal:median=1000,sigma=0.5 (the bound then uses the median)")
    p.add_argument("--cap", type=int, default=256, help="endpoint's concurrent-request cap = --llm-concurrency")
    p.add_argument("--fail-rate", type=float, default=0.0, help="share of requests that fail (default 0)")
    p.add_argument("--fail-mix", default=None, help="failure kinds and weights (llm_endpoint.py --fail-mix)")
    p.add_argument("--llm-timeout", type=float, default=None, help="raystorm's per-request limit (with failures: "
                   "a stalled request waits this long; default 3x the latency, at least 5 s)")
    p.add_argument("--llm-retries", type=int, default=8)
    p.add_argument("--address", default=None, help="join this Ray cluster (the endpoint then binds 0.0.0.0)")
    p.add_argument("--writers", type=int, default=None, help="PersonaWriter actors (default: raystorm's sizing)")
    p.add_argument("--experts", type=int, default=None, help="Expert actors (default: raystorm's sizing)")
    p.add_argument("--cluster-pid", type=int, default=None, help="with --address on this machine: the pid of "
                   "`ray start --head --block`, whose descendants (the actors) are sampled too")
    p.add_argument("--service", action="store_true", help="with --address: start `raystorm serve` once (its actors "
                   "up before the first size; one endpoint for all sizes) and run every size on it")
    p.add_argument("--in-process", action="store_true", help="also run each size in process, topic by topic")
    p.add_argument("--only-in-process", action="store_true", help="only the in-process baseline")
    p.add_argument("--sample-s", type=float, default=0.5, help="RSS/CPU sampling period (default 0.5)")
    p.add_argument("--profile", metavar="DIR", help="py-spy on the driver and every actor during each size: print "
                   "where the CPU per model call goes (scripts/cpu_breakdown.py's parts); raw stacks kept in DIR")
    p.add_argument("--profile-rate", type=int, default=100, help="py-spy samples a second (default 100)")
    p.add_argument("--keep", metavar="DIR", help="keep the data dir, runs and endpoint logs here")
    p.add_argument("--results", metavar="FILE.jsonl", help="append each size's JSON line to this file")
    p.add_argument("--plot", metavar="FILE.png", help="plot wall time against topics from --results (every "
                   "line in it, this run's included; needs matplotlib: pip install -e '.[bench]')")
    return p.parse_args()


def topic_list(n: int) -> list[str]:
    """N distinct topics: each document's title, then the titles with an aspect."""
    titles = []
    for path in sorted(CORPUS.glob("*.md")):
        m = re.search(r"^title:\s*(.+)$", path.read_text(), re.MULTILINE)
        titles.append(m.group(1).strip() if m else path.stem.replace("-", " "))
    topics = [f"{t} {a}".strip() for a in ASPECTS for t in titles]
    if n > len(topics):
        raise SystemExit(f"at most {len(topics)} topics can be made from the corpus, asked for {n}")
    return topics[:n]


def raystorm(*args: str) -> list[str]:
    return [sys.executable, "-m", "cluster.cli", *args]


class Endpoint:
    """The stand-in endpoint of a run (or of the whole benchmark, with --service) and the flags that reach it."""

    def __init__(self, args, log_path: Path):
        self.latency = args.latency or f"fixed:{args.latency_ms:g}"
        self.latency_s = (float(re.search(r"median=([\d.]+)", self.latency).group(1))
                          if self.latency.startswith("lognormal") else float(self.latency.split(":")[1])) / 1000.0
        timeout = args.llm_timeout or max(5.0, 3 * self.latency_s)
        self.server = start_endpoint(latency=self.latency, max_concurrency=args.cap, fail_rate=args.fail_rate,
                                     fail_mix=args.fail_mix, stall_s=timeout * 2, log_path=log_path,
                                     host="0.0.0.0" if args.address else "127.0.0.1")
        url = self.server.url  # on a cluster, actors on other nodes reach it at this machine's address
        if args.address:
            url = url.replace("127.0.0.1", socket.gethostbyname(socket.gethostname()))
        self.flags = ["--llm", "standin", "--llm-base-url", url, "--llm-concurrency", str(args.cap),
                      "--llm-timeout", f"{timeout:g}", "--llm-retries", str(args.llm_retries), "--no-llm-cache"]


def plan_flags(args) -> list[str]:
    return [f for flag, v in (("--writers", args.writers), ("--experts", args.experts)) if v for f in (flag, str(v))]


def run_size(n: int, args, home: Path, base: Path, distributed: bool, shared: Endpoint | None = None) -> dict:
    """One size through `raystorm report`; `shared`: the endpoint the --service was started with."""
    label = ("raystorm (service)" if shared else "raystorm") if distributed else "raystorm-in-process"
    work = base / f"{label.replace(' ', '-').replace('(', '').replace(')', '')}-{n}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    topics = topic_list(n)
    (work / "topics.txt").write_text("\n".join(topics) + "\n")
    endpoint = shared or Endpoint(args, work / "endpoint.jsonl")
    seen = len(endpoint.server.requests())
    cmd = raystorm("report", "--topics", str(work / "topics.txt"), "-c", "example", "--data-dir", str(home),
                   "--out", str(work / "out"), "--personas", str(args.personas), "--turns", str(args.turns),
                   *endpoint.flags)
    if distributed:
        cmd += ["--address", args.address] if args.address else ["--distributed"]
        if not shared:  # the service runs with the plan it was started with
            cmd += plan_flags(args)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    started, started_epoch = time.perf_counter(), time.time()
    ready_at: list[float] = []
    with (work / "stderr.txt").open("w") as err_file:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        sampler = Sampler(proc.pid, args.sample_s, cluster_pid=args.cluster_pid if distributed else None)
        profiler = Profiler(Path(args.profile) / work.name, args.profile_rate) if args.profile else None
        if profiler:
            sampler.on_new.append(profiler.add)
        sampler.start()
        for line in proc.stderr:
            if not ready_at and re.search(r"\d+ writers and \d+ experts on|using the report service", line):
                ready_at.append(time.perf_counter())
            err_file.write(f"{time.perf_counter() - started:8.2f} {line}")
        _, status, usage = os.wait4(proc.pid, 0)  # the driver's own CPU to its end, which sampling can miss
        rc = proc.returncode = os.waitstatus_to_exitcode(status)
    wall, ended_epoch = time.perf_counter() - started, time.time()
    sampler.stop_event.set()
    sampler.join()
    stacks = profiler.stop() if profiler else None
    if not shared:
        endpoint.server.stop()
    log = endpoint.server.requests()[seen:]
    folders = [d for d in sorted((work / "out").iterdir()) if d.is_dir()] if (work / "out").exists() else []
    done = [d for d in folders if (d / "report.md").exists()]
    if rc != 0 or len(done) != n:
        tail = (work / "stderr.txt").read_text().splitlines()[-15:]
        raise SystemExit(f"{label} at {n} topics: exit {rc}, {len(done)} of {n} reports\n" + "\n".join(tail))
    chains, steps = zip(*(chain_of(d, args.turns) for d in done))
    bound = max(chains) * endpoint.latency_s
    first, last = (min(e["start"] for e in log), max(e["end"] for e in log)) if log else (started_epoch, started_epoch)
    duplicates = sum(duplicate_snippets(d) for d in done)
    outcomes: dict[str, int] = {}
    for e in log:
        outcomes[e["outcome"]] = outcomes.get(e["outcome"], 0) + 1
    used = sampler.summary()
    if shared:  # a client without children: its rusage is its own CPU, to the last file written
        used["cpu_s"]["driver"] = round(usage.ru_utime + usage.ru_stime, 2)
    cpu_total = sum(used["cpu_s"].values())
    per_call = {"cpu_ms_per_call": round(1000 * cpu_total / len(log), 2) if log else None}
    if stacks is not None:
        per_call["cpu_ms_per_call_by_part"] = per_call_parts(stacks, sampler, len(log), args.profile_rate)
    return {"system": label, "topics": n, "personas": args.personas + 1, "turns": args.turns,
            "writers": args.writers, "experts": args.experts,
            "latency": endpoint.latency, "cap": args.cap, "fail_rate": args.fail_rate, "wall_s": round(wall, 2),
            "startup_s": round(ready_at[0] - started, 2) if ready_at else None,
            "critical_path_calls": max(chains), "critical_path_s": round(bound, 2),
            "wall_over_bound": round(wall / bound, 3) if bound else None,
            "calls": len(log), "steps": sum(steps), "outcomes": outcomes, "peak_concurrency": peak_concurrency(log),
            "llm_span_s": round(last - first, 2), "span_over_bound": round((last - first) / bound, 3) if bound else None,
            "before_first_call_s": round(first - started_epoch, 2), "after_last_call_s": round(ended_epoch - last, 2),
            **used, **per_call, "reports": len(done), "duplicate_snippets": duplicates,
            "loadavg": open("/proc/loadavg").read().split()[:3]}


def duplicate_snippets(folder: Path) -> int:
    """Snippets the topic's information table holds twice (url_to_info.json: one entry per URL)."""
    info = json.loads((folder / "url_to_info.json").read_text())
    extra = 0
    for entry in (info.get("url_to_info") or {}).values():
        snippets = entry.get("snippets") or []
        extra += len(snippets) - len(set(snippets))
    urls = info.get("url_to_unified_index") or {}
    extra += len(urls) - len(set(urls.values()))  # two URLs sharing one citation number
    return extra


@contextlib.contextmanager
def service(args, home: Path, base: Path):
    """`raystorm serve` for the benchmark's collection, against one endpoint for every size; stopped after."""
    if not args.address:
        raise SystemExit("--service needs --address (a running cluster: `ray start --head`, then --address auto)")
    endpoint = Endpoint(args, base / "endpoint.jsonl")
    where = ["-c", "example", "--data-dir", str(home), "--address", args.address]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    started = time.perf_counter()
    up = subprocess.run(raystorm("serve", *where, *endpoint.flags, *plan_flags(args)), cwd=ROOT, env=env,
                        capture_output=True, text=True)
    if up.returncode != 0:
        endpoint.server.stop()
        raise SystemExit(f"raystorm serve failed ({up.returncode}):\n{up.stderr[-2000:]}")
    print(f"service up in {time.perf_counter() - started:.1f} s (not counted in the sizes' wall): "
          f"{up.stdout.splitlines()[0]}", flush=True)
    try:
        yield endpoint
    finally:
        subprocess.run(raystorm("serve", *where, "--stop"), cwd=ROOT, env=env, capture_output=True)
        endpoint.server.stop()


def main() -> None:
    args = parse_args()
    sizes = [int(s) for s in args.topics.split(",") if s.strip()]  # none: only --plot
    base = Path(args.keep or tempfile.mkdtemp(prefix="raystorm-scale-"))
    base.mkdir(parents=True, exist_ok=True)
    home = base / "home"
    results = []
    shared = None
    with contextlib.ExitStack() as stack:
        if not args.keep:  # (first in, last out: after the service let go of the store)
            stack.callback(shutil.rmtree, base, ignore_errors=True)
        if sizes:
            subprocess.run(raystorm("ingest", str(CORPUS), "--collection", "example", "--data-dir", str(home), "-q"),
                           cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True, stdout=subprocess.DEVNULL)
        print(f"{os.cpu_count()} CPUs, load average {open('/proc/loadavg').read().split()[:3]}, "
              f"{args.personas + 1} personas x {args.turns} turns, cap {args.cap}", flush=True)
        if args.service and sizes:
            shared = stack.enter_context(service(args, home, base))
        for n in sizes:
            modes = ([False] if args.only_in_process else [True] + ([False] if args.in_process else []))
            for distributed in modes:
                r = run_size(n, args, home, base, distributed, shared if distributed else None)
                results.append(r)
                print(f"{r['system']:>20} {n:3d} topics: {r['wall_s']:8.1f} s wall ({r['startup_s']} s start-up), "
                      f"bound {r['critical_path_s']:.1f} s ({r['critical_path_calls']} calls) -> "
                      f"{r['wall_over_bound']}x; model calls span {r['llm_span_s']} s -> {r['span_over_bound']}x "
                      f"({r['before_first_call_s']} s before the first, {r['after_last_call_s']} s after the last); "
                      f"{r['calls']} requests, peak {r['peak_concurrency']} in flight; "
                      f"RSS driver {r['rss_mb']['driver']} MB, actor max {r['rss_mb']['actor_max']} MB "
                      f"({r['rss_mb']['actors']} actors, {r['rss_mb']['actors_total']} MB); "
                      f"CPU {r['cpu_s']} = {r['cpu_ms_per_call']} ms per model call; "
                      f"duplicates {r['duplicate_snippets']}", flush=True)
                for part, ms in (r.get("cpu_ms_per_call_by_part") or {}).items():
                    print(f"{'':>24}{ms:7.2f} ms per call  {part}", flush=True)
    for r in results:
        print(json.dumps(r))
    if args.results:
        with open(args.results, "a") as f:
            f.writelines(json.dumps(r) + "\n" for r in results)
    if args.plot:
        if not args.results:
            raise SystemExit("--plot draws the lines of --results FILE: give it")
        plot([json.loads(line) for line in Path(args.results).read_text().splitlines() if line.strip()], args.plot)


def plot(rows: list[dict], path: str) -> None:
    """Wall seconds against topics, one line per system (clean runs; fault runs as points)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4), dpi=120)
    for system in sorted({r["system"] for r in rows}):
        clean = sorted((r["topics"], r["wall_s"]) for r in rows if r["system"] == system and not r["fail_rate"])
        if clean:
            ax.plot(*zip(*clean), marker="o", label=system)
        faulty = [(r["topics"], r["wall_s"]) for r in rows if r["system"] == system and r["fail_rate"]]
        if faulty:
            ax.scatter(*zip(*faulty), marker="x", color="red", label=f"{system}, 10% failing requests")
    bounds = sorted({(r["topics"], r["critical_path_s"]) for r in rows if r["system"] == "raystorm"})
    if bounds:
        ax.plot(*zip(*bounds), linestyle="--", color="gray", label="critical path")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("topics (4 personas x 3 turns, 1 s per LLM call)")
    ax.set_ylabel("wall seconds")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
