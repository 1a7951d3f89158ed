"""Fixtures: the real offline embedders, an embedded Qdrant store in a temp dir, the bundled corpus ingested."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from retrieval.config import StoreSettings
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.graph.store import GraphStore
from retrieval.ingest import Ingestor
from retrieval.search import Corpus
from retrieval.store import PassageStore

EXAMPLE = Path(__file__).resolve().parents[2] / "retrieval" / "example_corpus"


class Workspace:
    def __init__(self, data_dir: Path, dense: DenseEmbedder, sparse: SparseEmbedder):
        self.settings = StoreSettings.resolve(data_dir=str(data_dir), qdrant_url=None)
        self.store = PassageStore(self.settings)
        self.dense, self.sparse = dense, sparse

    def ingest(self, paths, collection: str, prune: bool = False):
        ingestor = Ingestor(self.settings, store=self.store, dense=self.dense, sparse=self.sparse)
        return ingestor.ingest_paths(paths, collection, prune=prune)

    def corpus(self, collection: str, **kwargs) -> Corpus:
        return Corpus(self.settings, collection, store=self.store, dense=self.dense, sparse=self.sparse, **kwargs)

    def graph(self, collection: str):
        return GraphStore(self.store).load(collection)

    def close(self) -> None:
        self.store.close()


@pytest.fixture(scope="session")
def embedders(tmp_path_factory):
    models = tmp_path_factory.mktemp("models")
    return DenseEmbedder(models_dir=models), SparseEmbedder(models)


@pytest.fixture
def workspace(tmp_path, embedders):
    ws = Workspace(tmp_path / "data", *embedders)
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def example(tmp_path_factory, embedders):
    """The bundled corpus copied to a temp dir and ingested once per module as 'hb'."""
    root = tmp_path_factory.mktemp("example")
    corpus = root / "corpus"
    shutil.copytree(EXAMPLE, corpus)
    ws = Workspace(root / "data", *embedders)
    ws.ingest([corpus], "hb")
    yield ws, corpus
    ws.close()
