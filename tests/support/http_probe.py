"""Probes of a command started as a process: raw HTTP requests a client library would not send (a 50 MB body
declared or streamed, a foreign Host), its memory (now, and a command's peak), its listeners and the
processes it started.

Used by tests/web/test_gate.py, tests/test_mcp_limits.py and scripts/probe_faces.py."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel

BLOCK = b"x" * 65536


class Refusal(BaseModel):
    """What a server answered to a large body: its status line, its one line, how much was sent first."""

    status: int
    line: str
    sent_mb: float
    seconds: float


def post_large(port: int, path: str, megabytes: int, chunked: bool, host: str | None = None) -> Refusal:
    """POST `megabytes` MB of JSON-ish bytes to 127.0.0.1:port, declared with Content-Length or streamed
    chunked, stopping as soon as the server answers (or stops reading)."""
    started = time.monotonic()
    total, sent, reply = megabytes * 2**20, 0, b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        head = (f"POST {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nContent-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\n")
        head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {total}\r\n\r\n"
        conn.sendall(head.encode())
        try:
            while sent < total and not reply:
                conn.sendall(b"%x\r\n%s\r\n" % (len(BLOCK), BLOCK) if chunked else BLOCK)
                sent += len(BLOCK)
                conn.setblocking(False)
                try:
                    reply = conn.recv(65536)
                except BlockingIOError:
                    pass
                conn.setblocking(True)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed while we were still sending
        conn.settimeout(10)
        try:
            while b"\r\n\r\n" not in reply and (more := conn.recv(65536)):
                reply += more
            reply += conn.recv(65536)
        except (OSError, socket.timeout):
            pass
    status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0
    body = reply.split(b"\r\n\r\n", 1)[-1].decode("latin-1")
    line = next((x for x in body.splitlines() if x and not re.fullmatch(r"[0-9a-f]+", x)), "")
    return Refusal(status=status, line=line, sent_mb=sent / 2**20, seconds=time.monotonic() - started)


class Measured(BaseModel):
    """A command run to its end: exit code, output, seconds and its peak resident memory."""

    rc: int
    out: str
    err: str
    seconds: float
    peak_mb: float


# run by a fresh Python, so RUSAGE_CHILDREN's peak is the command's alone
_MEASURE = ("import json, resource, subprocess, sys, time\nt = time.monotonic()\n"
            "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "print(json.dumps({'rc': done.returncode, 'err': done.stderr, 'out': done.stdout, "
            "'seconds': time.monotonic() - t, 'peak_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))")


def run_measured(args: list[str], cwd: Path, env: dict, timeout: float = 600) -> Measured:
    """Run `args` to its end and measure its peak RSS (ru_maxrss of the only child its parent waited for)."""
    ran = subprocess.run([sys.executable, "-c", _MEASURE, *args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    return Measured.model_validate(json.loads(ran.stdout))


def rss_kb(pid: int) -> int:
    """The resident memory of process `pid` now, in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def session_pids(sid: int) -> set[int]:
    """Every live process of session `sid` (a face started with `start_new_session=True`: it and all it
    started, whatever their parents became)."""
    out = subprocess.run(["ps", "-eo", "pid=,sid=,stat="], capture_output=True, text=True).stdout
    return {int(p) for p, s, stat in (line.split() for line in out.splitlines()) if int(s) == sid and "Z" not in stat}


def listeners(pids: set[int]) -> list[str]:
    """The TCP addresses (host:port) that processes `pids` listen on."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    return [line.split()[3] for line in out.splitlines() if set(map(int, re.findall(r"pid=(\d+)", line))) & pids]


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "::1") or host.startswith("127.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, seconds: float = 180) -> None:
    """Until something accepts on 127.0.0.1:port; fails if `proc` ends first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server ended ({proc.returncode}) before listening: {proc.stdout.read()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"nothing listens on {port} after {seconds:.0f} s")


def start_face(args: list[str], cwd: Path, env: dict, port: int) -> subprocess.Popen:
    """A face (`raystorm web ...`, `raystorm mcp ... --transport http`) started in its own session."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        wait_for_port(port, proc)
    except BaseException:
        os.killpg(proc.pid, 9)
        raise
    return proc
