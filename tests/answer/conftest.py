"""Fixtures of the answer-layer tests: the two-hop corpus of tests/data (real embedders, embedded Qdrant)."""

from __future__ import annotations

import pytest

from tests.support.multihop_helpers import TwoHop, ingest_two_hop


@pytest.fixture(scope="session")
def two_hop_corpus(tmp_path_factory):
    corpus = TwoHop(ingest_two_hop(tmp_path_factory.mktemp("answer-home")))
    yield corpus
    corpus.close()

