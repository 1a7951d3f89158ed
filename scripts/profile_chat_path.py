"""What one model call on the chat path costs our own process in CPU, and where it goes.

Starts the stand-in endpoint (`tests/support/llm_endpoint.py`, `--latency fixed:0` unless told, in a
child process so that its CPU is not counted as ours), ingests the bundled example corpus into a
temporary data dir, then does IN PROCESS what `raystorm report` without `--distributed` does (its
options parsed by the CLI's parser; the store, embedders, models and local runtime built once; the
report flow `run_topic` for one topic after another: no Ray) for the first `--topics N` topics of
`bench_scale.topic_list`, under cProfile, every Python thread profiled (the corpus's worker
thread and `asyncio.to_thread`'s included), with a per-thread CPU clock unless `--timer wall`.

It prints: model calls (HTTP requests the endpoint served) and steps (lines of
llm_call_history.jsonl), the CPU seconds of our process during the report (user + system, all
threads, native ones such as onnxruntime's included) and per call, the endpoint's CPU beside
it, the load average, then per package group (ours: agents/retrieval/cluster; autogen, openai,
httpx, pydantic, fastembed, qdrant, json_repair, asyncio, stdlib, ...) its self time and its top
functions by cumulative time. Set-up is never counted; `--warmup` first runs one other topic,
so that lazy imports, model loading and first-use caches are not counted either; `--out DIR` keeps the reports, to compare
two versions' artifacts with `diff -r`:

    python -m scripts.profile_chat_path --topics 4 --warmup --out prof-before
    python -m scripts.profile_chat_path --topics 4 --top 8 --pstats chat.pstats
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from scripts.bench_scale import CORPUS, topic_list  # one copy of the topics
from tests.support.llm_endpoint import read_log

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Package groups, matched on a profiled function's file path (first match wins).
GROUPS: list[tuple[str, str]] = [
    ("ours", rf"^{re.escape(str(ROOT))}/(agents|retrieval|cluster|actors)/"),
    ("autogen", r"/site-packages/autogen_(core|ext|agentchat)/"),
    ("openai", r"/site-packages/openai/"),
    ("httpx", r"/site-packages/(httpx2?|httpcore2?|h11|anyio|sniffio|certifi)/"),
    ("pydantic", r"/site-packages/(pydantic|pydantic_core|annotated_types)/"),
    ("fastembed", r"/site-packages/(fastembed|onnxruntime|tokenizers|huggingface_hub|numpy|PIL|mmh3|py_rust_stemmers)/"),
    ("qdrant", r"/site-packages/(qdrant_client|grpc|portalocker)/"),
    ("json_repair", r"/site-packages/json_repair/"),
    ("tiktoken", r"/site-packages/(tiktoken|regex)/"),
    ("asyncio", r"/asyncio/"),
    ("other site-packages", r"/site-packages/"),
    ("stdlib", r"/lib/python3[^/]*/"),
]


def group_of(filename: str) -> str:
    if filename == "~":  # a builtin (C) function: charged to whoever called it, see `own_group`
        return "builtins"
    for name, pattern in GROUPS:
        if re.search(pattern, filename):
            return name
    return "other"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topics", type=int, default=4, help="how many topics of bench_scale.topic_list (default 4)")
    p.add_argument("--personas", type=int, default=3, help="personas besides the basic fact writer (default 3)")
    p.add_argument("--turns", type=int, default=3, help="questions per conversation (default 3)")
    p.add_argument("--latency", default="fixed:0", help="the endpoint's latency spec (default fixed:0)")
    p.add_argument("--concurrency", type=int, default=8, help="--llm-concurrency (default 8)")
    p.add_argument("--llm-cache", action="store_true", help="use the completion cache (cold: a fresh dir) "
                   "instead of --no-llm-cache")
    p.add_argument("--embed-threads", type=int, default=None, metavar="N", help="onnxruntime threads per embedding "
                   "model (retrieval.embeddings.embed_threads; Ray actors use 1; default: raystorm's in-process "
                   "default)")
    p.add_argument("--warmup", action="store_true", help="first run one other topic, unprofiled and uncounted")
    p.add_argument("--timer", choices=("cpu", "wall"), default="cpu",
                   help="cProfile's clock: each thread's CPU time (default) or wall time")
    p.add_argument("--top", type=int, default=6, help="functions shown per group (default 6)")
    p.add_argument("--top-all", type=int, default=25, help="functions shown overall, by self time (default 25)")
    p.add_argument("--no-profile", action="store_true", help="count CPU only, without cProfile's overhead")
    p.add_argument("--out", metavar="DIR", help="keep the reports here (emptied first)")
    p.add_argument("--pstats", metavar="FILE", help="also dump the merged profile here (for snakeviz, pstats)")
    return p.parse_args()


class ThreadProfiles:
    """cProfile in every thread while `on()`: the calling one, and each other thread started after
    `install()` (so the corpus's worker and asyncio's executor, which the warm-up starts, count too)."""

    def __init__(self, timer: str):
        self.timer = time.thread_time if timer == "cpu" else time.perf_counter
        self.profiles: list[cProfile.Profile] = []
        self.lock = threading.Lock()
        self.active = False

    def _new(self) -> cProfile.Profile:
        prof = cProfile.Profile(self.timer)
        with self.lock:
            self.profiles.append(prof)
        return prof

    def _hook(self, frame, event, arg):  # each other thread's profile function until its cProfile starts
        if self.active:
            sys.setprofile(None)
            self._new().enable()  # replaces this hook in that thread; it stays on (an idle thread adds nothing)

    def install(self) -> None:
        threading.setprofile(self._hook)

    @contextlib.contextmanager
    def on(self):
        main = self._new()
        self.active = True
        main.enable()
        try:
            yield
        finally:
            main.disable()
            self.active = False
            threading.setprofile(None)

    def stats(self) -> pstats.Stats:
        merged = None
        for prof in self.profiles:
            prof.snapshot_stats()  # the other threads are idle by now
            if not prof.stats:
                continue
            if merged is None:
                merged = pstats.Stats(prof, stream=io.StringIO())
            else:
                merged.add(prof)
        return merged


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def proc_cpu_s(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_s() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by kind: the main thread, Python threads by
    name (digits dropped: one line per pool), native threads as "native" (with their name if they
    have their own)."""
    names = {t.native_id: re.sub(r"[-_]?\d+", "", t.name) for t in threading.enumerate()}
    comm = Path("/proc/self/comm").read_text().strip()
    out: dict[str, float] = {}
    for entry in os.scandir("/proc/self/task"):
        tid = int(entry.name)
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kind = "main" if tid == os.getpid() else names.get(tid)
        if kind is None:  # a native thread: onnxruntime's and OpenBLAS's keep the process's name
            name = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
            kind = "native" if name == comm else "native " + re.sub(r"[-_]?\d+", "", name)
        out[kind] = out.get(kind, 0.0) + (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    return out


def start_endpoint_process(latency: str, log: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.llm_endpoint", "--port", "0", "--latency", latency,
                             "--log", str(log)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit(f"the endpoint did not start (said {url!r})")
    return proc, url


def report_argv(home: Path, out: Path, url: str, args) -> list[str]:
    """The `raystorm report` options of the run, parsed by the CLI's own parser."""
    argv = ["report", "-c", "example", "--data-dir", str(home), "--out", str(out),
            "--personas", str(args.personas), "--turns", str(args.turns), "--llm", "standin", "--llm-base-url", url,
            "--llm-concurrency", str(args.concurrency), "--llm-timeout", "60", "--llm-retries", "2"]
    return argv + ([] if args.llm_cache else ["--no-llm-cache"])


async def run_reports(cli, warm_topics: list[str], topics: list[str], warm_out: Path, out: Path,
                      measure: contextlib.AbstractContextManager, embed_threads: int | None) -> None:
    """What `raystorm report` does in process (cluster/commands/report.py `_run`), with the set-up (store,
    embedders, clients) and the warm-up topics outside `measure` and the measured topics inside it."""
    from agents.lm.arguments import role_models_from_args, settings_from_args
    from agents.lm.nlp import TextToolkit
    from agents.lm.settings import STORM_ROLES
    from agents.runtime import LocalRuntime
    from agents.storm.flow import ReportOptions, run_topic
    from agents.storm.run_config import RunConfig
    from cluster.commands.common import store_settings
    from retrieval.config import data_home
    from retrieval.infotable import AsyncInformationTable, InformationTable
    from retrieval.ingest import Ingestor
    from retrieval.search import AsyncCorpus, Corpus

    settings, llm = store_settings(cli), settings_from_args(cli)
    dense = None  # the CLI's: the Ingestor's own embedder, onnxruntime's default threads
    if embed_threads is not None:  # as a Ray actor builds it
        from retrieval.embeddings import embed_threads as set_embed_threads
        from retrieval.embeddings import shared_dense

        set_embed_threads(embed_threads)
        dense = shared_dense(settings.dense_model, settings.models_dir)
    ingestor = Ingestor(settings, dense=dense)
    store = ingestor.store
    corpus = Corpus(settings, cli.collection, store=store, dense=ingestor.dense, sparse=ingestor.sparse)
    corpus.check()
    models = role_models_from_args(cli, cache_dir=data_home(settings.data_dir) / "cache" / "llm",
                                   nlp=TextToolkit(embed=corpus.dense.embed))
    models.validate_roles(STORM_ROLES)
    options = ReportOptions(personas=cli.personas, turns=cli.turns, search_k=cli.search_k,
                            where=f"collection '{cli.collection}'")
    retriever = AsyncCorpus(corpus)
    runtime = LocalRuntime(models, retriever, version=retriever.version, tables=lambda name: AsyncInformationTable(
        InformationTable(store, name, corpus.dense, corpus.sparse, source=cli.collection)))
    try:
        for group, folder in ((warm_topics, warm_out), (topics, out)):
            with measure if group is topics else contextlib.nullcontext():
                for topic in group:
                    config = RunConfig(topic=topic, collection=cli.collection, corpus=[], store=settings, llm=llm,
                                       options=options)
                    await run_topic(topic, runtime, str(folder), options, config=config, llm=llm)
    finally:
        await models.close()
        retriever.close()
        store.close()


class Measure(contextlib.AbstractContextManager):
    """Across the block, with the profiler on: this process's CPU, wall time, the main thread's CPU,
    and `outside()` (the endpoint's requests served and CPU) before and after."""

    def __init__(self, profiles: "ThreadProfiles | None", outside):
        self.profiles = profiles
        self.outside = outside

    def __enter__(self):
        self.outside_before = self.outside()
        self.threads0 = thread_cpu_s()
        self._profiling = self.profiles.on() if self.profiles else contextlib.nullcontext()
        self.cpu0, self.wall0, self.main0 = cpu_s(), time.perf_counter(), time.thread_time()
        self._profiling.__enter__()
        return self

    def __exit__(self, *exc):
        self._profiling.__exit__(*exc)
        self.cpu, self.wall = cpu_s() - self.cpu0, time.perf_counter() - self.wall0
        self.main_cpu = time.thread_time() - self.main0
        self.outside_after = self.outside()
        after = thread_cpu_s()
        self.threads = {k: v - self.threads0.get(k, 0.0) for k, v in after.items()}
        return False


def print_profile(stats: pstats.Stats, args) -> None:
    rows = []  # (group, label, calls, self s, cumulative s)
    for (filename, line, name), (_cc, nc, tt, ct, callers) in stats.stats.items():
        group = group_of(filename)
        if group == "builtins":  # a C function: charged to the group of its heaviest caller
            heaviest = max(callers.items(), key=lambda kv: kv[1][2], default=None)
            group = group_of(heaviest[0][0]) if heaviest else "other"
            if group == "builtins":
                group = "other"
            label = name
        else:
            short = filename.replace(str(ROOT) + "/", "")
            short = re.sub(r"^.*/site-packages/", "", short)
            short = re.sub(r"^.*/lib/python3[^/]*/", "", short)
            label = f"{short}:{line}({name})"
        rows.append((group, label, nc, tt, ct))
    total = sum(r[3] for r in rows)
    by_group: dict[str, list] = {}
    for r in rows:
        by_group.setdefault(r[0], []).append(r)
    print(f"\nself time by package group (of {total:.2f} s profiled; a C builtin counts in its caller's group):")
    for group, rs in sorted(by_group.items(), key=lambda kv: -sum(r[3] for r in kv[1])):
        print(f"  {group:<20} {sum(r[3] for r in rs):7.2f} s  {100 * sum(r[3] for r in rs) / total:5.1f}%")
    print(f"\ntop {args.top} functions by cumulative time, per group:")
    for group, rs in sorted(by_group.items(), key=lambda kv: -sum(r[3] for r in kv[1])):
        print(f"  [{group}]")
        for _, label, nc, tt, ct in sorted(rs, key=lambda r: -r[4])[:args.top]:
            print(f"    {ct:7.2f} cum {tt:6.2f} self {nc:9d} calls  {label}")
    print(f"\ntop {args.top_all} functions by self time:")
    for group, label, nc, tt, ct in sorted(rows, key=lambda r: -r[3])[:args.top_all]:
        print(f"  {tt:6.2f} self {ct:7.2f} cum {nc:9d} calls  [{group}] {label}")


def main() -> None:
    args = parse_args()
    topics_all = topic_list(args.topics + (1 if args.warmup else 0))
    warm_topics, topics = (topics_all[-1:], topics_all[:-1]) if args.warmup else ([], topics_all)
    work = Path(tempfile.mkdtemp(prefix="raystorm-profile-"))
    home = work / "home"
    out = Path(args.out).resolve() if args.out else work / "out"
    shutil.rmtree(out, ignore_errors=True)
    from cluster.cli import build_parser
    from cluster.commands.common import run_async

    endpoint, url = start_endpoint_process(args.latency, work / "endpoint.jsonl")
    profiles = None if args.no_profile else ThreadProfiles(args.timer)
    if profiles:
        profiles.install()
    measure = Measure(profiles, lambda: (len(read_log(work / "endpoint.jsonl")), proc_cpu_s(endpoint.pid),
                                         os.getloadavg()))
    try:
        # in a child process, so that this one builds its models only with the run's settings
        subprocess.run([sys.executable, "-m", "cluster.cli", "ingest", str(CORPUS), "--collection", "example",
                        "--data-dir", str(home), "-q"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       check=True, stdout=subprocess.DEVNULL)
        cli = build_parser().parse_args(report_argv(home, out, url, args))
        said = io.StringIO()  # progress lines; shown only on failure
        try:
            with contextlib.redirect_stderr(said):
                run_async(run_reports(cli, warm_topics, topics, work / "warmup", out, measure, args.embed_threads))
        except BaseException:
            sys.stderr.write(said.getvalue()[-3000:])
            raise
    finally:
        endpoint.terminate()
        endpoint.wait(timeout=10)
    (calls0, ep0, load_before), (calls1, ep1, _) = measure.outside_before, measure.outside_after
    calls, endpoint_cpu = calls1 - calls0, ep1 - ep0
    cpu, wall, main_cpu = measure.cpu, measure.wall, measure.main_cpu
    steps = sum(len((d / "llm_call_history.jsonl").read_text().splitlines())
                for d in out.iterdir() if (d / "llm_call_history.jsonl").exists())
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"{len(topics)} topics ({args.personas + 1} personas x {args.turns} turns), endpoint latency "
          f"{args.latency}, {'profiled (' + args.timer + ' clock)' if profiles else 'not profiled'}"
          f"{', after a warm-up topic' if warm_topics else ''}")
    print(f"model calls: {calls} requests served, {steps} steps recorded")
    print(f"our process: {cpu:.2f} CPU s in {wall:.2f} s wall (main thread {main_cpu:.2f} CPU s) -> "
          f"{1000 * cpu / max(calls, 1):.1f} ms CPU per call")
    print("  by thread: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(measure.threads.items(), key=lambda kv: -kv[1])
                                     if v >= 0.005) + " (live threads at the end, CPU s)")
    print(f"endpoint (child process): {endpoint_cpu:.2f} CPU s")
    print(f"load average before {[round(x, 2) for x in load_before]}, after {load}")
    if profiles:
        stats = profiles.stats()
        print_profile(stats, args)
        if args.pstats:
            stats.dump_stats(args.pstats)
    print(json.dumps({"topics": len(topics), "calls": calls, "steps": steps, "cpu_s": round(cpu, 3),
                      "cpu_ms_per_call": round(1000 * cpu / max(calls, 1), 2), "wall_s": round(wall, 2),
                      "endpoint_cpu_s": round(endpoint_cpu, 2), "profiled": bool(profiles), "loadavg": load}))
    shutil.rmtree(work, ignore_errors=True)  # --out lies outside it


if __name__ == "__main__":
    main()
