"""Stores for tests: a data dir with a folder ingested, and a collection's points as comparable values (what
two ingests of one corpus must agree on)."""

from __future__ import annotations

from pathlib import Path

from retrieval.config import StoreSettings
from retrieval.store import PassageStore


def points(settings: StoreSettings, collection: str, root: Path) -> dict[str, dict]:
    """Point id -> payload, with paths made relative to `root` (two ingests may read copies at different paths)."""
    store = PassageStore(settings)
    try:
        ids = [i for group in store.scan(collection)[0].values() for i in group]
        out = {}
        for p in store.get(collection, ids):
            payload = p.model_dump(mode="json")
            payload["path"] = str(Path(payload["path"]).relative_to(root))
            out[p.passage_id] = payload
        return out
    finally:
        store.close()


def ingested_settings(tmp_path_factory, folder, collection: str, name: str = "") -> StoreSettings:
    """A fresh data dir with `folder` ingested into `collection` in this process; the embedded store is closed
    again, so another client (the CLI, a corpus) can open it."""
    from retrieval.ingest import Ingestor

    settings = StoreSettings.resolve(str(tmp_path_factory.mktemp(name or f"{collection}-home")))
    ingestor = Ingestor(settings)
    try:
        ingestor.ingest_paths([folder], collection)
    finally:
        ingestor.store.close()
    return settings
