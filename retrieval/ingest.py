"""Ingest: files → documents → passages → dense + BM25 vectors → Qdrant.

Point ids derive from content and place, so re-ingesting an unchanged corpus
embeds and writes nothing, a changed file replaces only its own passages, and
`prune` removes the passages of files that are gone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from pydantic import BaseModel, Field

from retrieval.config import StoreSettings
from retrieval.documents import Document, Passage
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.errors import EmptyCorpus
from retrieval.loaders import HIDDEN, Skipped, load_paths
from retrieval.readers import PageProgress
from retrieval.splitter import DEFAULT_MAX_WORDS, split_document
from retrieval.store import PassageStore, check_collection_name

Progress = Callable[[int, int], None]  # (passages embedded so far, passages to embed)


class IngestSummary(BaseModel):
    collection: str
    documents: int = 0
    passages: int = 0  # passages in the ingested files
    added: int = 0
    removed: int = 0
    unchanged: int = 0
    duplicates: int = 0  # passages identical to another of this ingest (same file, lines and text)
    pruned_files: int = 0
    skipped: list[Skipped] = Field(default_factory=list)
    shared_urls: dict[str, list[str]] = Field(default_factory=dict)  # URL -> the files that claim it
    seconds: float = 0.0

    def line(self) -> str:
        duplicates = f", {self.duplicates} duplicates" if self.duplicates else ""
        hidden = sum(s.reason == HIDDEN for s in self.skipped)
        skipped = f"{len(self.skipped) - hidden} skipped" + (f", {hidden} hidden passed over" if hidden else "")
        return (f"{self.documents} documents, {self.passages} passages ({self.added} added, {self.removed} removed, "
                f"{self.unchanged} unchanged{duplicates}), {skipped}, {self.seconds:.1f} s")

    def warnings(self, show: Callable[[str], str] = str) -> list[str]:
        """One line per URL that several files claim (`show` renders a path)."""
        return [f"warning: {len(paths)} files claim the URL {url}: {', '.join(show(p) for p in paths)}; "
                f"they stay separate sources, each cited by its own file and lines"
                for url, paths in self.shared_urls.items()]


@dataclass
class IngestPlan:
    """An ingest decided before any embedding: `todo` to embed and write (shortest first), `stale` to delete."""
    summary: IngestSummary
    documents: list[Document]
    passages: list[Passage]
    todo: list[Passage]
    stale: list[str]
    prune_under: list[str] | None


class Ingestor:
    def __init__(self, settings: StoreSettings, store: PassageStore | None = None,
                 dense: DenseEmbedder | None = None, sparse: SparseEmbedder | None = None,
                 max_words: int = DEFAULT_MAX_WORDS, batch: int = 256):
        self.settings = settings
        self.store = store or PassageStore(settings)
        self.dense = dense or DenseEmbedder(settings.dense_model, settings.models_dir)
        self.sparse = sparse or SparseEmbedder(settings.models_dir)
        self.max_words = max_words
        self.batch = batch

    def ingest_paths(self, paths: Sequence[str | Path], collection: str, prune: bool = False,
                     progress: Progress | None = None, on_skip: Callable[[Skipped], None] | None = None,
                     on_page: PageProgress | None = None) -> IngestSummary:
        """`on_page(file, pages read, pages)` follows each PDF (and deck, workbook) as it is read."""
        started = time.perf_counter()
        check_collection_name(collection)
        documents, skipped = [], []
        for item in load_paths(list(paths), on_page):
            self.store.note("reading files", len(documents) + len(skipped) + 1)  # for commands that wait
            if isinstance(item, Skipped):
                skipped.append(item)
                if on_skip:
                    on_skip(item)
            else:
                documents.append(item)
        summary = self.ingest_documents(documents, collection, prune_under=prune_roots(paths) if prune else None,
                                        progress=progress)
        summary.skipped = skipped
        summary.seconds = time.perf_counter() - started
        return summary

    def ingest_documents(self, documents: Sequence[Document], collection: str,
                         prune_under: Sequence[str] | None = None, progress: Progress | None = None
                         ) -> IngestSummary:
        started = time.perf_counter()
        plan = self.plan(documents, collection, prune_under)
        self._write(collection, plan.todo, progress)
        summary = self.finish(plan)
        summary.seconds = time.perf_counter() - started
        return summary

    def plan(self, documents: Sequence[Document], collection: str, prune_under: Sequence[str] | None = None,
             passages: list[Passage] | None = None) -> IngestPlan:
        """What an ingest of `documents` embeds and deletes (`passages`: their split, if already made)."""
        check_collection_name(collection)
        if not documents and not (prune_under and self.store.exists(collection)):
            raise EmptyCorpus("no loadable documents found: raystorm reads .md .txt .html .json .jsonl .csv "
                              ".pdf .docx .pptx .xlsx")
        if passages is None:
            passages = [p for doc in documents for p in split_document(doc, self.max_words)]
        summary = IngestSummary(collection=collection, documents=len(documents), passages=len(passages))
        if documents:
            self.store.ensure(collection, self.dense.vector_name, self.dense.model_name, self.dense.dimension)
        stored, stored_urls = self.store.scan(collection) if self.store.exists(collection) else ({}, {})
        wanted: dict[str, set[str]] = {}
        for p in passages:
            wanted.setdefault(p.path, set()).add(p.passage_id)
        # files ingested now: drop their stale passages; pruning also drops files that are gone
        stale = [pid for path, ids in stored.items() if path in wanted for pid in ids - wanted[path]]
        if prune_under:
            gone = [path for path in stored if path not in wanted and _under(path, prune_under)]
            summary.pruned_files = len(gone)
            stale += [pid for path in gone for pid in stored[path]]
        known = {pid for ids in stored.values() for pid in ids}
        unique = _unique(passages)
        todo = [p for p in unique if p.passage_id not in known]
        summary.duplicates = len(passages) - len(unique)
        summary.unchanged = len(unique) - len(todo)
        # files stored before and kept: their URLs count as claims too
        kept = [p for p in stored if p not in wanted and not (prune_under and _under(p, prune_under))]
        summary.shared_urls = shared_urls(documents, {p: stored_urls.get(p, set()) for p in kept})
        # embed chunks of similar length together
        todo.sort(key=lambda p: len(p.embedding_text()))
        return IngestPlan(summary=summary, documents=list(documents), passages=passages, todo=todo, stale=stale,
                          prune_under=list(prune_under) if prune_under else None)

    def write(self, collection: str, passages: Sequence[Passage], dense: list, sparse: list) -> None:
        """Store embedded `passages`: the one write path of every ingest."""
        self.store.upsert(collection, self.dense.vector_name, list(passages), dense, sparse)

    def finish(self, plan: IngestPlan) -> IngestSummary:
        """After the writes: delete the stale passages and update the evidence graph."""
        collection = plan.summary.collection
        self.store.note("updating the evidence graph")
        self.store.delete(collection, plan.stale)
        plan.summary.added, plan.summary.removed = len(plan.todo), len(plan.stale)
        from retrieval.graph.store import GraphStore  # the evidence graph follows every ingest and prune

        GraphStore(self.store).update(collection, plan.documents, plan.passages, plan.prune_under)
        return plan.summary

    def _write(self, collection: str, passages: list[Passage], progress: Progress | None) -> None:
        total = len(passages)
        if progress:
            progress(0, total)
        # write as we go so a crash keeps progress
        for start in range(0, total, self.batch):
            chunk = passages[start : start + self.batch]
            texts = [p.embedding_text() for p in chunk]
            self.write(collection, chunk, self.dense.embed(texts), self.sparse.embed(texts))
            self.store.note("embedding passages", min(start + self.batch, total), total)
            if progress:
                progress(min(start + self.batch, total), total)


def shared_urls(documents: Sequence[Document], others: dict[str, set[str]]) -> dict[str, list[str]]:
    """The URLs of `documents` that more than one file claims, counting `others` (file -> URLs) as well."""
    claims: dict[str, set[str]] = {}
    for path, urls in others.items():
        for url in urls:
            claims.setdefault(url, set()).add(path)
    for doc in documents:
        if doc.url:
            claims.setdefault(doc.url, set()).add(doc.path)
    mine = {doc.url for doc in documents if doc.url}
    return {url: sorted(paths) for url, paths in sorted(claims.items()) if url in mine and len(paths) > 1}


def prune_roots(paths: Sequence[str | Path]) -> list[str]:
    """The folders (and files) `--prune` looks under: the given paths, resolved."""
    return [str(Path(p).expanduser().resolve()) for p in paths]


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _unique(passages: list[Passage]) -> list[Passage]:
    seen, out = set(), []
    for p in passages:
        if p.passage_id not in seen:
            seen.add(p.passage_id)
            out.append(p)
    return out
