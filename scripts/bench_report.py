#!/usr/bin/env python3
"""Benchmark `raystorm report` on FreshWiki: how well the outline recovers the real headings.

For each article in the FreshWiki folder: build its research corpus with the shared
`freshwiki_corpus.py` (the article's structure hidden: one document per cited URL,
no headings), run `raystorm report` on it (extractive model unless --llm is given),
score `storm_gen_outline.txt` against the gold headings with `outline_metrics.py`,
and print per-topic and mean heading soft recall, heading match recall and
precision, seconds per report, cited sources per section, and the lead against the
article's real lead (its `summary`): content-word ROUGE-1 F1 and MiniLM cosine
(`scripts/calibrate/bench_lead.py`'s scorer).

With `--writer storm,react` each article is written by both writers (same corpus, same
research) and the rows are printed side by side; the react rows add tool calls per section
(from agent_log.jsonl).

With `--outline-params-dir DIR` (written by `scripts/calibrate/cv_outline.py --export`) each article is
reported with the outline knobs chosen on the folds that held it out: the figures are then a
held-out measure of the outline a report delivers.

usage: python -m scripts.bench_report [--data DIR] [--work DIR] [--only NAME] [--writer storm,react]
                                      [--outline-params-dir DIR] [-- extra report args]
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


def tool_calls_per_section(folder: Path) -> float | None:
    log = folder / "agent_log.jsonl"
    if not log.is_file():
        return None
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    per: dict[int, int] = {}
    for e in entries:
        if e["kind"] == "tool_call":
            per[e["section"]] = per.get(e["section"], 0) + 1
    return statistics.mean(per.values()) if per else 0.0


def lead_of(report: Path) -> str:
    """The report's lead: storm_gen_article_polished.txt above its first section, no citations."""
    text = (report.parent / "storm_gen_article_polished.txt").read_text(encoding="utf-8")
    return CITE.sub("", re.split(r"(?m)^# ", text)[0]).strip()


def bench_one(article: Path, work: Path, tools: Path, extra: list[str], writer: str, lead: "Scorer",
              knobs: Path | None = None) -> dict:
    name = article.stem
    if knobs is not None:
        extra = [*extra, "--outline-params", str(knobs / f"{name}.json")]
    corpus = work / "corpora" / name
    if not (corpus / "gold_outline.json").is_file():
        run([sys.executable, str(tools / "freshwiki_corpus.py"), str(article), str(corpus)])
    gold = json.loads((corpus / "gold_outline.json").read_text())
    topic = gold["topic"]
    collection = "fw-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    started = time.monotonic()
    done = run([sys.executable, "-m", "cluster.cli", "report", topic, "--corpus", str(corpus / "docs"),
                "--collection", collection, "--data-dir", str(work / "home"), "--out", str(work / "runs" / writer),
                "--exclude-url", gold["url"], "--writer", writer, *extra], cwd=ROOT)
    seconds = time.monotonic() - started
    report = Path(done.stdout.strip().splitlines()[0])
    outline = report.parent / "storm_gen_outline.txt"
    scores = json.loads(run([sys.executable, str(tools / "outline_metrics.py"), str(outline),
                             str(corpus / "gold_outline.json")]).stdout.strip().splitlines()[-1])
    mine, real = lead_of(report), json.loads(article.read_text())["summary"]
    return {"topic": topic, "soft": scores["heading_soft_recall"], "recall": scores["heading_match_recall"],
            "precision": scores["heading_match_precision"], "gold": scores["gold"], "predicted": scores["predicted"],
            "seconds": seconds, "cites": cited_per_section(report), "writer": writer,
            "tools": tool_calls_per_section(report.parent),
            "lead_r1": lead.rouge1(mine, real), "lead_cos": lead.cosine(mine, real)}


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "freshwiki")
    parser.add_argument("--tools", type=Path, default=SHARED / "tools")
    parser.add_argument("--work", type=Path, help="keep corpora, store and runs here (default: a temp dir)")
    parser.add_argument("--only", action="append", default=[], help="only articles whose file name contains this")
    parser.add_argument("--writer", default="storm", help="storm, react, or storm,react (side by side)")
    parser.add_argument("--outline-params-dir", type=Path, metavar="DIR",
                        help="run each article with the outline knobs in DIR/ARTICLE.json (`scripts.calibrate.cv_outline "
                             "--export`: chosen on the folds without it), so the figures are held out")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="after --: more `raystorm report` options")
    args = parser.parse_args()
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    articles = sorted(p for p in args.data.glob("*.json") if not args.only or any(o in p.name for o in args.only))
    if not articles:
        sys.exit(f"no FreshWiki articles in {args.data}")
    if args.outline_params_dir is not None:
        missing = [a.stem for a in articles if not (args.outline_params_dir / f"{a.stem}.json").is_file()]
        if missing:
            sys.exit(f"--outline-params-dir {args.outline_params_dir}: no knobs for {', '.join(missing[:3])}"
                     + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
                     + " (write them with scripts/calibrate/cv_outline.py --export)")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-report-"))
    print(f"{len(articles)} articles, work dir {work}, report options: {' '.join(extra) or '(defaults, extractive)'}"
          + (f", outline knobs per article from {args.outline_params_dir}" if args.outline_params_dir else ""))
    writers = [w.strip() for w in args.writer.split(",") if w.strip()]
    if not writers or any(w not in ("storm", "react") for w in writers):
        sys.exit(f"--writer {args.writer}: use storm, react or storm,react")
    from scripts.calibrate.bench_lead import Scorer

    lead = Scorer(args.tools)  # the lead's cosine loads the embedder as outline_metrics.py does
    header = (f"{'topic':<40} {'writer':<6} {'soft':>5} {'match R':>7} {'match P':>7} {'gold':>4} {'pred':>4} "
              f"{'s/report':>8} {'cites/sec':>9} {'tools/sec':>9} {'lead R1':>7} {'lead cos':>8}")
    print(header)
    print("-" * len(header))
    rows = []
    for article in articles:
        for writer in writers:
            r = bench_one(article, work, args.tools, extra, writer, lead, args.outline_params_dir)
            rows.append(r)
            tools = f"{r['tools']:>9.2f}" if r["tools"] is not None else f"{'':>9}"
            print(f"{r['topic'][:40]:<40} {writer:<6} {r['soft']:>5.2f} {r['recall']:>7.2f} {r['precision']:>7.2f} "
                  f"{r['gold']:>4} {r['predicted']:>4} {r['seconds']:>8.1f} {r['cites']:>9.2f} {tools} "
                  f"{r['lead_r1']:>7.3f} {r['lead_cos']:>8.3f}", flush=True)
    print("-" * len(header))
    for writer in writers:
        mine = [r for r in rows if r["writer"] == writer]
        mean = {k: statistics.mean(r[k] for r in mine)
                for k in ("soft", "recall", "precision", "seconds", "cites", "lead_r1", "lead_cos")}
        tools = [r["tools"] for r in mine if r["tools"] is not None]
        print(f"{'mean':<40} {writer:<6} {mean['soft']:>5.2f} {mean['recall']:>7.2f} {mean['precision']:>7.2f} "
              f"{'':>4} {'':>4} {mean['seconds']:>8.1f} {mean['cites']:>9.2f} "
              + (f"{statistics.mean(tools):>9.2f}" if tools else f"{'':>9}")
              + f" {mean['lead_r1']:>7.3f} {mean['lead_cos']:>8.3f}")
        print(f"{'mean, three places':<40} {writer:<6} soft {mean['soft']:.3f}, match R {mean['recall']:.3f}, "
              f"P {mean['precision']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
