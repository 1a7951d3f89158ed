"""Ingest on three hosts gives the points of a one-process ingest, or fails loudly.

Every command runs as a user runs it: `raystorm ...` on the head's host, joining the token cluster
by its address (raystorm sets what Ray needs to send the token). The corpus is either at the same
path on every host or only on the driver's (a private mount no Ray process sees); a file asked for
and missing makes the ingest exit 3 unless `--allow-skips`; a worker whose cache cannot be written
stops the ingest in one line naming its node, and leaves no collection behind.
"""

from __future__ import annotations

from pathlib import Path

from retrieval.config import StoreSettings
from retrieval.store import PassageStore
from tests.hosts.conftest import COLLECTION, CORPUS
from tests.support.store_points import points


def canonical(settings: StoreSettings, collection: str, root: Path) -> list[dict]:
    """The collection's passages, without the ids (they derive from the path, which differs between copies)."""
    rows = [{k: v for k, v in p.items() if k not in ("passage_id", "doc_id")}
            for p in points(settings, collection, root).values()]
    return sorted(rows, key=lambda r: (r["path"], str(r.get("record")), r["line_start"], r["sha256"]))


def test_ingest_on_three_hosts_matches_one_process_and_splits_the_embedding(bed, bed_ingest, one_process):
    result = bed_ingest
    assert result.returncode == 0, result.stderr[-3000:]
    assert "embedded by 3 actor(s) on 3 node(s)" in result.stderr, result.stderr[-3000:]
    head = StoreSettings.resolve(str(bed.head.home))
    assert points(head, COLLECTION, CORPUS) == points(one_process, COLLECTION, CORPUS)


def test_ingest_of_files_only_the_driver_has(bed, one_process):
    private = bed.base / "driver-only"  # empty for every process but the driver's
    command = [bed.python, "-m", "cluster.cli", "ingest", str(private), "-c", "driver-only",
               "--address", bed.address, "-q"]
    result = bed.run(bed.head, bed.only_here(private, CORPUS, command))
    assert result.returncode == 0, result.stderr[-3000:]
    assert not any(private.iterdir())  # the files were never where a Ray task could read them
    head = StoreSettings.resolve(str(bed.head.home))
    assert canonical(head, "driver-only", private) == canonical(one_process, COLLECTION, CORPUS)


def test_an_ingest_that_skipped_files_asked_for_exits_non_zero(bed):
    missing = bed.base / "not-here" / "claims.md"
    args = ["ingest", str(CORPUS), str(missing), "-c", "skips", "--address", bed.address, "-q"]
    refused = bed.raystorm(bed.head, *args)
    assert refused.returncode == 3, refused.stderr[-3000:]
    assert f"1 file(s) asked for could not be read on this host: {missing}" in refused.stderr
    accepted = bed.raystorm(bed.head, *args, "--allow-skips")  # the rest is in; nothing new to embed
    assert accepted.returncode == 0, accepted.stderr[-3000:]
    assert "0 added" in accepted.stdout


def test_a_worker_that_cannot_set_up_is_named_and_nothing_is_kept(bed):
    cache = bed.w2.root / "cache"
    aside = cache.with_name("cache-aside")
    cache.rename(aside)
    cache.write_text("a file where the cache folder should be")  # not writable even for root
    try:
        result = bed.raystorm(bed.head, "ingest", str(CORPUS), "-c", "broken", "--address", bed.address,
                              "--embed-workers", "3", "-q")
    finally:
        cache.unlink()
        aside.rename(cache)
    assert result.returncode == 1, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and f"node {bed.w2.ip}" in errors[0] and "embedding" in errors[0], result.stderr[-3000:]
    store = PassageStore(StoreSettings.resolve(str(bed.head.home)))
    try:
        assert not store.exists("broken")
    finally:
        store.close()


def test_a_join_without_the_token_names_the_missing_setting(bed):
    result = bed.raystorm(bed.head, "ingest", str(CORPUS), "-c", "no-token", "--address", bed.address, "-q",
                          env={"RAY_AUTH_TOKEN_PATH": str(bed.base / "no-token-here")}, timeout=120)
    assert result.returncode != 0
    assert "no Ray token on this host" in result.stderr and "RAY_AUTH_TOKEN" in result.stderr, result.stderr[-3000:]
