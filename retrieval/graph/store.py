"""Where the graph lives: a payload-only Qdrant collection next to the passages (`NAME__graph`).

One point per document (its `DocumentRecord`), plus one per claim set written by
the wiki. Embedded or server, every process that reaches the passage store
reaches the graph the same way. `update` is incremental: only documents whose
record changed are rewritten, and pruned documents' records are deleted.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from pydantic import BaseModel
from qdrant_client import models

from retrieval.documents import Document, Passage
from retrieval.graph.extract import document_record
from retrieval.graph.model import ClaimRecord, DocumentRecord
from retrieval.graph.view import EvidenceGraph
from retrieval.store import PassageStore

_ID_NAMESPACE = uuid.UUID("0b4de0f2-6a31-4c55-9a61-2f9b3f1c7e08")
SUFFIX = "__graph"


def graph_collection(collection: str) -> str:
    return f"{collection}{SUFFIX}"


class GraphUpdate(BaseModel):
    """What an ingest did to the graph."""

    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0

    def line(self) -> str:
        return (f"graph: {self.added} documents added, {self.changed} changed, {self.removed} removed, "
                f"{self.unchanged} unchanged")


def _point_id(doc_id: str) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, doc_id))


class GraphStore:
    """Reads and writes a collection's evidence graph through the passage store's client."""

    def __init__(self, store: PassageStore):
        self.store = store

    def exists(self, collection: str) -> bool:
        return self.store.client.collection_exists(graph_collection(collection))

    def _ensure(self, collection: str) -> str:
        name = graph_collection(collection)
        if not self.store.client.collection_exists(name):
            self.store.client.create_collection(name, vectors_config={},
                                                metadata={"schema": "raystorm.graph/1", "passages": collection})
        return name

    def _payloads(self, collection: str):
        """Every point's payload of the collection's graph, in scroll order (none without a graph)."""
        if not self.exists(collection):
            return
        offset = None
        while True:
            points, offset = self.store.client.scroll(graph_collection(collection), limit=512, offset=offset,
                                                      with_payload=True, with_vectors=False)
            yield from (p.payload for p in points)
            if offset is None:
                return

    def records(self, collection: str) -> list[DocumentRecord]:
        out = [DocumentRecord.model_validate(p) for p in self._payloads(collection) if p.get("node_id")]
        return sorted(out, key=lambda r: (r.path, r.record or 0))

    def claims(self, collection: str) -> list[ClaimRecord]:
        return [ClaimRecord.model_validate(c) for p in self._payloads(collection) for c in p.get("claims", [])]

    def put_claims(self, collection: str, wiki: str, pages: dict[str, list[ClaimRecord]]) -> None:
        """A wiki's claims (by page) as graph nodes, replacing what an earlier build of that wiki stored."""
        name = self._ensure(collection)
        self.store.client.delete(name, points_selector=models.FilterSelector(filter=models.Filter(must=[
            models.FieldCondition(key="wiki", match=models.MatchValue(value=wiki))])), wait=True)
        points = [models.PointStruct(id=str(uuid.uuid5(_ID_NAMESPACE, f"claims\n{wiki}\n{page}")), vector={},
                                     payload={"wiki": wiki, "page": page,
                                              "claims": [c.model_dump(mode="json") for c in claims]})
                  for page, claims in pages.items()]
        if points:
            self.store.client.upsert(name, points=points, wait=True)

    def load(self, collection: str) -> EvidenceGraph:
        """The graph as it stands (empty when the collection was never ingested with a graph)."""
        return EvidenceGraph(self.records(collection), self.claims(collection))

    def update(self, collection: str, documents: Sequence[Document], passages: Sequence[Passage],
               prune_under: Sequence[str] | None = None) -> GraphUpdate:
        """Bring the graph in line with an ingest of `documents` (and a prune under `prune_under`)."""
        name = self._ensure(collection)
        stored = {r.doc_id: r for r in self.records(collection)}
        by_doc: dict[str, list[Passage]] = {}
        for p in passages:
            by_doc.setdefault(p.doc_id, []).append(p)
        summary, points = GraphUpdate(), []
        for doc in documents:
            record = document_record(doc, by_doc.get(doc.doc_id, []))
            old = stored.get(doc.doc_id)
            if old is not None and old.digest == record.digest:
                summary.unchanged += 1
                continue
            if old is None:
                summary.added += 1
            else:
                summary.changed += 1
            points.append(models.PointStruct(id=_point_id(doc.doc_id), vector={},
                                             payload=record.model_dump(mode="json")))
        ingested_paths = {d.path for d in documents}
        kept = {d.doc_id for d in documents}
        roots = [r.rstrip("/") for r in (prune_under or [])]
        gone = [r.doc_id for r in stored.values() if r.doc_id not in kept and (
            r.path in ingested_paths  # a record of a re-read file that is no longer there
            or any(r.path == root or r.path.startswith(root + "/") for root in roots))]
        if points:
            self.store.client.upsert(name, points=points, wait=True)
        if gone:
            self.store.client.delete(name, points_selector=models.PointIdsList(points=[_point_id(g) for g in gone]),
                                     wait=True)
        summary.removed = len(gone)
        return summary

    def drop(self, collection: str) -> None:
        if self.exists(collection):
            self.store.client.delete_collection(graph_collection(collection))
