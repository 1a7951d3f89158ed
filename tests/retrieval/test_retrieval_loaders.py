"""Loaders and the splitter: every format, exact line ranges, and bad input skipped with a reason."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from retrieval.loaders import HIDDEN, Skipped, load_file, load_paths
from retrieval.splitter import split_document


def reread(path: str, line_start: int, line_end: int) -> str:
    """The source lines of a range as a passage holds them: whitespace-only lines read as empty."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return "\n".join(line if line.strip() else "" for line in lines[line_start - 1 : line_end])


def only_document(path: Path):
    documents, skipped = load_file(path)
    assert skipped == [] and len(documents) == 1
    return documents[0]


MARKDOWN = """---
title: "Tide Pools"
url: https://example.org/tide-pools
tags: [ocean, biology]
description: Life between the tides
---

# Tide Pools

Intro paragraph about the shore.

## Animals

Sea stars cling to rocks.
Anemones close at low tide.
   
Hermit crabs borrow shells.

### Crabs

Crabs molt as they grow.

```
code line one
  	
code line three
```

## Plants

Kelp anchors with a holdfast.
"""


def test_markdown_front_matter_and_headings(tmp_path):
    path = tmp_path / "tide.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    doc = only_document(path)
    assert doc.title == "Tide Pools"
    assert doc.url == "https://example.org/tide-pools"
    assert doc.tags == ["ocean", "biology"]
    assert doc.description == "Life between the tides"
    passages = split_document(doc)
    by_heading = {tuple(p.heading_path): p for p in passages}
    # the top heading repeats the title, so it is the title, not a section
    assert set(by_heading) == {(), ("Animals",), ("Animals", "Crabs"), ("Plants",)}
    animals = by_heading[("Animals",)]
    assert animals.text == "Sea stars cling to rocks.\nAnemones close at low tide.\n\nHermit crabs borrow shells."
    assert "code line three" in by_heading[("Animals", "Crabs")].text
    assert by_heading[("Plants",)].embedding_text().startswith("Tide Pools > Plants\n")


@pytest.mark.parametrize("max_words", [4, 12, 180])
def test_markdown_and_text_passages_reread_exactly(tmp_path, max_words):
    md = tmp_path / "tide.md"
    md.write_text(MARKDOWN, encoding="utf-8")
    txt = tmp_path / "notes.txt"
    txt.write_text("First paragraph line one.\nFirst paragraph line two.\n \t\nSecond paragraph.\n\n\n"
                   "Third paragraph, after two blank lines.\n", encoding="utf-8")
    for path in (md, txt):
        passages = split_document(only_document(path), max_words=max_words)
        assert passages
        for p in passages:
            source = reread(p.path, p.line_start, p.line_end)
            if p.line_start == p.line_end and p.text != source:
                assert p.text in source  # one long line cut between sentences: an exact substring
            else:
                assert p.text == source, (p.line_start, p.line_end)


def test_text_title_from_file_name(tmp_path):
    path = tmp_path / "field_notes-2024.txt"
    path.write_text("Owls hunt at night.\n", encoding="utf-8")
    doc = only_document(path)
    assert doc.title == "field notes 2024"
    assert doc.url is None and doc.source == str(path.resolve())


def test_html_text_only(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("<html><head><title>Glaciers</title><style>p { color: red }</style></head>\n"
                    "<body>\n<h2>Movement</h2>\n<p>Glaciers flow slowly\ndownhill under their own weight.</p>\n"
                    "<script>var hidden = 'do not index';</script>\n</body></html>\n", encoding="utf-8")
    doc = only_document(path)
    assert doc.title == "Glaciers"
    [passage] = split_document(doc)
    assert passage.text == "Glaciers flow slowly downhill under their own weight."
    assert passage.heading_path == ["Movement"]
    assert (passage.line_start, passage.line_end) == (4, 5)
    assert "hidden" not in passage.text and "color" not in passage.text


def _assert_records_inside(path: Path, passages, texts: list[str]) -> None:
    """Each record's passage has the record's text and a line range that holds that record."""
    assert [p.text for p in passages] == texts
    for p in passages:
        source = reread(str(path), p.line_start, p.line_end)
        first_line = p.text.splitlines()[0]
        assert first_line.replace('"', "") in source.replace('\\"', "").replace('"', "")


def test_json_list_records(tmp_path):
    path = tmp_path / "items.json"
    path.write_text('[\n  {"title": "Alpha", "text": "Alpha text.", "url": "https://a.example"},\n'
                    '  {"title": "Beta",\n   "content": "Beta text.\\n\\nBeta second paragraph.",\n'
                    '   "tags": ["x"]},\n  {"title": "No text"}\n]\n', encoding="utf-8")
    documents, skipped = load_file(path)
    assert [d.title for d in documents] == ["Alpha", "Beta"]
    assert [d.record for d in documents] == [0, 1]
    assert documents[0].url == "https://a.example" and documents[1].tags == ["x"]
    assert [s.reason for s in skipped] == ["record has no text/content field"]
    alpha, beta = (split_document(d) for d in documents)
    assert (alpha[0].line_start, alpha[0].line_end) == (2, 2)
    assert (beta[0].line_start, beta[0].line_end) == (3, 5)
    assert beta[0].text == "Beta text.\n\nBeta second paragraph."
    _assert_records_inside(path, alpha + beta, ["Alpha text.", "Beta text.\n\nBeta second paragraph."])


def test_json_object_wrapping_records_and_single_object(tmp_path):
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text('{\n  "source": "export",\n  "items": [\n    {"title": "One", "text": "First."},\n'
                       '    {"title": "Two",\n     "text": "Second."}\n  ]\n}\n', encoding="utf-8")
    documents, _ = load_file(wrapped)
    passages = [p for d in documents for p in split_document(d)]
    assert [(p.title, p.line_start, p.line_end) for p in passages] == [("One", 4, 4), ("Two", 5, 6)]
    single = tmp_path / "single.json"
    single.write_text(json.dumps({"title": "Solo", "body": "Only record."}, indent=2), encoding="utf-8")
    doc = only_document(single)
    [passage] = split_document(doc)
    assert (doc.title, passage.text, passage.line_start, passage.line_end) == ("Solo", "Only record.", 1, 4)


def test_jsonl_with_a_bad_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"title": "A", "text": "first"}\n{not json}\n\n{"title": "B", "text": "fourth"}\n[1, 2]\n',
                    encoding="utf-8")
    documents, skipped = load_file(path)
    assert [(d.title, d.segments[0].line_start) for d in documents] == [("A", 1), ("B", 4)]
    assert [s.path for s in skipped] == [f"{path}:2", f"{path}:5"]
    assert "invalid JSON" in skipped[0].reason and "not a JSON object" in skipped[1].reason


