"""A long workbook is read in pieces of rows, each reported as it is read, with its lines numbered as Excel
numbers its rows across the pieces (written with XlsxWriter, which declares each sheet's dimensions as
Excel does)."""

from __future__ import annotations

from pathlib import Path

from retrieval.documents import Part
from retrieval.loaders import load_file
from retrieval.readers import part_lines
from retrieval.readers.sheets import ROWS_PER_PIECE

ROWS = 2 * ROWS_PER_PIECE + 123


def write_long_workbook(path: Path) -> Path:
    import xlsxwriter

    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    sheet = book.add_worksheet("Ledger")
    sheet.write_row(0, 0, ["Entry", "Harbor", "Tonnage"])
    for i in range(1, ROWS):
        sheet.write_row(i, 0, [f"entry {i}", f"harbor {i % 97}", i * 3])
    book.close()
    return path


def test_a_long_sheet_reports_each_piece_and_numbers_rows_as_excel_does(tmp_path):
    path = write_long_workbook(tmp_path / "ledger.xlsx")
    seen: list[tuple[int, int | None]] = []
    documents, skipped = load_file(path, lambda file, done, total: seen.append((done, total)))
    assert not skipped and len(documents) == 1
    assert seen == [(n, 3) for n in (1, 2, 3)]  # three pieces, announced before the first was read
    segments = [s for s in documents[0].segments if not s.is_heading]
    row = next(s for s in segments if s.text.startswith("Entry: entry 7000;"))
    assert row.line_start == 7001 and row.part.name == "Ledger"  # the header is row 1
    lines = part_lines(path, Part(kind="sheet", number=1, name="Ledger"))
    assert len(lines) == ROWS and lines[row.line_start - 1] == row.text
