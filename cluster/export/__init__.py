"""Exports of a finished report: Markdown, standalone HTML, Word and PDF, each keeping the sections, every
`[n]` as a link to its reference, and each reference's source, page/slide/sheet, lines and URL."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Literal

from cluster.export.document import ExportError, ReportDocument, read_report

Format = Literal["md", "html", "docx", "pdf"]
FORMATS: tuple[Format, ...] = ("md", "html", "docx", "pdf")
MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
               "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
               "pdf": "application/pdf"}


def default_name(run_dir: Path, fmt: Format) -> str:
    return f"{Path(run_dir).resolve().name}.{fmt}"


def export_report(doc: ReportDocument, fmt: Format, out: Path) -> Path:
    """`doc` written to `out` as `fmt` (written whole: a temp file, then renamed)."""
    from cluster.export.html import report_html, report_markdown_export

    if fmt not in FORMATS:
        raise ExportError(f"unknown export format '{fmt}': one of {', '.join(FORMATS)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    try:
        if fmt == "md":
            tmp.write_text(report_markdown_export(doc), encoding="utf-8")
        elif fmt == "html":
            tmp.write_text(report_html(doc), encoding="utf-8")
        elif fmt == "docx":
            from cluster.export.word import write_docx

            write_docx(doc, tmp)
        else:
            from cluster.export.pdf import print_pdf

            print_pdf(report_html(doc), tmp)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def export_run(run_dir: str | os.PathLike, fmt: Format, out: str | os.PathLike | None = None) -> Path:
    """The report of run folder `run_dir` exported as `fmt` to `out` (default: RUN_DIR/exports/<slug>.<fmt>)."""
    run_dir = Path(run_dir).expanduser()
    doc = read_report(run_dir)
    return export_report(doc, fmt, Path(out).expanduser() if out else run_dir / "exports" / default_name(run_dir, fmt))


__all__ = ["FORMATS", "MEDIA_TYPES", "ExportError", "Format", "export_report", "export_run", "read_report"]
