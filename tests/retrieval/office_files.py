"""Writers for test files, none of them our loader: fpdf2 (PDF), python-docx, python-pptx, openpyxl and
XlsxWriter (a formula with its cached value), each putting known text in a known place; and zipfile, streaming
a zip bomb shaped like an Office file."""

from __future__ import annotations

import zipfile
from pathlib import Path


def write_pdf(path: Path, pages: list[list[str]], outline: dict[str, int] | None = None,
              title: str | None = None, password: str | None = None, sizes: dict[str, int] | None = None) -> Path:
    """One line of text per item, page after page, in 11 pt. `outline`: a line's text -> bookmark level
    (0 = top), written as the PDF's outline at that line; `sizes`: a line's text -> its type size."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if title:
        pdf.set_title(title)
    for lines in pages:
        pdf.add_page()
        for line in lines:
            if outline and line in outline:
                pdf.start_section(line, level=outline[line])
            pdf.set_font("Helvetica", size=(sizes or {}).get(line, 11))
            pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    if password:
        pdf.set_encryption(owner_password=password + "-owner", user_password=password)
    pdf.output(str(path))
    return path


def write_scanned_pdf(path: Path) -> Path:
    """A page with a drawing and no text layer, as a scan without OCR looks."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 120, 80, style="F")
    pdf.output(str(path))
    return path


def write_docx(path: Path, blocks: list[tuple[str, object]], title: str | None = None) -> Path:
    """Blocks in order: ("h1".."h3", text) headings, ("p", text) paragraphs, ("table", rows)."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    for kind, value in blocks:
        if kind.startswith("h"):
            document.add_heading(str(value), level=int(kind[1:]))
        elif kind == "p":
            document.add_paragraph(str(value))
        else:
            rows = value
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
    document.save(str(path))
    return path


def write_pptx(path: Path, slides: list[dict]) -> Path:
    """Each slide: {"title", "bullets": [...], "table": rows (optional), "notes": text (optional)}."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for spec in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = spec["title"]
        body = slide.placeholders[1].text_frame
        for i, bullet in enumerate(spec.get("bullets", [])):
            para = body.paragraphs[0] if i == 0 else body.add_paragraph()
            para.text = bullet
        if spec.get("table"):
            rows = spec["table"]
            shape = slide.shapes.add_table(len(rows), len(rows[0]), Inches(1), Inches(5), Inches(6), Inches(1))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    shape.table.cell(r, c).text = cell
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = spec["notes"]
    deck.save(str(path))
    return path


def write_xlsx(path: Path, sheets: dict[str, list[list]]) -> Path:
    """Sheets in order, rows from row 1; None leaves a cell (or a whole row) empty."""
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(str(path))
    return path


def write_xlsx_with_formula(path: Path) -> Path:
    """A rate table whose total is a formula stored with its cached value (as Excel saves it)."""
    import xlsxwriter

    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Totals")
    sheet.write_row(0, 0, ["Item", "Amount"])
    sheet.write_row(1, 0, ["Base premium", 1200])
    sheet.write_row(2, 0, ["Flood rider", 300])
    sheet.write(3, 0, "Total")
    sheet.write_formula(3, 1, "=SUM(B2:B3)", None, 1500)
    book.close()
    return path


_CONTENT_TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/'
                 '2006/content-types"/>')


def write_bomb(path: Path, member: str, megabytes: int) -> Path:
    """An Office-shaped zip whose `member` inflates to `megabytes` MB of one repeated byte."""
    block = b"a" * 2**20
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        with archive.open(member, "w", force_zip64=True) as stream:
            stream.write(b'<?xml version="1.0"?><w:document xmlns:w="x"><w:body><w:t>')
            for _ in range(megabytes):
                stream.write(block)
    return path
