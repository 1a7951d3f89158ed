"""Fixtures of the multi-hop tests (helpers in tests/support/multihop_helpers.py).

- `two_hop` — tests/data/two_hop ingested (real embedders, embedded Qdrant) into a
  temp data dir as collection "twohop", searched in this process.
- `ray_two_hop` — the same corpus in a second data dir, for Ray actors (embedded
  Qdrant has one owner per folder, and this process owns the first).
- `ray_session` — a local Ray for the whole session (it takes seconds to start);
  reused when another module's fixture already started one.
"""

from __future__ import annotations

import pytest

from tests.support.multihop_helpers import TwoHop, ingest_two_hop


@pytest.fixture(scope="session")
def two_hop(tmp_path_factory):
    corpus = TwoHop(ingest_two_hop(tmp_path_factory.mktemp("multihop-home")))
    yield corpus
    corpus.close()


@pytest.fixture(scope="session")
def ray_two_hop(tmp_path_factory):
    return ingest_two_hop(tmp_path_factory.mktemp("multihop-ray-home"))


@pytest.fixture(scope="session")
def ray_session():
    import ray

    from cluster.runtime import connect

    started = not ray.is_initialized()
    # "local": a Ray of our own, even while another process's cluster runs on this machine
    # (a bare ray.init() would try to join that one through Ray's current-cluster file)
    connect(address="local")
    yield
    if started and ray.is_initialized():
        ray.shutdown()
