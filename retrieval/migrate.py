"""Moving a data dir written by qdrant-client's local mode (raystorm's embedded store before the Edge
engine) to Qdrant Edge, once: every collection's points, vectors and payloads copied as they are, so
nothing is embedded again and nothing is lost. Until then such a data dir is refused with the command
that migrates it, never silently re-embedded or emptied."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from pydantic import BaseModel

from retrieval.config import StoreSettings
from retrieval.errors import RaystormError

MIGRATED = "qdrant.migrated-to-edge"  # the local-mode folder, kept (renamed) after a migration


class MigrationSummary(BaseModel):
    collections: dict[str, int]  # name -> points copied
    kept_at: str
    seconds: float


def local_mode_collections(settings: StoreSettings) -> list[str]:
    """The collections a local-mode store in this data dir holds (none when there is no such store)."""
    folder = settings.qdrant_path / "collection"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def refuse_local_mode(settings: StoreSettings) -> None:
    """A `RaystormError` naming `raystorm collections migrate` while the data dir holds an old store."""
    names = local_mode_collections(settings)
    if names:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise RaystormError(
            f"the data dir {settings.data_dir} holds a store written by an earlier raystorm (Qdrant local mode: "
            f"{shown}); run `raystorm collections migrate{_data_dir_flag(settings)}` once to move it to the "
            f"embedded Qdrant engine (its vectors are copied, nothing is embedded again)")


def _data_dir_flag(settings: StoreSettings) -> str:
    return f" --data-dir {settings.data_dir}"


def migrate(settings: StoreSettings, progress: Callable[[str, int, int], None] | None = None,
            batch: int = 512) -> MigrationSummary:
    """Copy every local-mode collection into Edge, then rename the old folder to `MIGRATED`."""
    import time

    from qdrant_client import QdrantClient, models

    from retrieval.edge import EdgeClient

    started = time.perf_counter()
    names = local_mode_collections(settings)
    if not names:
        raise RaystormError(f"nothing to migrate: {settings.qdrant_path} holds no local-mode collections")
    try:
        old = QdrantClient(path=str(settings.qdrant_path))
    except RuntimeError as exc:
        raise RaystormError(f"the old store at {settings.qdrant_path} is in use by another process ({exc})") from exc
    new = EdgeClient(settings.edge_path)
    copied: dict[str, int] = {}
    try:
        for name in names:
            config = old.get_collection(name).config
            vectors = config.params.vectors if isinstance(config.params.vectors, dict) else {}
            new.create_collection(name, vectors_config=vectors, sparse_vectors_config=config.params.sparse_vectors,
                                  metadata=config.metadata or {})
            total, done, offset = old.count(name, exact=True).count, 0, None
            while True:
                points, offset = old.scroll(name, limit=batch, offset=offset, with_payload=True, with_vectors=True)
                new.upsert(name, [models.PointStruct(id=str(p.id), vector=p.vector or {}, payload=p.payload or {})
                                  for p in points])
                done += len(points)
                if progress:
                    progress(name, done, total)
                if offset is None:
                    break
            copied[name] = done
    finally:
        old.close()
        new.close()
    kept = Path(settings.data_dir) / MIGRATED
    settings.qdrant_path.rename(kept)
    return MigrationSummary(collections=copied, kept_at=str(kept), seconds=time.perf_counter() - started)
