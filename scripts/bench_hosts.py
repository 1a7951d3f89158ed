"""Ingest on three hosts against one process on the same machine, and how the embedding split.

The hosts are the test bed of tests/hosts (three Ray nodes in network namespaces, each with its own
address, Ray temp dir, RAYSTORM_HOME and cache, token auth on; needs root and `ip netns`). The corpus
is the bundled example corpus copied `--copies` times into folders of its own, each text line marked
with its copy's number (so no two copies share a passage's text: 113 passages a copy). Both runs are `raystorm ingest`
as a user runs it on the head's host, each into a fresh data dir:

  (a) one process: `raystorm ingest CORPUS -c bench` (no address);
  (b) the bed: `raystorm ingest CORPUS -c bench --address HEAD:6379 --embed-workers N`.

It prints both wall times (each includes its own start-up: the model load, for (b) joining Ray
and starting the pool), the passages, and for (b) the passages each node embedded, from the
command's own line. All hosts share this machine's cores, so the figure is the split and the
overhead, not a speed-up. Last line: JSON.

    sudo .venv/bin/python -m scripts.bench_hosts                    # 30 copies (~3,400 passages)
    sudo .venv/bin/python -m scripts.bench_hosts --copies 10 --embed-workers 6
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import retrieval.config
from tests.hosts.bed import Bed, unavailable_reason

CORPUS = Path(retrieval.config.__file__).parent / "example_corpus"
SPLIT = re.compile(r"embedded by (\d+) actor\(s\) on (\d+) node\(s\) \((.*)\), (\d+) passages/s per actor")
INGESTED = re.compile(r"(\d+) passages \((\d+) added")


def _copy(target: Path, number: int) -> None:
    """The example corpus with every text line marked as copy `number`: no passage's text repeats another
    copy's (the one-process embedder keeps the vectors of texts it has seen, which would flatter it)."""
    target.mkdir(parents=True)
    for source in sorted(CORPUS.iterdir()):
        lines, in_front_matter = [], False
        for i, line in enumerate(source.read_text(encoding="utf-8").splitlines()):
            if line.strip() == "---" and (i == 0 or in_front_matter):
                in_front_matter = i == 0
            elif line.strip() and not in_front_matter and not line.lstrip().startswith(("#", "|")):
                line = f"{line} (copy {number})"
            lines.append(line)
        (target / source.name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _ingest(bed: Bed, home: Path, corpus: Path, extra: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    result = bed.raystorm(bed.head, "ingest", str(corpus), "-c", "bench", "--data-dir", str(home), "-q", *extra,
                          timeout=1800)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"raystorm ingest {' '.join(extra)} exited {result.returncode}: {result.stderr[-2000:]}")
    return seconds, result.stdout + result.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=30, help="copies of the example corpus (113 passages each)")
    parser.add_argument("--embed-workers", type=int, default=3, help="embedding actors on the bed")
    parser.add_argument("--cpus-per-host", type=int, default=1, help="logical CPUs each Ray node offers")
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot build the three-host bed here: {reason}")
    base = Path(tempfile.mkdtemp(prefix="rs48-", dir="/tmp"))
    corpus = base / "corpus"
    for i in range(args.copies):
        _copy(corpus / f"copy-{i:03d}", i)
    bed = Bed(base, cpus_per_host=args.cpus_per_host)
    bed.up()
    try:
        one_s, one_out = _ingest(bed, base / "one-home", corpus, [])
        bed_s, bed_out = _ingest(bed, base / "bed-home", corpus,
                                 ["--address", bed.address, "--embed-workers", str(args.embed_workers)])
    finally:
        bed.down()
        shutil.rmtree(base, ignore_errors=True)
    passages = int(INGESTED.search(one_out).group(1))
    split = SPLIT.search(bed_out)
    if not split:
        raise SystemExit(f"the bed's ingest did not say how the embedding split: {bed_out[-2000:]}")
    actors, nodes, per_node, rate = split.groups()
    print(f"{passages} passages ({args.copies} copies of the example corpus)")
    print(f"one process:  {one_s:7.1f} s  ({passages / one_s:.0f} passages/s, start-up included)")
    print(f"3-host bed:   {bed_s:7.1f} s  ({passages / bed_s:.0f} passages/s; {actors} actors on {nodes} nodes, "
          f"{rate} passages/s per actor)")
    print(f"split by node (address (node id): passages): {per_node}")
    print(json.dumps({"passages": passages, "one_process_s": round(one_s, 2), "bed_s": round(bed_s, 2),
                      "actors": int(actors), "nodes": int(nodes), "per_node": per_node,
                      "per_actor_rate": int(rate)}))


if __name__ == "__main__":
    main()
