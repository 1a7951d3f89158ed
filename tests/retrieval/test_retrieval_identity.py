"""A source is its file: two files claiming one URL stay two sources, cited by their own lines.

Also: collection names a store cannot hold are refused in one line, and passages that
repeat within one ingest are counted as duplicates, not as "unchanged"."""

from __future__ import annotations

import pytest

from agents.storm.article import SectionDraft, assemble
from agents.storm.artifacts import report_markdown
from retrieval.errors import UsageError
from retrieval.snippets import Snippet, group_by_url, table_name
from retrieval.store import check_collection_name

URL = "https://docs.example/bulletins/7"
REAL = f"""---
title: Bulletin 7: Waiting Period
url: {URL}
---
# Bulletin 7: Waiting Period

**Applies to:** form FR-12

## Rule

The waiting period for the flood rider is 14 days from the date of purchase.
"""
IMPOSTER = f"""---
title: Bulletin 7: Waiting Period
url: {URL}
---
# x

## Rule 1

Correction: the waiting period for the flood rider is 0 days.
"""


@pytest.fixture
def spoofed(workspace, tmp_path, write_corpus):
    folder = write_corpus(tmp_path / "corpus", {"bulletin-7.md": REAL, "zz-imposter.md": IMPOSTER})
    summary = workspace.ingestor().ingest_paths([folder], "spoof")
    return folder, summary


def test_two_files_claiming_one_url_stay_two_sources(workspace, spoofed):
    folder, summary = spoofed
    real, fake = str((folder / "bulletin-7.md").resolve()), str((folder / "zz-imposter.md").resolve())
    assert summary.shared_urls == {URL: [real, fake]}
    (warning,) = summary.warnings()
    assert URL in warning and "zz-imposter.md" in warning and "separate sources" in warning
    hits = workspace.corpus("spoof").search("flood rider waiting period 0 days", k=5)
    zero = next(h.passage for h in hits if "0 days" in h.passage.text)
    assert (zero.path, zero.line_start, zero.line_end) == (fake, 9, 9)
    assert zero.doc_id != next(h.passage for h in hits if "14 days" in h.passage.text).doc_id


def test_a_reference_names_the_file_and_lines_its_sentence_came_from(workspace, spoofed):
    hits = workspace.corpus("spoof").search("flood rider waiting period", k=5)
    snippets = [Snippet.from_passage(h.passage) for h in hits]
    real = next(s for s in snippets if "14 days" in s.text)
    fake = next(s for s in snippets if "0 days" in s.text)
    table = group_by_url([real, fake])
    assert len(table) == 2 and all(len(e.snippets) == 1 for e in table.values())
    article = assemble("flood rider", [SectionDraft(heading="Waiting period", sources=[real, fake],
                                                    text="It is 14 days.[1] A correction says 0 days.[2]")])
    report = report_markdown(article)
    assert "It is 14 days.[1] A correction says 0 days.[2]" in report
    refs = report.split("## References", 1)[1]
    assert f"[1] Bulletin 7: Waiting Period. {URL} (bulletin-7.md, line 11)" in refs
    assert f"[2] Bulletin 7: Waiting Period. {URL} (zz-imposter.md, line 9)" in refs


def test_reingesting_one_of_the_claimants_still_warns_once(workspace, spoofed):
    folder, _ = spoofed
    again = workspace.ingestor().ingest_paths([folder / "zz-imposter.md"], "spoof")
    assert list(again.shared_urls) == [URL] and len(again.warnings()) == 1
    alone = workspace.ingestor().ingest_paths([folder / "bulletin-7.md"], "other")
    assert alone.shared_urls == {} and alone.warnings() == []


def test_repeated_passages_are_duplicates_not_unchanged(workspace, tmp_path, write_corpus):
    folder = write_corpus(tmp_path / "c", {"a.md": "# A\n\nApples grow in orchards.\n\n## B\n\nBees make honey.\n",
                                           "b.txt": "Beta is about bees.\n"})
    summary = workspace.ingestor().ingest_paths([folder, folder / "a.md"], "fresh")
    assert (summary.passages, summary.added, summary.unchanged, summary.duplicates) == (5, 3, 0, 2)
    assert "(3 added, 0 removed, 0 unchanged, 2 duplicates)" in summary.line()
    assert workspace.store.info("fresh").passages == 3


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".", "..", "x" * 300, "-rf", "a b", "名字"])
def test_collection_names_a_store_cannot_hold_are_refused(workspace, tmp_path, write_corpus, name):
    folder = write_corpus(tmp_path / "c", {"a.txt": "Apples grow in orchards.\n"})
    with pytest.raises(UsageError, match="letters, digits, '-', '_' or '.'") as caught:
        workspace.ingestor().ingest_paths([folder], name)
    assert "\n" not in str(caught.value) and caught.value.exit_code == 2
    assert workspace.store.collections() == []  # refused before anything was created


@pytest.mark.parametrize("name", ["docs", "harborline-2024", "a.b_c", "X" * 100])
def test_ordinary_collection_names_pass(name):
    assert check_collection_name(name) == name


def test_table_names_keep_unicode_run_ids_apart():
    a, b = table_name("Harborline_洪水保险_flood-1234"), table_name("Harborline_网络保险_flood-1234")
    assert a != b and a.startswith("infotable-harborline-") and check_collection_name(a) == a
    assert table_name("plain-run-1") == "infotable-plain-run-1"
