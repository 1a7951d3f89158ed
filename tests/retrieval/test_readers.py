"""PDF, Word, PowerPoint and Excel read as numbered lines per page / slide / sheet: known text written by
other writers is found at its known place, passages cite it there, and bad files are one skip line each."""

from __future__ import annotations

from pathlib import Path

import pytest
from office_files import (
    write_docx,
    write_pdf,
    write_pptx,
    write_scanned_pdf,
    write_xlsx,
    write_xlsx_with_formula,
)

from retrieval import readers
from retrieval.readers import ocr
from retrieval.readers.pdf import NO_TEXT_OCR
from retrieval.documents import Part, line_range
from retrieval.loaders import load_file, load_paths
from retrieval.splitter import split_document

SLIDES = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "pdf" / "storm_naacl2024_slides.pdf"


def _one(path: Path):
    documents, skipped = load_file(path)
    assert skipped == [] and len(documents) == 1
    return documents[0]


def _reread(passage) -> str:
    lines = readers.part_lines(passage.path, passage.part)
    return "\n".join(lines[passage.line_start - 1: passage.line_end])


def test_pdf_lines_are_counted_per_page_with_outline_headings(tmp_path):
    pages = [["Bulletin 2024-02: Flood deductible", "Supersedes: Bulletin 2023-05", "1 Scope",
              "This bulletin applies to every flood rider."],
             ["2 Deductible", "The flood deductible is $2,500 per event.", "It applies to each building."],
             ["3 Waiting period", "Coverage starts 14 days after purchase."]]
    outline = {"1 Scope": 0, "2 Deductible": 0, "3 Waiting period": 0}
    doc = _one(write_pdf(tmp_path / "b.pdf", pages, outline, title="Bulletin 2024-02: Flood deductible"))
    assert doc.title == "Bulletin 2024-02: Flood deductible"
    passages = split_document(doc)
    where = {p.text.split("\n")[0]: (p.part, p.line_start, p.line_end, p.heading_path) for p in passages}
    assert where["The flood deductible is $2,500 per event."] == (Part(kind="page", number=2), 2, 3, ["2 Deductible"])
    assert where["Coverage starts 14 days after purchase."] == (Part(kind="page", number=3), 2, 2,
                                                               ["3 Waiting period"])
    for p in passages:  # every passage re-reads exactly from its page
        assert _reread(p) == p.text
    assert line_range(Part(kind="page", number=2), 2, 3) == "p. 2, lines 2–3"


def test_pdf_without_outline_takes_numbered_lines_as_headings(tmp_path):
    doc = _one(write_pdf(tmp_path / "m.pdf", [["Flood manual", "4 Claims", "4.2 Flood deductible",
                                                "Pay the deductible first.", "1. Call the adjuster within 3 days.",
                                                "Section 9. Additional Coverages", "Debris removal is covered."]]))
    passages = split_document(doc)
    passage = next(p for p in passages if "Pay the deductible" in p.text)
    assert passage.heading_path == ["4 Claims", "4.2 Flood deductible"]
    assert passage.text == "Pay the deductible first.\n1. Call the adjuster within 3 days."  # a list item is text
    debris = next(p for p in passages if "Debris" in p.text)
    assert debris.heading_path == ["Section 9. Additional Coverages"] and debris.line_start == 7


def test_pdf_without_outline_takes_larger_type_as_headings(tmp_path):
    doc = _one(write_pdf(tmp_path / "s.pdf", [["Flood rider guide", "Who may buy the rider",
                                                "Holders of a homeowners policy.", "What it covers",
                                                "Water damage from a river flood.", "Claims procedure"]],
                         sizes={"Flood rider guide": 20, "Who may buy the rider": 15, "What it covers": 15}))
    paths = {p.text: p.heading_path for p in split_document(doc)}
    assert paths["Holders of a homeowners policy."] == ["Who may buy the rider"]  # the title heads the file
    assert paths["Water damage from a river flood.\nClaims procedure"] == ["What it covers"]  # 11 pt: text


@pytest.mark.skipif(not SLIDES.is_file(), reason="../shared/data/pdf/storm_naacl2024_slides.pdf is not here")
def test_the_storm_slides_pdf_reads_page_by_page():
    doc = _one(SLIDES.resolve())
    passages = split_document(doc)
    assert doc.title.startswith("Assisting in Writing Wikipedia-like Articles")
    assert {p.part.number for p in passages} >= set(range(1, 31))
    # no outline: a slide's title is a heading by its type size, line 1 of its page
    hit = next(p for p in passages if p.heading_path == ["There Is More Raw Information Than One Can Consume"])
    assert hit.part == Part(kind="page", number=2) and hit.line_start == 2
    assert readers.part_lines(hit.path, hit.part)[0] == "There Is More Raw Information Than One Can Consume"
    assert all(_reread(p) == p.text for p in passages)


def test_docx_paragraphs_headings_and_table_rows_are_lines(tmp_path):
    doc = _one(write_docx(tmp_path / "f.docx", [
        ("h1", "Flood Rider Form FR-12"), ("p", "Supersedes: Form FR-10"), ("h2", "Deductibles"),
        ("p", "The deductible is $1,000."), ("table", [["Zone", "Deductible"], ["A", "$1,000"], ["V", "$5,000"]]),
        ("p", ""), ("h2", "Exclusions"), ("p", "Mold is not covered.")]))
    assert doc.title == "Flood Rider Form FR-12"
    lines = readers.part_lines(doc.path, None)
    assert lines[:7] == ["Flood Rider Form FR-12", "Supersedes: Form FR-10", "Deductibles", "The deductible is $1,000.",
                         "Zone; Deductible", "Zone: A; Deductible: $1,000", "Zone: V; Deductible: $5,000"]
    table = next(p for p in split_document(doc) if "Zone: V" in p.text)
    assert (table.part, table.heading_path, table.line_start, table.line_end) == (None, ["Deductibles"], 4, 7)
    mold = next(p for p in split_document(doc) if "Mold" in p.text)
    assert (mold.heading_path, mold.line_start) == (["Exclusions"], 10)
    assert all(_reread(p) == p.text for p in split_document(doc))


