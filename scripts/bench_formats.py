"""The same corpus as Markdown, PDF and Word: do answers, "what is current" and citations hold?

Converts a Markdown corpus (default: the bundled example corpus) the way an office suite exports
it: front matter dropped but for the title (a document property), `**bold**` markers gone, headings
as heading styles (Word) and as the outline (PDF), lists as bulleted paragraphs, tables as tables
(Word) or one line a row (PDF), long paragraphs wrapped to the page (PDF). Each version is
ingested into its own store and asked tests/data/current_questions.json by the chain strategy, as
`scripts/bench_graph.py` asks the Markdown corpus; it prints accuracy (the value in force, no
replaced value stated as in force) per format, and how many citations of the PDF and Word runs
resolve (the cited page extracted again holds the cited lines' text).

    python -m scripts.bench_formats                     # md, pdf, docx
    python -m scripts.bench_formats --formats md,pdf --limit 8
    python -m scripts.bench_formats --formats md,pdf-plain      # a PDF with no outline
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def blocks(text: str) -> tuple[str | None, list[tuple[str, object]]]:
    """(title, blocks): ("h", (level, text)), ("p", text), ("li", text), ("table", rows) from Markdown."""
    from retrieval.formats import parse_front_matter

    lines = text.splitlines()
    meta, start = parse_front_matter(lines)
    out: list[tuple[str, object]] = []
    para: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if para:
            out.append(("p", " ".join(para)))
            para.clear()
        if table:
            out.append(("table", [r for r in table if not all(set(c) <= set("-: ") for c in r)]))
            table.clear()

    for line in lines[start:]:
        plain = line.replace("**", "").replace("__", "").rstrip()
        heading = _HEADING.match(plain)
        if heading:
            flush()
            out.append(("h", (len(heading.group(1)), heading.group(2))))
        elif plain.startswith("|"):
            if para:
                flush()
            table.append([c.strip() for c in plain.strip("|").split("|")])
        elif _BULLET.match(plain):
            flush()
            out.append(("li", _BULLET.sub("", plain)))
        elif plain.strip():
            if table:
                flush()
            para.append(plain.strip().lstrip("> ").strip())
        else:
            flush()
    flush()
    return meta.get("title"), out


def to_docx(title: str | None, items: list, path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = title or ""
    for kind, value in items:
        if kind == "h":
            document.add_heading(value[1], level=min(value[0], 9))
        elif kind == "p":
            document.add_paragraph(value)
        elif kind == "li":
            document.add_paragraph(value, style="List Bullet")
        else:
            table = document.add_table(rows=len(value), cols=max(len(r) for r in value))
            for r, row in enumerate(value):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
    document.save(str(path))


def to_pdf(title: str | None, items: list, path: Path, outline: bool = True) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    if _FONT.is_file():
        pdf.add_font("body", fname=str(_FONT))
        family = "body"
    else:  # core fonts are Latin-1 only
        family = "Helvetica"

    def clean(text: str) -> str:
        return text if family == "body" else text.replace("—", "-").encode("latin-1", "replace").decode("latin-1")

    pdf.set_title(title or "")
    pdf.add_page()
    for kind, value in items:
        if kind == "h":
            level, text = value
            if outline:
                pdf.start_section(clean(text), level=level - 1)
            pdf.set_font(family, size=16 - 2 * level)
            pdf.multi_cell(0, 8, clean(text), new_x="LMARGIN", new_y="NEXT")
        elif kind == "table":
            pdf.set_font(family, size=9)
            for row in value:
                pdf.multi_cell(0, 5, clean("   ".join(row)), new_x="LMARGIN", new_y="NEXT")
        else:
            pdf.set_font(family, size=10)
            pdf.multi_cell(0, 5, clean(("• " if kind == "li" else "") + value), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    pdf.output(str(path))


def convert(source: Path, target: Path, fmt: str) -> Path:
    """`fmt`: "pdf", "pdf-plain" (a PDF without an outline: headings are only lines) or "docx"."""
    target.mkdir(parents=True, exist_ok=True)
    for md in sorted(source.glob("*.md")):
        title, items = blocks(md.read_text(encoding="utf-8"))
        if fmt == "docx":
            to_docx(title, items, target / f"{md.stem}.docx")
        else:
            to_pdf(title, items, target / f"{md.stem}.pdf", outline=fmt == "pdf")
    return target


def resolved(citations) -> tuple[int, int]:
    """(citations whose lines, extracted again, hold their text; citations of PDF/Word files)."""
    from retrieval import readers
    from retrieval.graph.current import without_history
    from agents.wiki.claims import normalize

    good = total = 0
    for c in citations:
        if not c.path.endswith((".pdf", ".docx")):  # a Markdown citation: nothing to extract
            continue
        total += 1
        lines = readers.part_lines(c.path, c.part) or []
        said = " ".join(without_history(x) for x in c.text.split("\n"))
        good += normalize(said) in normalize(" ".join(lines[c.line_start - 1: c.line_end]))
    return good, total


async def answer_all(settings, collection: str, questions: list[dict]) -> dict:
    from bench_graph import correct

    from agents.lm.models import RoleModels
    from agents.lm.settings import LLMSettings
    from agents.multihop.strategies import MultihopSettings, ask
    from retrieval.search import AsyncCorpus, Corpus, SearchSettings

    models = RoleModels.from_settings(LLMSettings())
    retriever = AsyncCorpus(Corpus(settings, collection, search=SearchSettings()))
    good = old = cited_ok = cited = 0
    per_question = []
    try:
        for item in questions:
            answer = await ask(item["question"], "chain", models, retriever, MultihopSettings())
            ok, stale = correct(answer.answer, item)
            r_ok, r_all = resolved(answer.citations)
            good, old, cited_ok, cited = good + ok, old + stale, cited_ok + r_ok, cited + r_all
            per_question.append(bool(ok))
    finally:
        retriever.close()
        await models.close()
    n = len(questions)
    return {"n": n, "accuracy": round(good / n, 3), "stated_replaced_value": old,
            "citations_resolved": f"{cited_ok}/{cited}", "per_question": per_question}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=ROOT / "retrieval" / "example_corpus")
    p.add_argument("--questions", type=Path, default=ROOT / "tests" / "data" / "current_questions.json")
    p.add_argument("--formats", default="md,pdf,docx")
    p.add_argument("--limit", type=int, default=None)
    args = p.parse_args(argv)
    from retrieval.config import StoreSettings
    from retrieval.ingest import Ingestor

    questions = json.loads(args.questions.read_text())["questions"][: args.limit]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
        for fmt in args.formats.split(","):
            folder = args.corpus if fmt == "md" else convert(args.corpus, Path(tmp) / fmt, fmt)
            settings = StoreSettings.resolve(data_dir=str(Path(tmp) / f"data-{fmt}"), qdrant_url=None)
            started = time.perf_counter()
            ingestor = Ingestor(settings)
            try:
                summary = ingestor.ingest_paths([folder], fmt)
            finally:
                ingestor.store.close()
            row = asyncio.run(answer_all(settings, fmt, questions))
            row.update(format=fmt, documents=summary.documents, passages=summary.passages,
                       skipped=len(summary.skipped), seconds=round(time.perf_counter() - started, 1))
            rows[fmt] = row
            print(json.dumps({k: v for k, v in row.items() if k != "per_question"}), flush=True)
    if "md" in rows:
        for fmt, row in rows.items():
            if fmt != "md":
                differ = sum(a != b for a, b in zip(rows["md"]["per_question"], row["per_question"]))
                print(f"{fmt}: accuracy {row['accuracy']:.3f} vs md {rows['md']['accuracy']:.3f} "
                      f"(delta {row['accuracy'] - rows['md']['accuracy']:+.3f}, {differ} questions differ), "
                      f"citations resolved {row['citations_resolved']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
