"""Shared fixtures: the real offline embedders (loaded once) and a small written corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.config import StoreSettings
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.ingest import Ingestor
from retrieval.search import Corpus
from retrieval.store import PassageStore

# Each file is about one thing, so every query below has one obviously right passage.
SMALL_CORPUS = {
    "volcanoes.md": """---
title: Volcanoes
url: https://example.org/volcanoes
tags: [geology, earth]
---

# Volcanoes

## Eruptions

Magma rises through the crust and erupts as lava, ash and volcanic gas.
Mount Vesuvius buried Pompeii under ash in the year 79.

## Monitoring

Seismometers and gas sensors warn observatories before an eruption.
""",
    "bread.md": """# Sourdough bread

A sourdough starter of flour and water ferments with wild yeast and lactobacilli.
Knead the dough, let it proof overnight, then bake it in a hot Dutch oven.
""",
    "chess.txt": """The Sicilian Defence is a chess opening that begins 1.e4 c5.
Grandmasters such as Bobby Fischer and Garry Kasparov played it often.

Castling moves the king two squares towards a rook for safety.
""",
    "rivers.html": """<html><head><title>Rivers</title><style>p {color: red}</style></head>
<body><h1>Rivers</h1>
<p>The Amazon river carries more water than any other river on Earth,
draining the rainforest of South America into the Atlantic Ocean.</p>
<script>var x = 1;</script>
</body></html>
""",
    "satellites.jsonl": """{"title": "Hubble", "text": "The Hubble Space Telescope orbits Earth and photographs distant galaxies.", "url": "https://example.org/hubble", "tags": ["space"]}
{"title": "Voyager", "text": "Voyager 1 left the heliosphere and travels through interstellar space.", "url": "https://example.org/voyager", "tags": ["space"]}
""",
}


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def dense_embedder(models_dir) -> DenseEmbedder:
    return DenseEmbedder(models_dir=models_dir)


@pytest.fixture(scope="session")
def sparse_embedder(models_dir) -> SparseEmbedder:
    return SparseEmbedder(models_dir)


def _write_corpus(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def write_corpus():
    """`write_corpus(folder, {name: text})` writes the files and returns the folder."""
    return _write_corpus


class Workspace:
    """One data dir with one open store and the shared embedders: ingest and search through it."""

    def __init__(self, data_dir: Path, dense: DenseEmbedder, sparse: SparseEmbedder):
        self.settings = StoreSettings.resolve(data_dir=str(data_dir), qdrant_url=None)
        self.store = PassageStore(self.settings)
        self.dense, self.sparse = dense, sparse

    def ingestor(self, **kwargs) -> Ingestor:
        return Ingestor(self.settings, store=self.store, dense=self.dense, sparse=self.sparse, **kwargs)

    def corpus(self, collection: str, **kwargs) -> Corpus:
        return Corpus(self.settings, collection, store=self.store, dense=self.dense, sparse=self.sparse, **kwargs)

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def workspace(tmp_path, dense_embedder, sparse_embedder):
    ws = Workspace(tmp_path / "data", dense_embedder, sparse_embedder)
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def small_search(tmp_path_factory, dense_embedder, sparse_embedder):
    """The small corpus ingested once per module into collection 'small'."""
    root = tmp_path_factory.mktemp("small")
    corpus_dir = _write_corpus(root / "corpus", SMALL_CORPUS)
    ws = Workspace(root / "data", dense_embedder, sparse_embedder)
    summary = ws.ingestor().ingest_paths([corpus_dir], "small")
    yield ws, ws.corpus("small"), corpus_dir, summary
    ws.close()