def test_pptx_slides_titles_tables_and_notes(tmp_path):
    doc = _one(write_pptx(tmp_path / "deck.pptx", [
        {"title": "Flood program", "bullets": ["Three riders", "Two regions"]},
        {"title": "Rates", "bullets": ["Rates rose in 2024"], "table": [["Zone", "Rate"], ["A", "1.2%"]],
         "notes": "Mention the 14-day waiting period."}]))
    passages = split_document(doc)
    rates = next(p for p in passages if "Rates rose" in p.text)
    assert rates.part == Part(kind="slide", number=2) and rates.heading_path == ["Rates"]
    assert rates.text == "Rates rose in 2024\nZone; Rate\nZone: A; Rate: 1.2%" and rates.line_start == 2
    notes = next(p for p in passages if "waiting period" in p.text)
    assert notes.heading_path == ["Rates", "Speaker notes"] and notes.line_start == 6
    assert all(_reread(p) == p.text for p in passages)
    assert line_range(rates.part, 2, 4) == "slide 2, lines 2–4"


def test_xlsx_rows_are_lines_under_header_names(tmp_path):
    rows = [["Zone", "Rate", "Effective"], ["A", 1.25, "2024-01-01"], None, ["V", 2, "2024-03-01"]]
    doc = _one(write_xlsx(tmp_path / "rates.xlsx", {"2023": [["Zone", "Rate"], ["A", 1.0]], "2024": [
        r if r is not None else [] for r in rows]}))
    passages = split_document(doc)
    latest = next(p for p in passages if p.part.name == "2024")
    assert latest.part == Part(kind="sheet", number=2, name="2024") and latest.heading_path == ["2024"]
    assert latest.text == ("Zone; Rate; Effective\nZone: A; Rate: 1.25; Effective: 2024-01-01\n\n"
                           "Zone: V; Rate: 2; Effective: 2024-03-01")
    assert (latest.line_start, latest.line_end) == (1, 4)  # Excel's own row numbers, the empty row kept
    assert line_range(latest.part, 2, 4) == 'sheet "2024", rows 2–4'
    assert all(_reread(p) == p.text for p in passages)


def test_xlsx_formulas_give_their_cached_values_and_many_rows_stream(tmp_path):
    doc = _one(write_xlsx_with_formula(tmp_path / "totals.xlsx"))
    assert "Item: Total; Amount: 1500" in split_document(doc)[0].text
    many = [["Policy", "Premium"]] + [[f"P-{i}", i] for i in range(20_000)]
    doc = _one(write_xlsx(tmp_path / "many.xlsx", {"Book": many}))
    passages = split_document(doc)
    assert passages[-1].line_end == 20_001 and "Policy: P-19999; Premium: 19999" in passages[-1].text


def test_bad_files_are_one_line_each_and_the_rest_loads(tmp_path):
    write_pdf(tmp_path / "locked.pdf", [["Secret text"]], password="pw")
    write_scanned_pdf(tmp_path / "scan.pdf")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj <<>> garbage")
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp_path / "broken.pptx").write_bytes(b"")
    (tmp_path / "broken.xlsx").write_bytes(b"\xd0\xcf\x11\xe0 an OLE box, as an encrypted workbook is")
    write_docx(tmp_path / "good.docx", [("p", "Good text.")])
    items = list(load_paths([tmp_path]))
    reasons = {Path(i.path).name: i.reason for i in items if hasattr(i, "reason")}
    assert reasons["locked.pdf"] == "password-protected"
    assert reasons["scan.pdf"] == (NO_TEXT_OCR if ocr.available() else "no text layer; scanned? OCR is not enabled")
    assert reasons["broken.pdf"].startswith("corrupt or not a PDF")
    assert reasons["broken.docx"].startswith("corrupt or not a Word file")
    assert reasons["broken.pptx"].startswith("corrupt or not a PowerPoint file")
    assert reasons["broken.xlsx"].startswith("password-protected, or an old binary Excel file")
    assert all("\n" not in r for r in reasons.values())
    assert [d.title for d in items if hasattr(d, "segments")] == ["Good text."]


def test_a_scanned_page_is_read_by_ocr_when_the_extra_is_installed(tmp_path):
    pytest.importorskip("rapidocr_onnxruntime", reason="the ocr extra is not installed")
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    font = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    font = ImageFont.truetype(str(font), 28) if font.is_file() else ImageFont.load_default(size=28)
    image = Image.new("RGB", (1240, 400), "white")
    draw = ImageDraw.Draw(image)
    for i, text in enumerate(["Scanned notice", "The flood deductible is 2,500 dollars per event."]):
        draw.text((60, 60 + 70 * i), text, fill="black", font=font)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=210)  # a picture of text: no text layer
    pdf.output(str(tmp_path / "scan.pdf"))
    passage = split_document(_one(tmp_path / "scan.pdf"))[0]
    assert "The flood deductible is 2,500 dollars per event." in passage.text.split("\n")
    assert _reread(passage) == passage.text  # OCR reads the page the same way again