def test_csv_vectorrm_with_quoted_multiline_cell(tmp_path):
    path = tmp_path / "vectorrm.csv"
    path.write_text('content,title,url,description\n'
                    '"Line one of the cell.\nLine two, with a comma.",Alpha,https://a.example,About alpha\n'
                    'Plain content.,Beta,https://b.example,About beta\n', encoding="utf-8")
    documents, skipped = load_file(path)
    assert skipped == []
    assert [(d.title, d.url, d.description) for d in documents] == [
        ("Alpha", "https://a.example", "About alpha"), ("Beta", "https://b.example", "About beta")]
    alpha, beta = (split_document(d)[0] for d in documents)
    assert alpha.text == "Line one of the cell.\nLine two, with a comma."
    assert (alpha.line_start, alpha.line_end, beta.line_start, beta.line_end) == (2, 3, 4, 4)
    assert alpha.source == "https://a.example"


@pytest.mark.parametrize("name, data, reason", [
    ("blob.txt", b"\x00\x01\x02binary", "binary file"),
    ("latin.txt", "caf\xe9 au lait".encode("latin-1"), "not UTF-8"),
    ("empty.md", b"", "empty file"),
    ("blank.txt", b"  \n\n\t\n", "empty file"),
    ("headings.md", b"# Only\n## Headings\n", "no text content"),
    ("report.pdf", b"%PDF-1.4", "corrupt or not a PDF"),
    ("slides.key", b"keynote", "unsupported file type '.key'"),
    ("broken.json", b'[{"title": "x", "text": ', "malformed json"),
    ("numbers.json", b"[1, 2, 3]", "no records"),
])
def test_bad_files_are_skipped_with_a_reason(tmp_path, name, data, reason):
    path = tmp_path / name
    path.write_bytes(data)
    documents, skipped = load_file(path)
    assert documents == []
    assert len(skipped) == 1 and reason in skipped[0].reason


def test_unreadable_paths_are_skipped(tmp_path):
    (tmp_path / "good.txt").write_text("Readable text.\n", encoding="utf-8")
    os.symlink(tmp_path / "loop", tmp_path / "loop")  # a symlink to itself
    os.symlink(tmp_path, tmp_path / "again")  # a directory loop: not followed
    items = list(load_paths([tmp_path, tmp_path / "missing"]))
    documents = [i for i in items if not isinstance(i, Skipped)]
    skipped = {Path(i.path).name: i.reason for i in items if isinstance(i, Skipped)}
    assert [d.title for d in documents] == ["good"]
    assert skipped == {"loop": skipped["loop"], "missing": "no such file or directory"}
    assert "unreadable" in skipped["loop"]


def test_hidden_files_and_folders_are_passed_over(tmp_path):
    (tmp_path / ".hidden.md").write_text("secret\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "notes.txt").write_text("internal\n", encoding="utf-8")
    (tmp_path / "seen.txt").write_text("visible\n", encoding="utf-8")
    items = list(load_paths([tmp_path]))
    assert [d.title for d in items if not isinstance(d, Skipped)] == ["seen"]
    # passed over, and counted as hidden (the summary says how many)
    assert sorted((Path(s.path).name, s.reason) for s in items if isinstance(s, Skipped)) == [
        (".git", HIDDEN), (".hidden.md", HIDDEN)]
