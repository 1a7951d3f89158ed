"""Where our processes spend CPU, from py-spy samples: `Profiler` records, `breakdown` sorts into parts.

`Profiler(folder)` runs one `py-spy record --gil --format raw --nonblocking` per process `add`ed (the
driver and every actor), stops them with SIGINT and reads their collapsed stacks back. `--gil` samples
only the thread holding the GIL, so at rate R a sample stands for 1/R seconds of Python running (or
ready to run) in that process. Its CPU measured in /proc beyond its samples is native code that
released the GIL: onnxruntime embedding queries, Ray's C++ core (gRPC, the object store), Qdrant Edge.

`breakdown(stacks)` gives each sample to the first part of `PARTS` (in that order) one of whose
patterns matches a frame of its stack, so an operation is counted where it starts: pydantic called
while parsing a reply is "reply parsing", pydantic elsewhere "pydantic validation".

Used by `python -m scripts.bench_scale --profile DIR`.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

# (part, patterns on "function (file:line)" frames), most specific first
PARTS: list[tuple[str, tuple[str, ...]]] = [
    ("query embedding", ("fastembed/", "onnxruntime", "retrieval/embeddings.py")),
    ("information table writes", ("table_add", "InformationTable.add", "RemoteTable.add", "agents/storm/evidence.py")),
    ("searches", ("retrieval/search.py", "retrieval/edge.py", "retrieval/store.py", "qdrant_client/",
                  "table_search", "InformationTable.search", "CorpusActor.search")),
    ("checkpoint and run files", ("agents/storm/checkpoints.py", "agents/storm/artifacts.py", "retrieval/saved.py")),
    ("completion cache", ("agents/lm/cache.py", "GatewayCache")),
    ("usage records and gateway", ("agents/lm/usage.py", "actors/gateway.py", "UsageFiler", "_record (agents/lm/chat.py")),
    ("progress events", ("cluster/observed.py", "Progress")),
    ("request rendering", ("render_input", "system_prompt", "response_format", "openai/_utils/_transform.py",
                           "agents/lm/arguments.py", "_build_request", "request_key")),
    ("reply parsing", ("parse_output", "agents/lm/output.py", "json_repair", "openai/_response.py",
                       "openai/_models.py", "openai/_legacy_response.py")),
    ("HTTP client", ("httpx", "httpcore", "h11/", "openai/_base_client.py", "anyio/", "ssl.py", "aiohttp/",
                     "yarl/", "multidict/", "agents/lm/direct_client.py")),
    ("Ray serialisation and actor hops", ("ray/_private/serialization.py", "cloudpickle", "ray/_raylet",
                                          "ray/_private/worker.py", "ray/actor.py", "ray/remote_function.py",
                                          "actors/calls.py", "actors/pool.py", "pickle", "msgpack")),
    ("pydantic validation", ("pydantic",)),
    ("autogen message handling", ("autogen_agentchat/", "autogen_core/", "autogen_ext/", "actors/chat_proxy.py")),
    ("logging", ("logging/",)),
    ("extractive text work", ("agents/lm/nlp.py", "agents/lm/extractive.py", "agents/lm/text/", "agents/lm/grounding.py")),
    ("STORM flow (ours)", ("agents/", "actors/", "cluster/", "retrieval/")),
    ("asyncio event loop", ("asyncio/", "uvloop")),
]
OTHER = "other"


# leaf frames of a thread that waits (in C, GIL released) though py-spy saw it as running
IDLE_LEAVES = ("Worker.main_loop (ray/_private/worker.py", "Thread.run (threading.py", "Condition.wait (threading.py",
               "_worker (concurrent/futures/thread.py", "select (selectors.py", "poll (selectors.py",
               "Event.wait (threading.py", "Thread.join", "_wait_for_tstate_lock", "sleep (")


def idle(stack: str) -> bool:
    return stack.rsplit(";", 1)[-1].startswith(IDLE_LEAVES)


def part_of(stack: str) -> str:
    for part, patterns in PARTS:
        if any(p in stack for p in patterns):
            return part
    return OTHER


def read_raw(path: Path) -> Counter:
    """A py-spy raw (collapsed) file: 'frame;frame;... COUNT' lines -> {stack: count}."""
    stacks: Counter = Counter()
    if not path.exists():
        return stacks
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks[stack] += int(count)
    return stacks


def breakdown(stacks: Counter, cpu_s: float | None = None, rate: int = 100,
              native: str = "native code") -> Counter:
    """Samples by part (idle ones left out); with `cpu_s` (the process's measured CPU), seconds by part
    plus `native`: what the measurement holds beyond the samples. (On a machine with fewer cores than
    busy threads, a thread waiting for a core with the GIL is sampled too: samples beyond `cpu_s` are
    then scaled down to it.)"""
    parts: Counter = Counter()
    for stack, count in stacks.items():
        if not idle(stack):
            parts[part_of(stack)] += count
    if cpu_s is None:
        return parts
    python = sum(parts.values()) / rate
    scale = min(1.0, cpu_s / python) if python else 1.0
    seconds = Counter({part: n / rate * scale for part, n in parts.items()})
    seconds[native] = max(0.0, cpu_s - python * scale)
    return seconds


class Profiler:
    """py-spy on each process `add`ed, sampling at `rate` Hz until `stop()`."""

    def __init__(self, folder: Path, rate: int = 100):
        self.exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        if not Path(self.exe).exists():
            raise SystemExit("--profile needs py-spy: pip install -e '.[bench]' (or pip install py-spy)")
        self.rate = rate
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.files: dict[int, tuple[str, Path]] = {}
        self.procs: list[subprocess.Popen] = []

    def add(self, pid: int, label: str) -> None:
        out = self.folder / f"{clean_label(label)}-{pid}.txt"
        self.files[pid] = (label, out)
        self.procs.append(subprocess.Popen(
            [self.exe, "record", "--pid", str(pid), "--gil", "--format", "raw", "--nonblocking",
             "--rate", str(self.rate), "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def stop(self) -> dict[int, tuple[str, Counter]]:
        """Stop every sampler; the label and stacks of each process."""
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
        return {pid: (label, read_raw(path)) for pid, (label, path) in self.files.items()}


def clean_label(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def per_call_parts(stacks: dict[int, tuple[str, Counter]], sampler, calls: int, rate: int) -> dict[str, float]:
    """CPU-ms per model call by part over the profiled processes (`Profiler.stop()`'s stacks): each process's
    CPU as `sampler` (`scripts.proc_sampler.Sampler`) measured it, shared out by `breakdown`; per process
    class, its native code beyond its Python samples; Ray's own daemons as one part."""
    cpu: Counter = Counter()
    for pid, (label, process_stacks) in stacks.items():
        if pid in sampler.cpu:
            cpu.update(breakdown(process_stacks, sampler.used(pid), rate, native=f"native code in {label}"))
    ms = {part: 1000 * s / calls for part, s in cpu.items()}
    daemons = [p for p, k in sampler.kind.items() if k in ("ray", "idle_worker")]
    ms["Ray's daemons (raylet, GCS, dashboard, idle workers)"] = 1000 * sum(sampler.used(p) for p in daemons) / calls
    return {part: round(v, 2) for part, v in sorted(ms.items(), key=lambda kv: -kv[1]) if v >= 0.005}
