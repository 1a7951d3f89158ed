#!/usr/bin/env python3
"""Benchmark `raystorm report` on FreshWiki: how well the outline recovers the real headings.

For each article in the FreshWiki folder: build its research corpus with the shared
`freshwiki_corpus.py` (the article's structure hidden: one document per cited URL,
no headings), run `raystorm report` on it (extractive model unless --llm is given),
score `storm_gen_outline.txt` against the gold headings with `outline_metrics.py`,
and print per-topic and mean heading soft recall, heading match recall and
precision, seconds per report and cited sources per section.

usage: python scripts/bench_report.py [--data DIR] [--work DIR] [--only NAME] [-- extra report args]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CITE = re.compile(r"\[(\d+)\]")


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return done


def cited_per_section(report: Path) -> float:
    """Distinct sources cited per section of report.md (References excluded)."""
    parts = re.split(r"(?m)^## ", report.read_text(encoding="utf-8"))[1:]
    sections = [p for p in parts if not p.startswith("References")]
    if not sections:
        return 0.0
    return statistics.mean(len(set(CITE.findall(p))) for p in sections)


def bench_one(article: Path, work: Path, tools: Path, extra: list[str]) -> dict:
    name = article.stem
    corpus = work / "corpora" / name
    run([sys.executable, str(tools / "freshwiki_corpus.py"), str(article), str(corpus)])
    gold = json.loads((corpus / "gold_outline.json").read_text())
    topic = gold["topic"]
    collection = "fw-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    started = time.monotonic()
    done = run([sys.executable, "-m", "cluster.cli", "report", topic, "--corpus", str(corpus / "docs"),
                "--collection", collection, "--data-dir", str(work / "home"), "--out", str(work / "runs"),
                "--exclude-url", gold["url"], *extra], cwd=ROOT)
    seconds = time.monotonic() - started
    report = Path(done.stdout.strip().splitlines()[0])
    outline = report.parent / "storm_gen_outline.txt"
    scores = json.loads(run([sys.executable, str(tools / "outline_metrics.py"), str(outline),
                             str(corpus / "gold_outline.json")]).stdout.strip().splitlines()[-1])
    return {"topic": topic, "soft": scores["heading_soft_recall"], "recall": scores["heading_match_recall"],
            "precision": scores["heading_match_precision"], "gold": scores["gold"], "predicted": scores["predicted"],
            "seconds": seconds, "cites": cited_per_section(report)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "freshwiki")
    parser.add_argument("--tools", type=Path, default=SHARED / "tools")
    parser.add_argument("--work", type=Path, help="keep corpora, store and runs here (default: a temp dir)")
    parser.add_argument("--only", action="append", default=[], help="only articles whose file name contains this")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="after --: more `raystorm report` options")
    args = parser.parse_args()
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    articles = sorted(p for p in args.data.glob("*.json") if not args.only or any(o in p.name for o in args.only))
    if not articles:
        sys.exit(f"no FreshWiki articles in {args.data}")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-report-"))
    print(f"{len(articles)} articles, work dir {work}, report options: {' '.join(extra) or '(defaults, extractive)'}")
    header = f"{'topic':<48} {'soft':>5} {'match R':>7} {'match P':>7} {'gold':>4} {'pred':>4} {'s/report':>8} {'cites/sec':>9}"
    print(header)
    print("-" * len(header))
    rows = []
    for article in articles:
        r = bench_one(article, work, args.tools, extra)
        rows.append(r)
        print(f"{r['topic'][:48]:<48} {r['soft']:>5.2f} {r['recall']:>7.2f} {r['precision']:>7.2f} {r['gold']:>4} "
              f"{r['predicted']:>4} {r['seconds']:>8.1f} {r['cites']:>9.2f}", flush=True)
    print("-" * len(header))
    mean = {k: statistics.mean(r[k] for r in rows) for k in ("soft", "recall", "precision", "seconds", "cites")}
    print(f"{'mean':<48} {mean['soft']:>5.2f} {mean['recall']:>7.2f} {mean['precision']:>7.2f} {'':>4} {'':>4} "
          f"{mean['seconds']:>8.1f} {mean['cites']:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
