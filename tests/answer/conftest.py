"""Fixtures of the answer-layer tests: the two-hop corpus of tests/data (real embedders, embedded Qdrant)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "multihop"))

from multihop_helpers import TwoHop, ingest_two_hop  # noqa: E402


@pytest.fixture(scope="session")
def two_hop_corpus(tmp_path_factory):
    corpus = TwoHop(ingest_two_hop(tmp_path_factory.mktemp("answer-home")))
    yield corpus
    corpus.close()
