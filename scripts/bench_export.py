"""How long `raystorm export` takes for a long report: 40 sections built from the bundled corpus's own
sentences, each cited to its real file and line, exported to every format.

The report is made here (a run folder with report.md and url_to_info.json, as `raystorm report` writes
them) because the bundled corpus yields ~15 sections; every sentence is a line of a corpus file and each
[n] cites that file at that line. Prints, per format, the median and the slowest of --repeat exports,
the file's size and its pages (PDF), and the [n] links PDFium finds in the PDF.

    python -m scripts.bench_export                  # 40 sections, 3 repeats
    python -m scripts.bench_export --sections 80 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "retrieval" / "example_corpus"


def corpus_sentences() -> list[tuple[Path, int, str, str]]:
    """(file, line number, title, line text) of every prose line of the bundled corpus."""
    out = []
    for path in sorted(CORPUS.glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        title = next((ln[2:] for ln in lines if ln.startswith("# ")), path.stem)
        for i, line in enumerate(lines, start=1):
            if len(line) > 60 and not re.match(r"[#|*>-]|---|\w+:", line):
                out.append((path, i, title, " ".join(line.split())))
    return out


def long_report(folder: Path, sections: int, per_section: int = 6) -> Path:
    sentences = corpus_sentences()
    numbers: dict[Path, int] = {}
    snippets: dict[Path, list[dict]] = {}
    parts = ["# A long report on Harborline Mutual", sentences[0][3] + " [1]"]
    numbers[sentences[0][0]] = 1
    snippets[sentences[0][0]] = [{"line": sentences[0][1], "text": sentences[0][3]}]
    for s in range(sections):
        paragraph = []
        for k in range(per_section):
            path, line, _, text = sentences[(s * per_section + k) % len(sentences)]
            n = numbers.setdefault(path, len(numbers) + 1)
            snippets.setdefault(path, []).append({"line": line, "text": text})
            paragraph.append(f"{text}[{n}]")
        parts.append(f"## Section {s + 1}: {sentences[s % len(sentences)][2]}")
        parts.append(" ".join(paragraph[:3]))
        parts.append(" ".join(paragraph[3:]))
    if sections >= 2:  # one table, as a source's own table reaches a report
        parts.insert(4, "| Form | Deductible |\n| --- | --- |\n| FR-12 | $2,000 per flood event [1] |\n| HM-3 | $1,250 [1] |")
    parts.append("## References\n\n" + "\n".join(f"[{n}] {p.name}" for p, n in numbers.items()))
    titles = {p: t for p, _, t, _ in sentences}
    citations = [{"index": n, "url": str(p), "title": titles.get(p, p.stem),
                  "snippets": [{"url": str(p), "title": titles.get(p, p.stem), "text": s["text"], "path": str(p),
                                "line_start": s["line"], "line_end": s["line"], "passage_id": f"{p.name}:{s['line']}"}
                               for s in {s["line"]: s for s in snippets[p]}.values()]}
                 for p, n in numbers.items()]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    (folder / "url_to_info.json").write_text(json.dumps({"citations": citations}), encoding="utf-8")
    return folder


def main() -> int:
    from cluster.export import FORMATS, export_run, read_report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        run = long_report(Path(tmp) / "run", args.sections)
        doc = read_report(run)
        print(f"report: {len(doc.sections)} sections, {len(doc.cited())} sources cited, "
              f"{(run / 'report.md').stat().st_size / 1024:.0f} KB of Markdown")
        for fmt in FORMATS:
            times = []
            for i in range(args.repeat):
                out = Path(tmp) / f"out{i}.{fmt}"
                started = time.perf_counter()
                export_run(run, fmt, out)
                times.append(time.perf_counter() - started)
            extra = ""
            if fmt == "pdf":
                import ctypes

                import pypdfium2 as pdfium
                import pypdfium2.raw as raw

                pdf = pdfium.PdfDocument(str(out))
                links = 0
                for page in pdf:
                    pos, link = ctypes.c_int(0), raw.FPDF_LINK()
                    while raw.FPDFLink_Enumerate(page.raw, pos, link):
                        links += 1
                extra = f", {len(pdf)} pages, {links} link annotations"
            print(f"{fmt:>4}: median {statistics.median(times):.2f} s, slowest {max(times):.2f} s "
                  f"({out.stat().st_size / 1024:.0f} KB{extra})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
