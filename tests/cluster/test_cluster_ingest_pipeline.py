"""The Ray Data ingest on the 3-node cluster writes the collection a one-process ingest writes.

The bundled example corpus is ingested by `ingest_on_ray` (embedding actors spread over the
nodes) into a fresh data dir and compared, point for point (ids and payloads), with
`corpus_settings`' one-process ingest; the pipeline's own counters must show the embedding
split across more than one actor and node; a second run embeds nothing; a changed file and
a deleted one with prune replace and drop exactly their passages.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import retrieval.config
from conftest import EXAMPLE_COLLECTION
from retrieval.config import StoreSettings
from retrieval.ingest import Ingestor
from tests.support.store_points import points

CORPUS = Path(retrieval.config.__file__).parent / "example_corpus"


def test_pipeline_ingest_matches_one_process_and_spreads_embedding(ray_cluster, corpus_settings, tmp_path):
    from cluster.ingest_pipeline import ingest_on_ray

    settings = StoreSettings.resolve(str(tmp_path / "home"))
    ingestor = Ingestor(settings)
    files_seen, embedded = [], []
    try:
        summary, stats = ingest_on_ray(ingestor, [CORPUS], "piped", workers=3, batch_size=8,
                                       on_file=lambda done, total: files_seen.append((done, total)),
                                       progress=lambda done, total: embedded.append((done, total)))
    finally:
        ingestor.store.close()
    assert summary.added == summary.passages - summary.duplicates > 0 and summary.removed == 0
    assert files_seen[-1] == (14, 14) and embedded[-1] == (summary.added, summary.added)
    assert stats.embedded == summary.added == sum(stats.by_worker.values())
    # exactly the actors asked for embedded (few passages, yet each got some), spread over the nodes
    assert len(stats.by_worker) == stats.workers == 3 and len(stats.by_node) > 1, stats
    assert stats.per_worker_rate() > 0

    one_process = points(corpus_settings, EXAMPLE_COLLECTION, CORPUS)
    assert points(settings, "piped", CORPUS) == one_process

    # idempotent: a second run embeds nothing; a changed file replaces its passages; prune drops a deleted one
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    ingestor = Ingestor(settings)
    try:
        first, _ = ingest_on_ray(ingestor, [copy], "copy", workers=2, batch_size=16)
        again, stats = ingest_on_ray(ingestor, [copy], "copy", workers=2, batch_size=16)
        assert (again.added, again.removed, again.unchanged) == (0, 0, first.added) and stats.embedded == 0
        glossary = copy / "glossary.md"
        glossary.write_text(glossary.read_text() + "\n\nRider: an addition to a policy that changes its cover.\n")
        (copy / "company-overview.md").unlink()
        changed, _ = ingest_on_ray(ingestor, [copy], "copy", prune=True, workers=2, batch_size=16)
    finally:
        ingestor.store.close()
    assert changed.added >= 1 and changed.removed >= 2 and changed.pruned_files == 1
    after = points(settings, "copy", copy)
    reference = Ingestor(StoreSettings.resolve(str(tmp_path / "home2")))
    try:
        reference.ingest_paths([copy], "copy")
    finally:
        reference.store.close()
    assert after == points(StoreSettings.resolve(str(tmp_path / "home2")), "copy", copy)
