"""Pages per second fetched and extracted on fetcher actors, beside the bound that latency sets.

    python -m scripts.bench_fetch                          # 64 pages, 300 ms each, 1 / 4 / 16 slots
    python -m scripts.bench_fetch --latency-ms 100 --pages 128 --slots 1 4 16 32

A local site (its own process) answers every page after `--latency-ms` (a page is ~`--page-kb` of
HTML paragraphs that trafilatura extracts) on `--hosts` loopback addresses, 127.0.0.2, 127.0.0.3,
..., each its own domain, and the pages are spread over them. Per-domain politeness is not what is
measured: each domain may have as many requests in flight as there are slots, with no interval.
For each slot count, a `FetcherPool` of actors (up to 4 slots each) fetches every page once into a
fresh snapshot dir, after a warm-up round that loads each actor's HTTP client and extractor. The
bound is slots / latency: what the slots would give if fetching and extracting cost nothing.
Prints one row per slot count, then one JSON line:
{"latency_ms": ..., "pages": ..., "hosts": [...], "rows": [{"slots", "actors", "pages_per_s",
"bound_pages_per_s", "fetched", "seconds"}]}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOTS_PER_ACTOR = 4
WORDS = ("tide surge barrier estuary dike harbour gauge forecast flood gate storm sea wall polder sluice "
         "pump channel dune beach levee").split()


def page(n: int, kb: int) -> bytes:
    """About `kb` KB of distinct paragraphs, so each page is real work for the extractor."""
    paragraphs, size, i = [], 0, 0
    while size < kb * 1024:
        words = [WORDS[(n * 7 + i * 3 + j) % len(WORDS)] for j in range(60)]
        text = f"Paragraph {i} of page {n}: " + " ".join(words) + "."
        paragraphs.append(f"<p>{text}</p>")
        size += len(text) + 7
        i += 1
    return (f"<!DOCTYPE html><html><head><title>Page {n}</title><script>var x = {n};</script></head>"
            f"<body><nav>Home | Index</nav><article><h1>Page {n}</h1>{''.join(paragraphs)}</article>"
            f"<footer>Bench site</footer></body></html>").encode()


def serve(hosts: list[str], latency_s: float, kb: int) -> None:
    """The site: one threaded server per loopback address, all on one port; prints the port."""
    pages: dict[int, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format, *args):  # noqa: A002
            pass

        def do_GET(self):  # noqa: N802
            if self.path == "/robots.txt":
                body, kind = b"User-agent: *\nAllow: /\n", "text/plain"
            else:
                time.sleep(latency_s)
                n = int(self.path.rsplit("/", 1)[-1] or 0)
                body, kind = pages.setdefault(n, page(n, kb)), "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    first = ThreadingHTTPServer((hosts[0], 0), Handler)
    port = first.server_address[1]
    servers = [first] + [ThreadingHTTPServer((h, port), Handler) for h in hosts[1:]]
    for server in servers:
        server.daemon_threads = True
        server.request_queue_size = 128
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(port, flush=True)
    threading.Event().wait()


async def one_row(slots: int, urls: list[str], warm: list[str], latency_s: float) -> dict:
    from actors.fetcher import FetcherPool
    from agents.web.fetch import FetchSettings
    from agents.web.politeness import DomainLimits

    actors = max(1, -(-slots // SLOTS_PER_ACTOR))
    per_actor = -(-slots // actors)
    settings = FetchSettings(allow_private_hosts=True, timeout_s=60.0,
                             limits=DomainLimits(max_in_flight=slots, min_interval_s=0.0))
    with tempfile.TemporaryDirectory(prefix="bench-fetch-") as root:
        pool = FetcherPool.create(settings, Path(root) / "warm", actors=actors, slots_per_actor=per_actor)
        try:
            await pool.fetch_many(warm[: actors * per_actor])  # every actor's client and extractor loaded
            pool.store = type(pool.store)(Path(root) / "web")
            started = time.perf_counter()
            outcomes = await pool.fetch_many(urls)
            seconds = time.perf_counter() - started
        finally:
            pool.kill()
    fetched = sum(o.status == "fetched" for o in outcomes)
    failed = [f"{o.url}: {o.status} {o.reason}" for o in outcomes if o.status != "fetched"][:3]
    return {"slots": actors * per_actor, "actors": actors, "pages_per_s": round(fetched / seconds, 2),
            "bound_pages_per_s": round(actors * per_actor / latency_s, 2), "fetched": fetched,
            "seconds": round(seconds, 2), **({"not_fetched": failed} if failed else {})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency-ms", type=float, default=300.0, help="the site's answer time per page")
    parser.add_argument("--pages", type=int, default=64)
    parser.add_argument("--page-kb", type=int, default=20)
    parser.add_argument("--hosts", type=int, default=4, help="domains the pages are spread over (127.0.0.2, ...)")
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--address", default=None, help="a Ray cluster to join (default: a local Ray)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the site's own process
    args = parser.parse_args()
    hosts = [f"127.0.0.{i + 2}" for i in range(args.hosts)]
    latency_s = args.latency_ms / 1000.0
    if args.serve:
        serve(hosts, latency_s, args.page_kb)
        return

    from cluster.runtime import connect

    site = subprocess.Popen([sys.executable, "-m", "scripts.bench_fetch", "--serve", "--hosts", str(args.hosts),
                             "--latency-ms", str(args.latency_ms), "--page-kb", str(args.page_kb)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        port = int(site.stdout.readline())
        urls = [f"http://{hosts[n % len(hosts)]}:{port}/page/{n}" for n in range(args.pages)]
        warm = [f"http://{hosts[n % len(hosts)]}:{port}/warm/{100_000 + n}" for n in range(max(args.slots))]
        connect(address=args.address or "local")
        rows = []
        print(f"{args.pages} pages of ~{args.page_kb} KB, {args.latency_ms:g} ms each, over {len(hosts)} domains "
              f"({hosts[0]}..{hosts[-1]}); load {os.getloadavg()[0]:.1f}")
        for slots in args.slots:
            row = asyncio.run(one_row(slots, urls, warm, latency_s))
            rows.append(row)
            print(f"{row['slots']:3d} slots ({row['actors']} actors): {row['pages_per_s']:7.2f} pages/s   "
                  f"bound {row['bound_pages_per_s']:7.2f}   ({row['fetched']}/{args.pages} in {row['seconds']} s)")
        print(json.dumps({"latency_ms": args.latency_ms, "pages": args.pages, "page_kb": args.page_kb,
                          "hosts": hosts, "load": round(os.getloadavg()[0], 1), "rows": rows}))
    finally:
        site.terminate()
        site.wait(timeout=30)


if __name__ == "__main__":
    main()
