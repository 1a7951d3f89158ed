"""A test bed of three hosts on one machine: Ray nodes in network namespaces, token auth on.

    bed = Bed(base, cpus_per_host=1)
    bed.up()
    result = bed.raystorm(bed.head, "ingest", CORPUS, "-c", "docs", "--address", bed.address)
    bed.down()

Each host is a network namespace with its own address (10.231.48.0/24 on a bridge that lives in a
namespace of its own, so the machine's own network is untouched), its own loopback, Ray temp dir,
RAYSTORM_HOME, XDG_CACHE_HOME and HOME (what a host's own disk would hold). The file system is
shared, as on hosts provisioned alike: the venv, the project and the token file are at the same
paths everywhere; a file only one host has is made with a private mount (`only_here`).

The bed owns exactly the processes that run in its namespaces: `down` finds them by their network
namespace (not by name, as `ray stop` would, which would stop every Ray of the machine), stops them
and deletes the namespaces and links. Traffic goes only to loopback and the bed's own addresses.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUBNET = "10.231.48"
PREFIX = "rs48"  # namespaces and links; a link name has at most 15 characters
SWITCH = f"{PREFIX}-sw"
RAY_PORT = 6379
DASHBOARD_PORT = 8265
# a lost node is marked dead after period x threshold (Ray's defaults: 3 s x 5): shorter here, so the
# fault test waits less; docs/cluster.md gives the trade-off
HEALTH = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
          "RAY_health_check_failure_threshold": "3"}
STEP_TIMEOUT_S = 600.0


class BedUnavailable(Exception):
    """This machine cannot host the bed (no root, no `ip netns`): the reason, for a skip."""


@dataclass
class Host:
    name: str  # head, w1, w2
    ns: str
    ip: str
    root: Path  # this host's own disk: ray/, home/, cache/, user/

    @property
    def link(self) -> str:
        return f"{PREFIX}{self.name}"

    @property
    def home(self) -> Path:
        """RAYSTORM_HOME of this host."""
        return self.root / "home"


def _sh(*argv: str, timeout: float = 60.0, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {result.returncode}: {result.stderr.strip()[-500:]}")
    return result


def unavailable_reason() -> str | None:
    """Why this machine cannot host the bed, or None."""
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "`ip netns` needs root"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    probe = f"{PREFIX}-probe"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)  # a probe a killed run left
    added = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if added.returncode != 0:
        return f"`ip netns add` is not allowed here: {added.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class Bed:
    def __init__(self, base: Path, cpus_per_host: int = 1, venv: Path | None = None):
        self.base = base
        self.cpus = cpus_per_host
        # the Python running the tests (a venv's, by its absolute path: a namespace's PATH need not have it)
        self.python = str(venv / "bin" / "python") if venv else sys.executable
        self.venv_bin = Path(self.python).parent
        self.token = base / "auth_token"
        self.hosts = [Host(name, f"{PREFIX}-{name}", f"{SUBNET}.{i + 1}", base / name)
                      for i, name in enumerate(("head", "w1", "w2"))]
        self.head, self.w1, self.w2 = self.hosts
        self.address = f"{self.head.ip}:{RAY_PORT}"
        self.job_address = f"http://{self.head.ip}:{DASHBOARD_PORT}"

    # --- life cycle -------------------------------------------------------------------------------------
    def up(self) -> None:
        """Namespaces, bridge, addresses, then a Ray head and two workers; torn down again on failure."""
        self.down()  # what a killed earlier run left (the names are the bed's own)
        try:
            self._network_up()
            self._ray_up()
        except BaseException:
            self.down()
            raise

    def _network_up(self) -> None:
        self.token.parent.mkdir(parents=True, exist_ok=True)
        self.token.write_text(secrets.token_hex(32))
        _sh("ip", "netns", "add", SWITCH)
        _sh("ip", "-n", SWITCH, "link", "add", f"{PREFIX}br", "type", "bridge")
        _sh("ip", "-n", SWITCH, "link", "set", f"{PREFIX}br", "up")
        for host in self.hosts:
            _sh("ip", "netns", "add", host.ns)
            # one veth pair per host: its end in the host, the peer on the switch's bridge
            _sh("ip", "link", "add", host.link, "type", "veth", "peer", "name", f"{host.link}p")
            _sh("ip", "link", "set", host.link, "netns", host.ns)
            _sh("ip", "link", "set", f"{host.link}p", "netns", SWITCH)
            _sh("ip", "-n", SWITCH, "link", "set", f"{host.link}p", "master", f"{PREFIX}br", "up")
            _sh("ip", "-n", host.ns, "link", "set", "lo", "up")
            _sh("ip", "-n", host.ns, "addr", "add", f"{host.ip}/24", "dev", host.link)
            _sh("ip", "-n", host.ns, "link", "set", host.link, "up")
            for folder in ("ray", "home", "cache", "user"):
                (host.root / folder).mkdir(parents=True, exist_ok=True)

    def _ray_up(self) -> None:
        common = ["--num-cpus", str(self.cpus), "--object-store-memory", str(100 * 1024 * 1024),
                  "--disable-usage-stats"]
        ray = str(self.venv_bin / "ray")
        head = self.head
        self._ray_start(head, [ray, "start", "--head", "--node-ip-address", head.ip, "--port", str(RAY_PORT),
                               "--temp-dir", str(head.root / "ray"), "--include-dashboard", "true",
                               "--dashboard-host", head.ip, "--dashboard-port", str(DASHBOARD_PORT), *common])
        for host in (self.w1, self.w2):
            self._ray_start(host, [ray, "start", "--address", self.address, "--node-ip-address", host.ip,
                                   "--temp-dir", str(host.root / "ray"), *common])

    def _ray_start(self, host: Host, argv: list[str]) -> None:
        # `ray start` needs RAY_AUTH_MODE=token itself; raystorm's commands are run without it (they set it)
        result = self.run(host, argv, env={"RAY_AUTH_MODE": "token", **HEALTH}, timeout=180)
        if result.returncode != 0:
            raise RuntimeError(f"ray start on {host.name} exited {result.returncode}: "
                               f"{(result.stdout + result.stderr).strip()[-1500:]}")

    def down(self) -> None:
        """Stop every process in the bed's namespaces (TERM, then KILL), delete namespaces and links."""
        for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            pids = self.pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait_s
            while pids and time.monotonic() < deadline:
                time.sleep(0.2)
                pids = self.pids()
            if not pids:
                break
        for ns in [h.ns for h in self.hosts] + [SWITCH]:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)  # its links go with it

    def pids(self) -> list[int]:
        """The processes living in one of the bed's network namespaces."""
        inodes = set()
        for ns in [h.ns for h in self.hosts] + [SWITCH]:
            try:
                inodes.add(os.stat(f"/run/netns/{ns}").st_ino)
            except OSError:
                continue
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                if os.stat(f"/proc/{entry}/ns/net").st_ino in inodes:
                    found.append(int(entry))
            except OSError:  # gone meanwhile
                continue
        return found

    # --- commands on a host ------------------------------------------------------------------------------
    def env(self, host: Host) -> dict[str, str]:
        return {"HOME": str(host.root / "user"), "RAYSTORM_HOME": str(host.home),
                "XDG_CACHE_HOME": str(host.root / "cache"), "RAY_TMPDIR": str(host.root / "ray"),
                "RAY_AUTH_TOKEN_PATH": str(self.token), "PATH": f"{self.venv_bin}:/usr/sbin:/usr/bin:/sbin:/bin",
                "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"}

    def _argv(self, host: Host, argv: list[str], env: dict[str, str] | None) -> list[str]:
        values = {**self.env(host), **(env or {})}
        return ["ip", "netns", "exec", host.ns, "env", "-i", *[f"{k}={v}" for k, v in values.items()], *argv]

    def run(self, host: Host, argv: list[str], env: dict[str, str] | None = None,
            timeout: float = STEP_TIMEOUT_S) -> subprocess.CompletedProcess:
        """`argv` on `host`, with that host's environment (plus `env`), from the project's root."""
        return subprocess.run(self._argv(host, argv, env), capture_output=True, text=True, timeout=timeout,
                              cwd=REPO)

    def start(self, host: Host, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        """`argv` on `host` in the background; its stderr is a pipe, its stdout too."""
        return subprocess.Popen(self._argv(host, argv, env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=REPO)

    def raystorm(self, host: Host, *args: str, env: dict[str, str] | None = None,
                 timeout: float = STEP_TIMEOUT_S) -> subprocess.CompletedProcess:
        """A `raystorm` command as a user runs it on `host` (the venv's python, by absolute path)."""
        return self.run(host, [self.python, "-m", "cluster.cli", *args], env=env, timeout=timeout)

    def only_here(self, folder: Path, source: Path, argv: list[str]) -> list[str]:
        """`argv` run where `folder` holds a copy of `source` that no other process sees: a private mount."""
        script = (f"mount -t tmpfs raystorm-bed {shlex.quote(str(folder))} && cp -r {shlex.quote(str(source))}/. "
                  f"{shlex.quote(str(folder))} && exec {shlex.join(argv)}")
        folder.mkdir(parents=True, exist_ok=True)
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]

    # --- faults --------------------------------------------------------------------------------------------
    def link_down(self, host: Host) -> None:
        """Cut `host` off the bed's network (its processes keep running, unreachable)."""
        _sh("ip", "-n", host.ns, "link", "set", host.link, "down")

    def kill_raylet(self, host: Host) -> int:
        """SIGKILL the raylet of `host` (Ray's node manager), as a crashed host would lose it; its pid."""
        inodes = {os.stat(f"/run/netns/{host.ns}").st_ino}
        for pid in self.pids():
            try:
                if os.stat(f"/proc/{pid}/ns/net").st_ino not in inodes:
                    continue
                exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if exe.endswith(b"/raylet"):
                os.kill(pid, signal.SIGKILL)
                return pid
        raise RuntimeError(f"no raylet runs on {host.name}")
