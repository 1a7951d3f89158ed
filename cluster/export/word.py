"""A report as a Word document (python-docx): headings in Word's heading styles, so the navigation pane
lists the sections; each `[n]` an internal hyperlink to a bookmark on its reference; tables as Word tables;
right-to-left paragraphs marked bidirectional.

python-docx has no API for internal hyperlinks or bookmarks, so those two are built as the WordprocessingML
elements the standard defines (w:hyperlink with w:anchor, w:bookmarkStart/End).
"""

from __future__ import annotations

import re
from pathlib import Path

from docx import Document
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor
from docx.text.paragraph import Paragraph

from cluster.export.document import Block, Inline, ReportDocument, is_rtl

# fonts Word (or LibreOffice) uses for East Asian and complex-script text when the reader's machine has them
EAST_ASIAN_FONT, COMPLEX_FONT = "Noto Sans CJK SC", "DejaVu Sans"


_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters XML 1.0 cannot hold


def _xml(text: str) -> str:
    return _NOT_XML.sub("", text)


def _bookmark_name(n: int) -> str:
    return f"ref_{n}"  # Word bookmark names: letters, digits, underscores, starting with a letter


def _cite(paragraph: Paragraph, n: int) -> None:
    link = OxmlElement("w:hyperlink")
    link.set(qn("w:anchor"), _bookmark_name(n))
    link.set(qn("w:history"), "1")
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    for tag, attr, value in (("w:color", "w:val", "1A4D8F"), ("w:vertAlign", "w:val", "superscript")):
        el = OxmlElement(tag)
        el.set(qn(attr), value)
        props.append(el)
    run.append(props)
    text = OxmlElement("w:t")
    text.text = f"[{n}]"
    run.append(text)
    link.append(run)
    paragraph._p.append(link)


def _bookmark(paragraph: Paragraph, n: int) -> None:
    start, end = OxmlElement("w:bookmarkStart"), OxmlElement("w:bookmarkEnd")
    start.set(qn("w:id"), str(n))
    start.set(qn("w:name"), _bookmark_name(n))
    end.set(qn("w:id"), str(n))
    paragraph._p.insert(1 if paragraph._p.pPr is not None else 0, start)
    paragraph._p.append(end)


def _bidi(paragraph: Paragraph, text: str) -> None:
    if is_rtl(text):
        paragraph._p.get_or_add_pPr().append(OxmlElement("w:bidi"))


def _fill(paragraph: Paragraph, items: list[Inline]) -> None:
    for i in items:
        if i.cite is not None:
            _cite(paragraph, i.cite)
        else:
            run = paragraph.add_run(_xml(i.text))
            run.bold = i.strong or None
            if is_rtl(i.text):
                run._r.get_or_add_rPr().append(OxmlElement("w:rtl"))
    _bidi(paragraph, "".join(i.text for i in items))


def _block(doc, b: Block) -> None:
    if b.kind == "h3":
        _fill(doc.add_heading("", level=3), b.inlines)
    elif b.kind == "table":
        width = max(len(r) for r in b.rows)
        table = doc.add_table(rows=len(b.rows), cols=width)
        table.style = "Table Grid"
        for r, row in enumerate(b.rows):
            for c, cell in enumerate(row):
                paragraph = table.cell(r, c).paragraphs[0]
                _fill(paragraph, cell)
                if r == 0:
                    for run in paragraph.runs:
                        run.bold = True
    else:
        _fill(doc.add_paragraph(), b.inlines)


def write_docx(doc: ReportDocument, out: Path) -> Path:
    word = Document()
    fonts = word.styles["Normal"].element.get_or_add_rPr().get_or_add_rFonts()
    fonts.set(qn("w:eastAsia"), EAST_ASIAN_FONT)
    fonts.set(qn("w:cs"), COMPLEX_FONT)
    word.core_properties.title = _xml(doc.title)[:255]
    _bidi(word.add_heading(_xml(doc.title), level=0), doc.title)
    for b in doc.lead:
        _block(word, b)
    for s in doc.sections:
        _bidi(word.add_heading(_xml(s.heading), level=1), s.heading)
        for b in s.blocks:
            _block(word, b)
    if doc.references:
        word.add_heading("References", level=1)
        for r in doc.references:
            p = word.add_paragraph()
            p.add_run(f"[{r.n}] ").bold = True
            p.add_run(_xml(f"{r.title}."))
            if r.url:
                _url(p, r.url)
            where = "; ".join(r.places)
            source = r.source if not r.url or r.source != r.url else ""
            place = ", ".join(x for x in (source, where) if x)
            if place:
                gray = p.add_run(_xml(f" ({place})"))
                gray.font.color.rgb = RGBColor(0x44, 0x44, 0x44)
            p.paragraph_format.space_after = Pt(3)
            _bookmark(p, r.n)
    word.save(str(out))
    return out


def _url(paragraph: Paragraph, url: str) -> None:
    """An external hyperlink (a relationship to the URL), shown as the URL itself."""
    from docx.opc.constants import RELATIONSHIP_TYPE

    rel = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = _xml(f" {url}")
    text.set(qn("xml:space"), "preserve")
    run.append(text)
    link.append(run)
    paragraph._p.append(link)
