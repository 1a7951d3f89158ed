"""Run `raystorm bench multihop` for each strategy on each set and print one table.

    python -m scripts.bench_multihop                                  # naive, chain, deep on musique, hotpotqa
    python -m scripts.bench_multihop --sets musique --strategies chain --limit 10
    python -m scripts.bench_multihop -- --llm openai:gpt-4o-mini      # the LLM strategies (args after --)

Each run writes OUT_DIR/<set>-<strategy>.jsonl (resumable: rerun and finished
questions are skipped; delete the file to measure again). Columns: Recall@2/@5
of the gold supporting passages, SQuAD EM/F1 of the short answer over all
questions (an abstention scores 0) and over the answered ones, the abstention
rate, mean tokens per question, p50 question latency, and the run's wall time
(answering only; the corpus ingest, a no-op once cached, is not counted).
Then accuracy by confidence bucket (calibration) and the load average.
The last line is all figures as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="folder holding the sets")
    p.add_argument("--sets", nargs="+", default=["musique", "hotpotqa"])
    p.add_argument("--strategies", nargs="+", default=["naive", "chain", "deep"],
                   choices=["auto", "naive", "chain", "deep"])
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--out-dir", default="bench-multihop", help="where the .jsonl files go")
    p.add_argument("--data-dir", default=None, help="raystorm data dir (default $RAYSTORM_HOME)")
    args = p.parse_args(own)

    from cluster.cli import main as raystorm

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.sets:
        for strategy in args.strategies:
            out = out_dir / f"{name}-{strategy}.jsonl"
            command = ["bench", "multihop", "--dataset", str(Path(args.data) / name), "--strategy", strategy,
                       "--out", str(out), *(["--limit", str(args.limit)] if args.limit else []),
                       *(["--data-dir", args.data_dir] if args.data_dir else []), *extra]
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                rc = raystorm(command)
            summary = json.loads(printed.getvalue().strip().splitlines()[-1]) if printed.getvalue().strip() else {}
            rows.append({"set": name, "strategy": strategy, "rc": rc, **summary})
            print(f"{name} {strategy}: {json.dumps(summary)}", file=sys.stderr, flush=True)
    print(f"\n{'set':<10} {'strategy':<8} {'n':>3} {'R@2':>6} {'R@5':>6} {'EM':>6} {'F1':>6} {'EM ans':>6} "
          f"{'F1 ans':>6} {'abst.':>6} {'tokens':>7} {'p50 s':>6} {'wall s':>7}")
    for r in rows:
        if "n" not in r:
            print(f"{r['set']:<10} {r['strategy']:<8} failed (exit {r['rc']})")
            continue
        wall = r.get("wall_s")
        print(f"{r['set']:<10} {r['strategy']:<8} {r['n']:>3} {r['Recall@2']:>6.3f} {r['Recall@5']:>6.3f} "
              f"{r['EM']:>6.3f} {r['F1']:>6.3f} {r.get('EM_answered', 0):>6.3f} {r.get('F1_answered', 0):>6.3f} "
              f"{r.get('abstention_rate', 0):>6.3f} {r['mean_tokens']:>7.0f} {r['p50_latency_s']:>6.2f} "
              f"{wall if wall is not None else float('nan'):>7.1f}")
    print("\ncalibration (confidence bucket: questions, share right at F1 >= 0.5):")
    for r in rows:
        buckets = "  ".join(f"{b}: {v['n']:.0f} @ {v['right']:.2f}" for b, v in r.get("calibration", {}).items())
        print(f"  {r['set']:<10} {r['strategy']:<8} {buckets or '(no answer layer)'}")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(json.dumps(rows))
    return max((r["rc"] for r in rows), default=0)


if __name__ == "__main__":
    sys.exit(main())
