"""Fixtures of the multi-host tests: one three-host bed (`tests.hosts.bed`) for all of them.

`bed` is up once per session (Ray's start on three hosts takes a while) and torn down at its end,
also when a test fails; every test skips with the reason where the machine cannot host it.
`one_process` is the bundled corpus ingested in one process, the reference of every comparison.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import retrieval.config
from tests.hosts.bed import Bed, unavailable_reason
from tests.support.store_points import ingested_settings

CORPUS = Path(retrieval.config.__file__).parent / "example_corpus"
COLLECTION = "example"


@pytest.fixture(scope="session")
def bed():
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"multi-host bed: {reason}")
    # a short base: Ray's unix sockets live under each host's temp dir, and a socket path has ~107 bytes
    base = Path(tempfile.mkdtemp(prefix="rs48-", dir="/tmp"))
    hosts = Bed(base)
    hosts.up()
    try:
        yield hosts
    finally:
        hosts.down()


@pytest.fixture(scope="session")
def bed_ingest(bed):
    """The bundled corpus ingested on the three hosts into the head's RAYSTORM_HOME, as a user runs it."""
    return bed.raystorm(bed.head, "ingest", str(CORPUS), "-c", COLLECTION, "--address", bed.address,
                        "--embed-workers", "3", "-q")


@pytest.fixture(scope="session")
def one_process(tmp_path_factory):
    """Store settings of a data dir holding the bundled corpus, ingested in this process."""
    return ingested_settings(tmp_path_factory, CORPUS, COLLECTION, "one-process-home")
