"""How many actor calls a run on the service makes, by method: `python -m scripts.count_actor_calls`.

Each actor call costs CPU in its caller, its callee and Ray's daemons whatever it carries, so calls per
model call is the number the orchestration's cost follows. This starts a fresh Ray head (2 CPUs) and
runs `scripts.bench_scale --service` on it, every process of both with a `sitecustomize` on its path that
counts `ActorMethod.remote` by method name and writes the counts to a file every two seconds; then it
adds them up and prints calls per method, in all and per model call. Counting is not timing: the CPU
figures of such a run are not comparable with `bench_scale`'s own (the counter runs in every call).

    python -m scripts.count_actor_calls --topics 16
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COUNTER = '''
import collections, json, os, threading, time
_counts, _lock = collections.Counter(), threading.Lock()

def _dump():
    with _lock:
        data = dict(_counts)
    path = os.path.join({out!r}, f"{{os.getpid()}}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(data, f)
    os.replace(path + ".tmp", path)

def _every_two_seconds():
    while True:
        time.sleep(2)
        _dump()

try:
    import ray.actor as _actor
except Exception:
    _actor = None
if _actor is not None:
    _remote = _actor.ActorMethod._remote

    def _counted(self, *args, **kwargs):
        with _lock:
            _counts[self._method_name] += 1
        return _remote(self, *args, **kwargs)

    _actor.ActorMethod._remote = _counted
    threading.Thread(target=_every_two_seconds, daemon=True).start()
'''


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topics", type=int, default=16, help="topics of the run (default 16)")
    args = p.parse_args(argv)
    ray = str(Path(sys.executable).with_name("ray"))
    with tempfile.TemporaryDirectory(prefix="raystorm-count-") as tmp:
        site, out = Path(tmp) / "site", Path(tmp) / "counts"
        site.mkdir()
        out.mkdir()
        (site / "sitecustomize.py").write_text(COUNTER.format(out=str(out)), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), str(ROOT),
                                                                         os.environ.get("PYTHONPATH")]))}
        subprocess.run([ray, "stop", "--force"], capture_output=True)
        head = subprocess.Popen([ray, "start", "--head", "--block", "--num-cpus", "2", "--disable-usage-stats"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            time.sleep(12)  # the head's daemons up
            results = Path(tmp) / "results.jsonl"
            run = subprocess.run([sys.executable, "-m", "scripts.bench_scale", "--topics", str(args.topics),
                                  "--address", "auto", "--service", "--cluster-pid", str(head.pid),
                                  "--results", str(results)], cwd=ROOT, env=env, capture_output=True, text=True)
            if run.returncode != 0:
                print(run.stdout[-2000:], run.stderr[-2000:], sep="\n", file=sys.stderr)
                return run.returncode
            time.sleep(2.5)  # the processes' last counts written
            calls = json.loads(results.read_text(encoding="utf-8").splitlines()[-1])["calls"]
        finally:
            subprocess.run([ray, "stop", "--force"], capture_output=True)
            if head.poll() is None:
                os.killpg(head.pid, signal.SIGTERM)
        counts: Counter = Counter()
        for f in out.glob("*.json"):
            counts.update(json.loads(f.read_text(encoding="utf-8")))
    total = sum(counts.values())
    print(f"{args.topics} topics, {calls} model calls: {total} actor calls, {total / calls:.2f} per model call")
    for method, n in counts.most_common():
        print(f"  {n:6d}  {n / calls:5.2f} per model call  {method}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
