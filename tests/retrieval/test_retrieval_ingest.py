"""Ingest into a real embedded Qdrant: idempotent, changed files replaced, deleted files pruned."""

from __future__ import annotations

import pytest

from retrieval.errors import EmptyCorpus, RaystormError


@pytest.fixture
def corpus_dir(tmp_path, write_corpus):
    return write_corpus(tmp_path / "corpus", {
        "alpha.md": "# Alpha\n\nAlpha is about apples.\n\n## Orchards\n\nApple orchards bloom in spring.\n",
        "beta.txt": "Beta is about bees.\n\nBees make honey from nectar.\n",
        "gamma.jsonl": '{"title": "Gamma", "text": "Gamma is about goats."}\n',
    })


def test_ingest_then_reingest_adds_nothing(workspace, corpus_dir):
    first = workspace.ingestor().ingest_paths([corpus_dir], "docs")
    assert (first.documents, first.added, first.removed, first.skipped) == (3, first.passages, 0, [])
    assert first.passages == workspace.store.info("docs").passages == 4
    ids = workspace.store.ids_by_path("docs")
    second = workspace.ingestor().ingest_paths([corpus_dir], "docs")
    assert (second.added, second.removed, second.unchanged) == (0, 0, first.passages)
    assert workspace.store.info("docs").passages == first.passages
    assert workspace.store.ids_by_path("docs") == ids


def test_changed_file_replaces_only_its_passages(workspace, corpus_dir):
    workspace.ingestor().ingest_paths([corpus_dir], "docs")
    before = workspace.store.ids_by_path("docs")
    beta = str((corpus_dir / "beta.txt").resolve())
    (corpus_dir / "beta.txt").write_text("Beta is about bees.\n\nBumblebees are larger than honeybees.\n",
                                         encoding="utf-8")
    summary = workspace.ingestor().ingest_paths([corpus_dir], "docs")
    after = workspace.store.ids_by_path("docs")
    assert (summary.added, summary.removed) == (1, 1)
    assert {path: ids for path, ids in after.items() if path != beta} == \
        {path: ids for path, ids in before.items() if path != beta}
    assert not after[beta] & before[beta]
    [passage] = workspace.store.get("docs", sorted(after[beta]))
    assert passage.text == "Beta is about bees.\n\nBumblebees are larger than honeybees."
    assert workspace.store.info("docs").passages == 4


def test_prune_removes_deleted_files(workspace, corpus_dir):
    workspace.ingestor().ingest_paths([corpus_dir], "docs")
    gamma = str((corpus_dir / "gamma.jsonl").resolve())
    (corpus_dir / "gamma.jsonl").unlink()
    kept = workspace.ingestor().ingest_paths([corpus_dir], "docs", prune=False)
    assert kept.pruned_files == 0 and gamma in workspace.store.ids_by_path("docs")
    pruned = workspace.ingestor().ingest_paths([corpus_dir], "docs", prune=True)
    assert (pruned.pruned_files, pruned.removed, pruned.added) == (1, 1, 0)
    assert gamma not in workspace.store.ids_by_path("docs")
    assert workspace.store.info("docs").passages == 3


def test_prune_leaves_files_outside_the_ingested_paths(workspace, corpus_dir, tmp_path, write_corpus):
    other = write_corpus(tmp_path / "other", {"delta.txt": "Delta is about deltas of rivers.\n"})
    workspace.ingestor().ingest_paths([corpus_dir, other], "docs")
    summary = workspace.ingestor().ingest_paths([corpus_dir], "docs", prune=True)
    assert summary.pruned_files == 0
    assert str((other / "delta.txt").resolve()) in workspace.store.ids_by_path("docs")


def test_skipped_files_are_reported_not_fatal(workspace, corpus_dir):
    (corpus_dir / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (corpus_dir / "latin.txt").write_bytes("na\xefve".encode("latin-1"))
    seen = []
    summary = workspace.ingestor().ingest_paths([corpus_dir], "docs", on_skip=seen.append)
    assert summary.documents == 3
    assert sorted(s.path.rsplit("/", 1)[-1] for s in summary.skipped) == ["image.png", "latin.txt"]
    assert seen == summary.skipped


def test_empty_corpus_raises(workspace, tmp_path, write_corpus):
    folder = write_corpus(tmp_path / "nothing", {"notes.pdf": "%PDF", "empty.md": ""})
    with pytest.raises(EmptyCorpus, match="no loadable documents"):
        workspace.ingestor().ingest_paths([folder], "docs")
    assert not workspace.store.exists("docs")


def test_other_dense_model_is_refused(workspace, corpus_dir):
    workspace.ingestor().ingest_paths([corpus_dir], "docs")
    with pytest.raises(RaystormError, match="--dense-model"):
        workspace.store.ensure("docs", "dense-other-model", "other/model", 384)


def test_store_reopens_with_what_was_written(workspace, corpus_dir):
    workspace.ingestor().ingest_paths([corpus_dir], "docs")
    ids = workspace.store.ids_by_path("docs")
    workspace.store.close()  # a new client on the same folder, as the next command would open
    assert workspace.store.ids_by_path("docs") == ids
    assert workspace.ingestor().ingest_paths([corpus_dir], "docs").added == 0
