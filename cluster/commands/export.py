"""`raystorm export RUN_DIR --format pdf|docx|html|md [--out FILE]`: a finished report as a file to send on."""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from cluster.export import FORMATS

    p = sub.add_parser("export", help="export a finished report as PDF, Word, HTML or Markdown",
                       description="Write a report's run folder (OUT/<topic_slug>) as PDF (printed by headless "
                                   "Chromium), Word (.docx), standalone HTML or Markdown. Every format keeps the "
                                   "sections, each [n] as a link to its reference, and each reference's source, "
                                   "page/slide/sheet, line range and URL.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the report's folder, e.g. runs/Harborline_Mutual_flood_coverage")
    p.add_argument("--format", "-f", choices=FORMATS, required=True, help="the file type to write")
    p.add_argument("--out", "-o", metavar="FILE", help="where to write it (default: RUN_DIR/exports/<slug>.<format>)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cluster.export import export_run

    started = time.perf_counter()
    out = export_run(Path(args.run_dir), args.format, args.out)
    size = out.stat().st_size
    print(f"{out} ({size / 1024:.0f} KB, {time.perf_counter() - started:.2f} s)")
    return 0
