"""CPU and memory of a run's processes, sampled from /proc: `Sampler`.

Follows a driver process and its descendants (a local Ray's daemons and workers) and, given, the
process tree of a cluster the run joins (`ray start --head --block`), and sorts them into the driver,
Ray actor processes (named after the actor they host), idle workers and Ray's own daemons. It keeps
each process's peak RSS and the CPU it spent *since the sampler started*: what a running service's
processes had spent before (their start-up) is not the run's. Used by `scripts/bench_scale.py`.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path


class Sampler(threading.Thread):
    """Peak RSS, and CPU spent since the sampler started, of the driver, the Ray actor processes and Ray's
    daemons, from /proc."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, driver_pid: int, period_s: float, cluster_pid: int | None = None):
        super().__init__(daemon=True)
        self.roots = [driver_pid] + ([cluster_pid] if cluster_pid else [])
        self.driver_pid = driver_pid
        self.period_s = period_s
        self.stop_event = threading.Event()
        self.peak: dict[int, float] = {}  # pid -> MB
        self.cpu: dict[int, float] = {}  # pid -> seconds, last seen
        self.kind: dict[int, str] = {}
        self.peak_actors_total = 0.0
        self.names: dict[int, str] = {}  # actor pid -> its class (Expert, PersonaWriter, ...)
        self.on_new: list = []  # callbacks(pid, name) for the driver and each actor, once (the profiler's)
        self.announced: set[int] = set()
        # CPU already spent when the run starts (a cluster's daemons, a service's actors) is not the run's
        self.cpu0: dict[int, float] = {}
        for pid in self.ours():
            if pid != driver_pid and (seen := self.sample(pid)) is not None:
                self.cpu0[pid] = seen[2]

    def classify(self, pid: int, cmd: str) -> str | None:
        if pid == self.driver_pid:
            return "driver"
        if cmd.startswith(("ray::DashboardAgent", "ray::RuntimeEnvAgent")):  # Ray's own per-node agents
            return "ray"
        if cmd.startswith("ray::"):  # Ray names a worker process after the actor it hosts
            return "actor" if not cmd.startswith(("ray::IDLE", "ray::idle")) else "idle_worker"
        if "default_worker.py" in cmd:
            return "idle_worker"
        if any(d in cmd for d in ("raylet", "gcs_server", "dashboard", "log_monitor", "monitor.py",
                                   "runtime_env", "ray/_private")):
            return "ray"
        return None

    def sample(self, pid: int) -> tuple[str, float, float] | None:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            status = Path(f"/proc/{pid}/status").read_text()
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
        return cmd, (int(m.group(1)) / 1024 if m else 0.0), (int(stat[11]) + int(stat[12])) / self.TICK

    def ours(self) -> set[int]:
        """The driver and its descendants (a local Ray's daemons and workers), and with `--cluster-pid`
        that process's (the `ray start --head --block` of the cluster the run joins)."""
        parent: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    parent[int(entry.name)] = int(Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
        found, frontier = set(self.roots), list(self.roots)
        while frontier:
            children = [p for p, pp in parent.items() if pp in frontier and p not in found]
            found.update(children)
            frontier = children
        return found

    def run(self) -> None:
        while not self.stop_event.is_set():
            self.tick()
            self.stop_event.wait(self.period_s)
        self.tick()  # the CPU the service's actors spent up to the end

    def tick(self) -> None:
        total = 0.0
        for pid in self.ours():
            seen = self.sample(pid)
            if seen is None:
                continue
            cmd, rss, cpu = seen
            kind = self.classify(pid, cmd)
            if kind is None:
                continue
            if self.kind.get(pid) != "actor":  # once an actor, always counted as one
                self.kind[pid] = kind
            if kind == "actor":
                self.names[pid] = cmd.split()[0].removeprefix("ray::").split("[")[0]
            # the driver once its interpreter is up (some CPU spent), each actor once it hosts one
            if (kind == "actor" or (kind == "driver" and cpu >= 0.2)) and pid not in self.announced:
                self.announced.add(pid)
                for callback in self.on_new:
                    callback(pid, self.names.get(pid, kind))
            self.peak[pid] = max(self.peak.get(pid, 0.0), rss)
            self.cpu[pid] = cpu
            if self.kind[pid] == "actor":
                total += rss
        self.peak_actors_total = max(self.peak_actors_total, total)

    def used(self, pid: int) -> float:
        """CPU seconds this process spent since the run started."""
        return self.cpu[pid] - self.cpu0.get(pid, 0.0)

    def summary(self) -> dict:
        def of(kind):
            return [pid for pid, k in self.kind.items() if k == kind]
        actors = of("actor")
        return {"rss_mb": {"driver": round(max((self.peak[p] for p in of("driver")), default=0.0), 1),
                           "actor_max": round(max((self.peak[p] for p in actors), default=0.0), 1),
                           "actors_total": round(self.peak_actors_total, 1), "actors": len(actors)},
                "cpu_s": {k: round(sum(self.used(p) for p in of(k)), 2)
                          for k in ("driver", "actor", "idle_worker", "ray")},
                "by_actor": {name: {"n": len(pids), "cpu_s": round(sum(self.used(p) for p in pids), 2),
                                    "rss_mb_max": round(max(self.peak[p] for p in pids), 1)}
                             for name in sorted(set(self.names.values()))
                             for pids in [[p for p, n in self.names.items() if n == name]]}}
