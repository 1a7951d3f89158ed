"""Fixtures of the STORM tests: the bundled example corpus ingested once into a temp store,
and the real offline embedder. Helpers are in storm_support.py.
"""

from __future__ import annotations

import pytest

from agents.lm.nlp import TextToolkit
from retrieval.config import StoreSettings
from retrieval.search import AsyncCorpus, Corpus
from storm_support import COLLECTION, EXAMPLE_DIR, Parts
from tests.support.store_points import ingested_settings


@pytest.fixture(scope="session")
def example_settings(tmp_path_factory) -> StoreSettings:
    return ingested_settings(tmp_path_factory, EXAMPLE_DIR, COLLECTION, "storm-home")


@pytest.fixture(scope="session")
def example_corpus(example_settings) -> Corpus:
    """One open corpus for the session (the embedded store admits one client)."""
    corpus = Corpus(example_settings, COLLECTION)
    corpus.check()
    yield corpus
    corpus.close()


@pytest.fixture(scope="session")
def example_retriever(example_corpus) -> AsyncCorpus:
    retriever = AsyncCorpus(example_corpus)
    yield retriever
    retriever.close()


@pytest.fixture(scope="session")
def nlp(example_corpus) -> TextToolkit:
    return TextToolkit(embed=example_corpus.dense.embed)


@pytest.fixture
def parts(example_corpus, example_retriever, nlp) -> Parts:
    return Parts(example_corpus, example_retriever, nlp)


