"""A report as one standalone HTML file (styles inline, nothing fetched) and as portable Markdown.

The HTML is what the PDF prints: its `@media print` rules set the page. Both keep every `[n]` as a link to
`#ref-n`, the reference's anchor, so a reader (or a PDF viewer) jumps from a claim to its source.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from agents.storm.artifacts import markdown_text, source_link
from cluster.export.document import Block, Inline, ReportDocument, is_rtl

_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                          autoescape=True, trim_blocks=False, lstrip_blocks=False, undefined=jinja2.StrictUndefined)
_SCRIPTS = [("ko", r"[\uac00-\ud7af]"), ("ja", r"[\u3040-\u30ff]"), ("zh", r"[\u4e00-\u9fff]"),
            ("ar", r"[\u0600-\u06ff]"), ("he", r"[\u0590-\u05ff]")]


def language_of(text: str) -> str:
    """The page's `lang`: it picks the CJK glyph forms (Chinese, Japanese, Korean differ) and the default
    direction; guessed from the title's script, English otherwise."""
    return next((lang for lang, letters in _SCRIPTS if re.search(letters, text)), "en")


def report_html(doc: ReportDocument) -> str:
    return _ENV.get_template("report.html").render(doc=doc, rtl=is_rtl, lang=language_of(doc.title))


def _md(items: list[Inline]) -> str:
    return "".join(f"[[{i.cite}]](#ref-{i.cite})" if i.cite is not None else
                   f"**{markdown_text(i.text)}**" if i.strong else markdown_text(i.text) for i in items)


def _md_block(b: Block) -> str:
    if b.kind == "h3":
        return f"### {_md(b.inlines)}"
    if b.kind == "table":
        rows = ["| " + " | ".join(_md(c).replace("|", "\\|") for c in row) + " |" for row in b.rows]
        return "\n".join([rows[0], "|" + " --- |" * len(b.rows[0]), *rows[1:]])
    return _md(b.inlines)


def report_markdown_export(doc: ReportDocument) -> str:
    """report.md for sharing: the same text, each [n] a link to its reference's anchor, and each reference
    with its source, page/slide/sheet and lines spelled out (an anchor tag before it: Markdown has none)."""
    parts = [f"# {markdown_text(doc.title)}", *(_md_block(b) for b in doc.lead)]
    for s in doc.sections:
        parts += [f"## {markdown_text(s.heading)}", *(_md_block(b) for b in s.blocks)]
    if doc.references:
        lines = []
        for r in doc.references:
            where = "; ".join(r.places)
            source = r.source if not r.url or r.source != r.url else ""
            place = ", ".join(p for p in (markdown_text(source), markdown_text(where)) if p)
            url = f" {source_link(r.url)}" if r.url else ""
            lines.append(f'<a id="ref-{r.n}"></a>[{r.n}] {markdown_text(r.title)}.{url}'
                         + (f" ({place})" if place else "") + "  ")
        parts += ["## References", "\n".join(lines)]
    return "\n\n".join(parts).rstrip() + "\n"
