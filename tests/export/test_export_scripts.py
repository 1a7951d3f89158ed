"""Exports of reports in other scripts and shapes: a report whose sources are partly Chinese (its PDF must
extract the characters: real glyphs from a CJK font, not boxes), and a report with a table and an Arabic
(right-to-left) paragraph."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import docx
import pypdfium2 as pdfium

from test_cli_errors import raystorm
from test_export import chromium_or_skip, squeezed

CJK = re.compile(r"[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]+")
FLOOD_RIDER = """---
title: Harborline Flood Rider 洪水附加险条款
url: https://docs.example.cn/flood-rider
---
# Harborline Flood Rider 洪水附加险条款

## Waiting period 等待期

The Flood Rider (洪水附加险) has a waiting period of fourteen days (等待期为十四天) from the date of purchase. Coverage under the Flood Rider begins on the fifteenth day (第十五天零时生效).

## Deductible 免赔额

The Flood Rider deductible is two thousand dollars per flood event (每次洪水事故免赔额两千美元). Policyholders may choose a higher Flood Rider deductible for a premium credit (保费折扣).

## Claims 理赔

Flood Rider claims must be filed within sixty days of the loss (损失发生后六十天内提交). An adjuster contacts the policyholder within ten working days (十个工作日内联系投保人).
"""
BULLETIN = """---
title: Bulletin 2022-11 公告：洪水附加险等待期
url: https://docs.example.cn/bulletins/2022-11
---
# Bulletin 2022-11 公告：洪水附加险等待期

## Rule 1 规则一

Bulletin 2022-11 sets the Flood Rider waiting period to fourteen days (等待期调整为十四天). The earlier thirty-day Flood Rider waiting period no longer applies (此前的三十天等待期不再适用).
"""


def test_a_chinese_report_pdf_extracts_its_characters(tmp_path):
    chromium_or_skip()
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "flood-zh.md").write_text(FLOOD_RIDER, encoding="utf-8")
    (tmp_path / "corpus" / "bulletin-zh.md").write_text(BULLETIN, encoding="utf-8")
    topic = "Harborline Flood Rider 洪水附加险"
    done = raystorm(tmp_path, "report", topic, "--corpus", "corpus", "--out", "runs")
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = tmp_path / "runs" / topic.replace(" ", "_")
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    written = CJK.findall(md)
    assert len(written) >= 4, md  # the report carries Chinese from its sources and its title
    for fmt in ("pdf", "docx"):
        done = raystorm(tmp_path, "export", str(run_dir), "--format", fmt, "--out", str(tmp_path / f"r.{fmt}"))
        assert done.returncode == 0, done.stderr[-2000:]
    pdf = pdfium.PdfDocument(str(tmp_path / "r.pdf"))
    text = squeezed("".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf))))
    missing = [w for w in written if w not in text]
    assert not missing, missing
    word = docx.Document(str(tmp_path / "r.docx"))
    assert "".join(p.text for p in word.paragraphs if p.style.name == "Title") == topic


def test_a_table_and_an_arabic_paragraph_keep_their_shape(tmp_path):
    """report.md with a Markdown table and a right-to-left paragraph (as a source's own table or text would
    reach a report), exported to HTML, Word and PDF."""
    chromium_or_skip()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    source = tmp_path / "rates.md"
    source.write_text("x\n" * 20, encoding="utf-8")
    (run_dir / "report.md").write_text(
        "# Flood deductibles\n\nThe deductible depends on the tier.[1]\n\n## Tiers\n\n"
        "| Tier | Deductible |\n| --- | --- |\n| Inland | $2,000 [1] |\n| Coastal | 2% of Coverage A [1] |\n\n"
        "## بالعربية\n\nيبلغ الخصم لكل حادث فيضان ألفي دولار.[1]\n\n## References\n\n[1] Rates. rates.md (lines 3–5)  \n",
        encoding="utf-8")
    snippet = {"url": str(source), "title": "Rates", "text": "x", "path": str(source), "line_start": 3,
               "line_end": 5, "passage_id": "p1"}
    (run_dir / "url_to_info.json").write_text(json.dumps(
        {"citations": [{"index": 1, "url": str(source), "title": "Rates", "snippets": [snippet]}]}), encoding="utf-8")
    for fmt in ("html", "docx", "pdf"):
        done = raystorm(tmp_path, "export", str(run_dir), "--format", fmt, "--out", str(tmp_path / f"t.{fmt}"))
        assert done.returncode == 0, done.stderr[-2000:]
    html = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert '<th dir="auto">Deductible</th>' in html and '<td dir="auto">Inland</td>' in html
    assert '<p dir="rtl">يبلغ' in html
    word = docx.Document(str(tmp_path / "t.docx"))
    (table,) = word.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["Tier", "Deductible"], ["Inland", "$2,000 [1]"], ["Coastal", "2% of Coverage A [1]"]]
    arabic = next(p for p in word.paragraphs if "فيضان" in p.text)
    assert arabic._p.pPr.find(docx.oxml.ns.qn("w:bidi")) is not None
    pdf = pdfium.PdfDocument(str(tmp_path / "t.pdf"))
    text = squeezed("".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf))))
    assert "Coastal" in text and "2%ofCoverageA" in text
    # PDFium reads Arabic back in visual order, so only its letters are compared: each is a real glyph with
    # its Unicode value (a missing font would give none); the shaping is checked by eye (docs/screenshots)
    assert set("يبلغالخصملكلحادثفيضانألفيدولار") <= set(text), text


def test_document_text_never_becomes_markup_and_a_missing_chromium_is_one_line(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "report.md").write_text(
        "# Flood &lt;script&gt;alert(1)&lt;/script&gt;\n\nA claim <img src=x onerror=alert(1)>.[1]\n\n"
        "## References\n\n[1] x\n", encoding="utf-8")
    (run_dir / "url_to_info.json").write_text(json.dumps({"citations": [
        {"index": 1, "url": "javascript:alert(1)", "title": "<b>bold</b> title", "snippets": []}]}), encoding="utf-8")
    done = raystorm(tmp_path, "export", str(run_dir), "--format", "html", "--out", str(tmp_path / "x.html"))
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "x.html").read_text(encoding="utf-8")
    assert "<script" not in html and "<img" not in html and "<b>" not in html and "href=\"javascript:" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;bold&lt;/b&gt; title" in html
    # no Chromium: one line that says what to do, for PDF only
    done = raystorm(tmp_path, "export", str(run_dir), "--format", "pdf", env={"RAYSTORM_CHROMIUM": "/nonexistent"})
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "RAYSTORM_CHROMIUM=/nonexistent" in done.stderr
    bin_dir = Path(sys.executable).parent
    done = raystorm(tmp_path, "export", str(run_dir), "--format", "pdf", env={"PATH": str(bin_dir)})
    assert done.returncode == 1 and "needs Chromium and none is on PATH" in done.stderr, done.stderr
