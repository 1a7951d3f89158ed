"""`raystorm export` of the bundled report, each format read back by a real reader: pypdfium2 for the PDF's
text and link annotations, python-docx for Word's headings and hyperlinks, the standard HTML parser.

Each [n] of report.md must be in the export and link to its reference, which names the source file and the
lines (and page/slide/sheet, URL) that url_to_info.json records."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import docx
import pytest

from cluster.export.document import ExportError
from cluster.export.pdf import find_chromium
from pdf_reader import read_pdf, reference_tops
from test_cli_errors import raystorm


def body_citations(run_dir: Path) -> list[int]:
    """Every [n] of report.md's text (its References list left out)."""
    body = (run_dir / "report.md").read_text(encoding="utf-8").split("\n## References\n")[0]
    return sorted({int(n) for n in re.findall(r"\[(\d+)\]", body)})


def headings(run_dir: Path) -> list[str]:
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    return [h for h in re.findall(r"(?m)^## (.+)$", md)]


def references(run_dir: Path) -> dict[int, dict]:
    return {c["index"]: c for c in json.loads((run_dir / "url_to_info.json").read_text())["citations"]}


def export(run_dir: Path, fmt: str, out: Path) -> Path:
    done = raystorm(out.parent, "export", str(run_dir), "--format", fmt, "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.is_file() and str(out) in done.stdout
    return out


def place_words(citation: dict) -> list[str]:
    """What a reference must name: the file, and each cited line range's first line number."""
    snippet = citation["snippets"][0]
    return [Path(snippet["path"]).name, str(snippet["line_start"])]


def squeezed(text: str) -> str:
    """PDF text compared with no whitespace; PDFium reports a hyphen the line broke at as U+FFFE."""
    return re.sub(r"\s+", "", text.replace("\ufffe", "-"))


def test_the_bundled_report_has_citations_to_check(bundled_run):
    assert len(body_citations(bundled_run)) >= 3 and len(headings(bundled_run)) >= 3


def test_markdown_export_links_each_citation_to_its_reference(bundled_run, tmp_path):
    text = export(bundled_run, "md", tmp_path / "r.md").read_text(encoding="utf-8")
    refs = references(bundled_run)
    for h in headings(bundled_run):
        assert f"\n## {h}\n" in text
    for n in body_citations(bundled_run):
        assert f"[[{n}]](#ref-{n})" in text
        line = next(ln for ln in text.splitlines() if ln.startswith(f'<a id="ref-{n}"></a>[{n}] '))
        assert all(w in line for w in place_words(refs[n])), line


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[tuple[str, str]] = []
        self.ids: dict[str, str] = {}
        self._open: list[tuple[str, str | None, list[str]]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._open.append((tag, a.get("id"), []))
        if tag == "a" and a.get("href", "").startswith("#"):
            self.hrefs.append((a["href"][1:], ""))

    def handle_data(self, data):
        for _, _, texts in self._open:
            texts.append(data)

    def handle_endtag(self, tag):
        while self._open:
            name, ident, texts = self._open.pop()
            if ident:
                self.ids[ident] = "".join(texts)
            if name == "a" and self.hrefs and not self.hrefs[-1][1]:
                self.hrefs[-1] = (self.hrefs[-1][0], "".join(texts))
            if name == tag:
                break


def test_html_export_links_each_citation_to_its_reference(bundled_run, tmp_path):
    page = _Links()
    page.feed(export(bundled_run, "html", tmp_path / "r.html").read_text(encoding="utf-8"))
    refs = references(bundled_run)
    linked = {target: text for target, text in page.hrefs}
    for n in body_citations(bundled_run):
        assert linked.get(f"ref-{n}") == f"[{n}]"
        assert all(w in page.ids[f"ref-{n}"] for w in place_words(refs[n])), page.ids[f"ref-{n}"]


def test_word_export_has_heading_styles_and_internal_links(bundled_run, tmp_path):
    document = docx.Document(str(export(bundled_run, "docx", tmp_path / "r.docx")))
    level1 = [p.text for p in document.paragraphs if p.style.name == "Heading 1"]
    assert level1 == [*headings(bundled_run)]  # References included, as in report.md
    links = {(h.fragment, h.text) for p in document.paragraphs for h in p.hyperlinks if h.fragment}
    bookmarks = {b.get(docx.oxml.ns.qn("w:name")): b.getparent() for b in
                 document.element.body.iter(docx.oxml.ns.qn("w:bookmarkStart"))}
    refs = references(bundled_run)
    for n in body_citations(bundled_run):
        assert (f"ref_{n}", f"[{n}]") in links
        holder = "".join(t.text or "" for t in bookmarks[f"ref_{n}"].iter(docx.oxml.ns.qn("w:t")))
        assert holder.startswith(f"[{n}] ") and all(w in holder for w in place_words(refs[n])), holder


def chromium_or_skip() -> None:
    try:
        find_chromium()
    except ExportError as exc:  # the one-line error a user sees
        pytest.skip(str(exc))


def test_pdf_export_links_each_citation_to_its_reference(bundled_run, tmp_path):
    chromium_or_skip()
    pdf = export(bundled_run, "pdf", tmp_path / "r.pdf")
    texts, links = read_pdf(pdf)
    whole = "\n".join(texts)
    for h in headings(bundled_run):
        assert squeezed(h) in squeezed(whole)
    refs = references(bundled_run)
    cited = body_citations(bundled_run)
    linked = {n: [link for link in links if link.text == f"[{n}]"] for n in cited}
    assert all(linked.values()), [n for n, found in linked.items() if not found]
    offsets = []
    for n in cited:
        for link in linked[n]:
            tops = reference_tops(pdf, link.target_page)
            assert n in tops, f"[{n}] jumps to page {link.target_page + 1}, which does not list reference [{n}]"
            landing = squeezed(texts[link.target_page])
            assert all(squeezed(w) in landing for w in place_words(refs[n])), landing
            offsets.append(link.target_y - tops[n])
    # Chromium places a destination a fixed height above its element (the page's top margin); every link
    # landing at one offset from its own reference means none lands on a neighbour (references are ~30 pt apart)
    assert 0 <= min(offsets) and max(offsets) - min(offsets) < 6 and max(offsets) < 80, sorted(set(offsets))


def test_an_unknown_run_folder_is_one_line(tmp_path):
    done = raystorm(tmp_path, "export", str(tmp_path), "--format", "md")
    assert done.returncode == 1 and "holds no report.md" in done.stderr and "Traceback" not in done.stderr
