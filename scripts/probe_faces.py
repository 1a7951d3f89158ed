"""What the faces do with hostile input, measured: a 50 MB body sent to `raystorm web` and to `raystorm mcp
--transport http` (declared and chunked), and a 1 GB zip-bomb .docx beside a normal file in `raystorm ingest`.

    python -m scripts.probe_faces                  # everything
    python -m scripts.probe_faces --only bodies    # or: bomb

For each body: the status, seconds to the answer, MB sent before it, the server's RSS growth (kB). For the
face: its listeners beyond loopback and how many processes it runs. For the bomb: the ingest's exit code,
seconds, peak RSS (MB, from a parent that waited for it alone), the same without the bomb, and the line it
printed for the bomb. Ends with
one JSON line per probe.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.http_probe import (free_port, is_loopback, listeners, post_large, rss_kb, run_measured,
                                      session_pids, start_face)

ROOT = Path(__file__).resolve().parents[1]
RAYSTORM = str(Path(sys.executable).with_name("raystorm"))


def probe_bodies(home: Path) -> list[dict]:
    env = {**os.environ, "RAYSTORM_HOME": str(home)}
    for name in ("RAYSTORM_WEB_TOKEN", "RAYSTORM_MCP_TOKEN"):
        env.pop(name, None)
    subprocess.run([RAYSTORM, "ingest", str(ROOT / "retrieval" / "example_corpus"), "-c", "probe", "-q"], env=env,
                   check=True)
    rows = []
    for face, args, path in [("web", ["web"], "/api/ask"), ("mcp", ["mcp", "--transport", "http"], "/mcp")]:
        port = free_port()
        started = time.perf_counter()
        server = start_face([RAYSTORM, *args, "-c", "probe", "--port", str(port)], home, env, port)
        ready = time.perf_counter() - started
        try:
            pids = session_pids(server.pid)
            heard = listeners(pids)
            for chunked in (False, True):
                before = rss_kb(server.pid)
                refusal = post_large(port, path, 50, chunked)
                time.sleep(0.5)  # let anything the request made settle into the RSS
                rows.append({"probe": "body", "face": face, "body": "chunked" if chunked else "content-length",
                             "status": refusal.status, "seconds": round(refusal.seconds, 3),
                             "sent_mb": round(refusal.sent_mb, 1), "rss_growth_kb": rss_kb(server.pid) - before,
                             "line": refusal.line})
            rows.append({"probe": "face", "face": face, "ready_s": round(ready, 1), "processes": len(pids),
                         "listeners": heard, "beyond_loopback": [a for a in heard if not is_loopback(a)]})
        finally:
            os.kill(server.pid, signal.SIGTERM)
            server.wait(30)
            rows[-1]["left_after_sigterm"] = len(session_pids(server.pid))
    return rows


def probe_bomb(home: Path) -> dict:
    from tests.retrieval.office_files import write_bomb, write_docx

    corpus = home / "bomb-corpus"
    corpus.mkdir()
    write_bomb(corpus / "bomb.docx", "word/document.xml", 1024)
    write_docx(corpus / "normal.docx", [("p", "The lighthouse keeper logs the tide at dawn every day.")])
    env = {**os.environ, "RAYSTORM_HOME": str(home)}
    done = run_measured([RAYSTORM, "ingest", str(corpus), "-c", "bomb"], home, env)
    (corpus / "bomb.docx").rename(home / "bomb.docx")  # the same ingest without the bomb, for comparison
    alone = run_measured([RAYSTORM, "ingest", str(corpus), "-c", "alone"], home, env)
    return {"probe": "bomb", "rc": done.rc, "seconds": round(done.seconds, 1),
            "bomb_mb": round((home / "bomb.docx").stat().st_size / 2**20, 1), "peak_rss_mb": round(done.peak_mb),
            "without_bomb": {"seconds": round(alone.seconds, 1), "peak_rss_mb": round(alone.peak_mb)},
            "line": next((x for x in done.err.splitlines() if "bomb.docx" in x), None),
            "summary": done.out.strip().splitlines()[-1] if done.out.strip() else None}


def main() -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=["bodies", "bomb"])
    args = p.parse_args()
    home = Path(tempfile.mkdtemp(prefix="probe-faces-"))
    try:
        rows = ([probe_bomb(home)] if args.only != "bodies" else []) + \
               (probe_bodies(home) if args.only != "bomb" else [])
    finally:
        shutil.rmtree(home, ignore_errors=True)
    for row in rows:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
