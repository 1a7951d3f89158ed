"""Benchmark ingest of PDFs: pages/s of text extraction, passages/s of the whole ingest, peak memory.

On the STORM slides (../shared/data/pdf/storm_naacl2024_slides.pdf) and on a generated PDF of
--pages pages (fpdf2, 40 lines a page), it measures, each in a fresh child process so its peak
memory is its own:

- extraction: `retrieval.readers` reading every page (pages/s, peak RSS of the child); a long PDF is
  read page by page, so its peak should stay near the short one's;
- ingest: load, split, dense + BM25 embedding and the Qdrant write of each file into a fresh
  embedded store (passages/s, peak RSS), models loaded and warmed before the clock.

It then embeds the same passages' texts with the dense model alone, batch for batch as ingest
does, and prints one JSON line {"passages", "ingest_per_s", "embed_per_s", "ratio"} over both files
(ratio = ingest_per_s / embed_per_s: how close ingest comes to the embedding model's own throughput).

    python -m scripts.bench_ingest                 # slides + a generated 500-page PDF
    python -m scripts.bench_ingest --pages 1000    # the long-file case
    python -m scripts.bench_ingest --pipeline      # ingest as the Ray Data pipeline (`ingest --distributed`)
    python -m scripts.bench_ingest --folder DIR    # any corpus folder instead of the PDFs
    python -m scripts.bench_ingest --multihop ../shared/data/musique   # a multi-hop set's corpus (one file a passage)

With --pipeline the ingest runs on a local Ray sized for this machine (embedding actors, one CPU
each, started inside the clock: what the pipeline costs is part of it), and the JSON line adds
"per_worker_per_s": passages a second one embedding actor did, from the pipeline's own counters.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

SLIDES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pdf" / "storm_naacl2024_slides.pdf"
_WORDS = ("flood deductible waiting period policy rider bulletin endorsement coverage claim premium schedule "
          "revision building zone event insured adjuster").split()


def generate_pdf(path: Path, pages: int, seed: int = 7) -> Path:
    """`pages` pages of 40 numbered lines each, a numbered heading every 10 lines."""
    from fpdf import FPDF

    rng = random.Random(seed)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for page in range(1, pages + 1):
        pdf.add_page()
        for line in range(1, 41):
            text = (f"{page}.{line // 10 + 1} Section {page}-{line}" if line % 10 == 1 else
                    " ".join(rng.choice(_WORDS) for _ in range(12)).capitalize() + ".")
            pdf.cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _extract(path: str, out) -> None:
    from retrieval import readers

    started = time.perf_counter()
    extracted = readers.extract(Path(path))
    pages = lines = 0
    for part in extracted.parts:
        pages, lines = pages + 1, lines + len(part.lines)
    out.put({"pages": pages, "lines": lines, "seconds": time.perf_counter() - started, "peak_mib": _peak_mib()})


def _ingest(paths: list[str], pipeline: bool, out) -> None:
    from retrieval.config import StoreSettings
    from retrieval.embeddings import DenseEmbedder, SparseEmbedder
    from retrieval.ingest import Ingestor
    from retrieval.loaders import load_paths
    from retrieval.splitter import split_document

    with tempfile.TemporaryDirectory(prefix="raystorm-bench-ingest-") as tmp:
        settings = StoreSettings.resolve(data_dir=tmp, qdrant_url=None)
        dense = DenseEmbedder(settings.dense_model, settings.models_dir)
        sparse = SparseEmbedder(settings.models_dir)
        dense.embed(["warm up"]), sparse.embed(["warm up"])
        ingestor = Ingestor(settings, dense=dense, sparse=sparse)
        per_worker = None
        if pipeline:
            from cluster.ingest_pipeline import ingest_on_ray
            from cluster.runtime import connect

            connect()  # Ray itself starts before the clock, as a cluster would be up already
            started = time.perf_counter()
            summary, stats = ingest_on_ray(ingestor, paths, "bench")
            per_worker = stats.per_worker_rate()
        else:
            started = time.perf_counter()
            summary = ingestor.ingest_paths(paths, "bench")
        ingest_s = time.perf_counter() - started
        peak = _peak_mib()
        ingestor.store.close()
        # the dense model's own throughput on the same passages, in ingest's batches; a model of its
        # own with no vector cache, or it would hand back what ingest just embedded
        alone = DenseEmbedder(settings.dense_model, settings.models_dir, cache_size=0)
        alone.embed(["warm up"])
        passages = [p for d in load_paths(paths) if hasattr(d, "segments") for p in split_document(d)]
        texts = sorted((p.embedding_text() for p in passages), key=len)
        started = time.perf_counter()
        for start in range(0, len(texts), ingestor.batch):
            alone.embed(texts[start: start + ingestor.batch])
        embed_s = time.perf_counter() - started
    out.put({"passages": summary.passages, "skipped": [s.reason for s in summary.skipped], "ingest_s": ingest_s,
             "embed_s": embed_s, "peak_mib": peak, "per_worker_per_s": per_worker})


def _in_child(target, *args) -> dict:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=target, args=(*args, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=500, help="pages of the generated PDF (default 500)")
    parser.add_argument("--slides", type=Path, default=SLIDES, help="a real PDF (default: the STORM slides)")
    parser.add_argument("--folder", type=Path, help="ingest this corpus folder instead of the PDFs")
    parser.add_argument("--multihop", type=Path, nargs="+", metavar="SET",
                        help="ingest these multi-hop sets' corpora (questions.json + corpus.json folders), each "
                             "entry written as one Markdown file, instead of the PDFs")
    parser.add_argument("--pipeline", action="store_true",
                        help="ingest with the Ray Data pipeline on a local Ray (default: the one-process ingest)")
    args = parser.parse_args(argv)
    if args.folder or args.multihop:
        with tempfile.TemporaryDirectory(prefix="raystorm-bench-sets-") as tmp:
            folder = args.folder or write_sets(args.multihop, Path(tmp))
            rows = [r := _in_child(_ingest, [str(folder)], args.pipeline)]
            print(f"ingest {folder.name[:21]:21} {r['passages']:6d} passages  {r['passages'] / r['ingest_s']:8.1f} "
                  f"passages/s  (dense model alone {r['passages'] / r['embed_s']:8.1f}/s)  peak {r['peak_mib']:.0f} MiB")
        return summary_line(rows, args.pipeline)
    if not args.slides.is_file():
        print(f"no PDF at {args.slides}: pass --slides PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="raystorm-bench-pdf-") as tmp:
        generated = generate_pdf(Path(tmp) / f"generated-{args.pages}.pdf", args.pages)
        print(f"{'file':28} {'pages':>6} {'lines':>7} {'pages/s':>9} {'peak MiB':>9}")
        for path in (args.slides, generated):
            r = _in_child(_extract, str(path))
            print(f"{path.name[:28]:28} {r['pages']:6d} {r['lines']:7d} {r['pages'] / r['seconds']:9.1f} "
                  f"{r['peak_mib']:9.0f}")
        rows = []
        for path in (args.slides, generated):
            rows.append(r := _in_child(_ingest, [str(path)], args.pipeline))
            print(f"ingest {path.name[:21]:21} {r['passages']:6d} passages  {r['passages'] / r['ingest_s']:8.1f} "
                  f"passages/s  (dense model alone {r['passages'] / r['embed_s']:8.1f}/s)  peak {r['peak_mib']:.0f} MiB"
                  + (f"  skipped: {r['skipped']}" if r["skipped"] else ""))
    return summary_line(rows, args.pipeline)


def write_sets(sets: list[Path], folder: Path) -> Path:
    """Each multi-hop set's corpus entries as Markdown files (title heading, text) in `folder`."""
    from retrieval.datasets import load_multihop_set

    for set_dir in sets:
        for i, doc in enumerate(load_multihop_set(set_dir).documents):
            text = "\n\n".join(seg.text for seg in doc.segments)
            (folder / f"{set_dir.name}-{i:05d}.md").write_text(f"# {doc.title}\n\n{text}\n", encoding="utf-8")
    return folder


def summary_line(rows: list[dict], pipeline: bool) -> int:
    passages = sum(r["passages"] for r in rows)  # all files: their passages over their seconds
    ingest_per_s = passages / sum(r["ingest_s"] for r in rows)
    embed_per_s = passages / sum(r["embed_s"] for r in rows)
    line = {"passages": passages, "ingest_per_s": round(ingest_per_s, 1), "embed_per_s": round(embed_per_s, 1),
            "ratio": round(ingest_per_s / embed_per_s, 3)}
    if pipeline:
        rates = [r["per_worker_per_s"] for r in rows if r["per_worker_per_s"]]
        line["per_worker_per_s"] = round(sum(rates) / len(rates), 1) if rates else None
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
