"""A mixed folder (PDF, Word, PowerPoint, Excel, Markdown) ingested, searched, asked and reported on: every
citation names its page, slide or sheet and lines, and extracting that part again gives the cited text; the
evidence graph reads a PDF bulletin superseding a Word one; a claim over a PDF goes stale only when the PDF
changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from office_files import write_docx, write_pdf, write_pptx, write_xlsx

from agents.wiki.check import check_folder
from agents.wiki.claims import Claim, ClaimSet, normalize, sidecar_path
from agents.wiki.pinning import LineCache, core, pin_statement
from cluster.cli import main
from retrieval import readers
from retrieval.config import StoreSettings
from retrieval.documents import Part
from retrieval.graph.current import without_history
from retrieval.graph.store import GraphStore
from retrieval.ingest import Ingestor
from retrieval.loaders import load_file
from retrieval.splitter import split_document
from retrieval.store import PassageStore

BULLETIN_PAGES = [
    ["Bulletin 2024-02: Flood deductible", "Effective: March 1, 2024", "Supersedes: Bulletin 2023-05", "1 Scope",
     "This bulletin applies to every flood rider that Harborline Mutual sells."],
    ["2 Deductible", "The flood deductible is $2,500 per flood event for every insured building.",
     "Buildings in coastal zone V carry a flood deductible of $5,000 per flood event."],
]
OUTLINE = {"1 Scope": 0, "2 Deductible": 0}


def _write_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    write_pdf(folder / "bulletin-2024-02.pdf", BULLETIN_PAGES, OUTLINE, title="Bulletin 2024-02: Flood deductible")
    write_docx(folder / "bulletin-2023-05.docx", [
        ("p", "Effective: June 1, 2023"), ("h1", "Deductible"),
        ("p", "The flood deductible is $2,000 per flood event for every insured building."),
        ("table", [["Zone", "Deductible"], ["A", "$2,000"], ["V", "$4,000"]])],
        title="Bulletin 2023-05: Flood deductible")
    write_pptx(folder / "flood-program.pptx", [
        {"title": "Flood program overview",
         "bullets": ["Harborline Mutual sells the flood rider in three coastal regions."]},
        {"title": "Waiting period", "bullets": ["Flood coverage starts 14 days after the flood rider is purchased."],
         "notes": "Claims adjusters visit a flooded building within three days of the flood claim."}])
    write_xlsx(folder / "flood-rates.xlsx", {"2024": [
        ["Zone", "Annual flood rate", "Flood deductible"], ["A", "1.2% of insured value", "$2,500"],
        ["V", "2.8% of insured value", "$5,000"]]})
    (folder / "claims-memo.md").write_text(
        "# Flood claims memo\n\n## Filing\n\nA flood claim is filed within 60 days of the flood event.\n"
        "The flood deductible is subtracted from every flood claim payment.\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, dense_embedder, sparse_embedder):
    root = tmp_path_factory.mktemp("mixed")
    folder = _write_folder(root / "docs")
    settings = StoreSettings.resolve(data_dir=str(root / "data"), qdrant_url=None)
    store = PassageStore(settings)
    summary = Ingestor(settings, store=store, dense=dense_embedder, sparse=sparse_embedder).ingest_paths(
        [folder], "flood")
    assert summary.documents == 5 and summary.skipped == []
    graph = GraphStore(store).load("flood")
    store.close()  # the CLI opens the embedded store itself
    yield settings.data_dir, folder, graph


def _resolves(path: str, part: dict | Part | None, start: int, end: int, text: str) -> bool:
    """Extract that part again: do the cited lines hold `text` (whitespace and case aside; a superseded
    passage's lines as research quotes them, framed as history)?"""
    part = Part.model_validate(part) if isinstance(part, dict) else part
    lines = readers.part_lines(path, part)
    said = " ".join(without_history(line) for line in text.split("\n"))
    return lines is not None and normalize(said) in normalize(" ".join(lines[start - 1: end]))


def test_the_pdf_bulletin_supersedes_the_word_one(mixed):
    _, folder, graph = mixed
    old = graph.status(str(folder / "bulletin-2023-05.docx"), ["Deductible"])
    assert old.state == "superseded" and old.by == [str(folder / "bulletin-2024-02.pdf")]
    assert graph.status(str(folder / "bulletin-2024-02.pdf"), ["2 Deductible"]).state == "current"


def test_search_json_carries_the_page_and_its_lines_resolve(mixed, capsys):
    data_dir, folder, _ = mixed
    capsys.readouterr()
    assert main(["search", "flood deductible per flood event in zone V", "-c", "flood", "--json", "-k", "8",
                 "--data-dir", data_dir]) == 0
    hits = json.loads(capsys.readouterr().out)
    pdf = [h for h in hits if h["path"].endswith(".pdf")]
    assert pdf and all("page" in h for h in pdf)
    sheet = [h for h in hits if h["path"].endswith(".xlsx")]
    assert sheet and sheet[0]["sheet"] == "2024"
    assert any(h["page"] == 2 and "$5,000" in h["text"] for h in pdf)
    for h in hits:
        part = ({"kind": "page", "number": h["page"]} if "page" in h else {"kind": "slide", "number": h["slide"]}
                if "slide" in h else None)
        if part:
            assert _resolves(h["path"], part, h["line_start"], h["line_end"], h["text"])


def test_ask_cites_pages_slides_and_rows_that_resolve(mixed, capsys):
    data_dir, _, _ = mixed
    capsys.readouterr()
    assert main(["ask", "What is the flood deductible per flood event?", "-c", "flood", "--strategy", "chain",
                 "--json", "--data-dir", data_dir]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert "$2,500" in answer["answer"]
    cited = [c for c in answer["citations"] if c.get("part")]
    assert cited
    for c in answer["citations"]:
        if c["path"].endswith((".pdf", ".pptx", ".xlsx", ".docx")):
            assert _resolves(c["path"], c.get("part"), c["line_start"], c["line_end"], c["text"]), c


def test_report_references_give_page_slide_sheet_and_lines_that_hold_the_sentences(mixed, tmp_path):
    data_dir, _, _ = mixed
    out = tmp_path / "runs"
    assert main(["report", "Harborline flood rider deductible and waiting period", "-c", "flood", "--out", str(out),
                 "--data-dir", data_dir]) == 0
    topic = next(out.iterdir())
    references = (topic / "report.md").read_text().split("## References")[1]
    assert re.search(r"bulletin-2024-02\.pdf.*\(p\. \d, lines? \d", references), references
    assert re.search(r"(p\. \d|slide \d|sheet \\?\"2024\\?\"), (lines|rows|line|row) \d", references)
    claims = ClaimSet.model_validate_json((topic / "report.claims.json").read_text())
    office = [(c, e) for c in claims.claims for e in c.evidence if e.part is not None]
    assert office
    for claim, ev in office:  # the cited lines of that page (slide, sheet), extracted again, hold the sentence
        assert _resolves(ev.path, ev.part, ev.line_start, ev.line_end, core(claim.text)), claim
    counts = check_folder(topic).counts
    assert counts["ok"] > 0 and counts["stale"] == counts["unresolved"] == 0


def test_a_claim_over_a_pdf_is_stale_when_the_pdf_changes_and_ok_when_it_does_not(tmp_path):
    docs, wiki = tmp_path / "docs", tmp_path / "wiki"
    docs.mkdir(), wiki.mkdir()
    pdf = write_pdf(docs / "b.pdf", BULLETIN_PAGES, OUTLINE)
    passage = next(p for p in split_document(load_file(pdf)[0][0]) if "$2,500" in p.text)
    statement = "The flood deductible is $2,500 per flood event for every insured building. [1]"
    ev = pin_statement(statement, passage.source, passage.path, passage.line_start, passage.line_end,
                       passage.heading_path, LineCache(), passage.sha256, passage.part)
    assert ev.part == Part(kind="page", number=2) and (ev.line_start, ev.line_end) == (2, 2)
    claims = ClaimSet(kind="wiki", title="Deductible", page="deductible.md",
                      claims=[Claim(id="c1", text=statement, evidence=[ev])])
    claims = claims.record_roots() if hasattr(claims, "record_roots") else claims
    sidecar_path(wiki / "deductible.md").write_text(claims.model_dump_json())
    assert check_folder(wiki).counts["ok"] == 1
    write_pdf(pdf, BULLETIN_PAGES, OUTLINE)  # written again, same text: still ok
    assert check_folder(wiki).counts["ok"] == 1
    changed = [BULLETIN_PAGES[0], [BULLETIN_PAGES[1][0], BULLETIN_PAGES[1][1].replace("$2,500", "$3,000"),
                                   BULLETIN_PAGES[1][2]]]
    write_pdf(pdf, changed, OUTLINE)
    report = check_folder(wiki, write=False)
    assert report.counts["stale"] == 1
    assert report.claims[0].evidence[0].now.endswith("#p. 2:L2-L2")


def test_a_claim_on_one_pdf_page_cites_only_that_pages_passage(tmp_path):
    from retrieval.graph.extract import document_record
    from retrieval.graph.model import ClaimPointer, ClaimRecord
    from retrieval.graph.view import EvidenceGraph

    doc = load_file(write_pdf(tmp_path / "b.pdf", BULLETIN_PAGES, OUTLINE))[0][0]
    passages = split_document(doc)
    claim = ClaimRecord(id="claim:x#c1", text="deductible", wiki=str(tmp_path), evidence=[
        ClaimPointer(path=doc.path, line_start=2, line_end=2, part=Part(kind="page", number=2))])
    graph = EvidenceGraph([document_record(doc, passages)], [claim])
    cited = {e.target for e in graph.edges if e.type == "cites"}
    assert cited == {p.passage_id for p in passages if p.part.number == 2}  # page 1 has lines 2 too


def test_header_fields_run_together_or_wrapped_by_an_export_still_state_edges(tmp_path):
    """Word puts a Markdown header's lines in one paragraph; a PDF wraps it mid-value."""
    from retrieval.graph.extract import document_record

    header = ("Issued: May 2, 2024 Effective: June 1, 2024 Applies to: form FR-12 Supersedes: Sections 4 and "
              "5 of Bulletin 2021-04")
    word = write_docx(tmp_path / "w.docx", [("p", header), ("h1", "Rule 1"), ("p", "The wait is 14 days.")],
                      title="Bulletin 2024-05: Flood rider")
    pdf = write_pdf(tmp_path / "p.pdf", [["Bulletin 2024-05: Flood rider", header[:88], header[88:], "Rule 1",
                                          "Form FR-14 is the 2024 edition; it replaced form",
                                          "FR-12, which the company sold from 2019."]], {"Rule 1": 0})
    for path, line in ((word, 1), (pdf, 2)):  # the Word title is a property; the PDF's is page 1's line 1
        doc = load_file(path)[0][0]
        record = document_record(doc, split_document(doc))
        typed = {(e.type, e.target.key, e.line_start) for e in record.edges if e.type != "refers_to"}
        assert typed == {("supersedes", "BULLETIN 2021-04", line), ("attaches_to", "FR-12", line)}, typed
        assert record.effective == "June 1, 2024"
        assert {e.part for e in record.edges} == ({Part(kind="page", number=1)} if path == pdf else {None})
    # a sentence wrapped across PDF lines is read whole: "it replaced form FR-12" speaks of this document
    record = document_record(load_file(pdf)[0][0], [])
    assert ("refers_to", "FR-12", 5) in {(e.type, e.target.key, e.line_start) for e in record.edges}
