"""Search over an ingested collection: `dense`, `sparse` or `hybrid`, optional MMR.

`Corpus` is what agents call: it embeds the query, asks the store, and (with
`mmr`) re-ranks a deeper candidate list for diversity using the dense vectors.
A caller that embeds its own queries (`QueryEncoder`, e.g. a Ray actor that asks
a shared store owner) passes `QueryVectors`, and the store owner only searches.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

from retrieval.config import StoreSettings
from retrieval.documents import Passage
from retrieval.embeddings import DenseEmbedder, SparseEmbedder, shared_dense
from retrieval.errors import RaystormError
from retrieval.graph.current import rank_current_first
from retrieval.graph.store import GraphStore
from retrieval.graph.view import EvidenceGraph
from retrieval.mmr import mmr
from retrieval.rerank import Reranker, RerankSettings
from retrieval.query import (  # noqa: F401  (Retriever, SearchFilter, SearchHit: re-exported from here)
    DEFAULT_MODE, QueryEncoder, QueryVectors, Retriever, SearchFilter, SearchHit, SearchMode)
from retrieval.store import PassageStore


class SearchSettings(BaseModel):
    """Search knobs, printable and shippable. The default mode was picked by measurement (README)."""

    mode: SearchMode = DEFAULT_MODE
    # Weighted RRF as Qdrant scores it: sum of 1 / (rank / weight + fusion_k - 1). Dense beats BM25
    # on both multi-hop sets (R@5 0.638 vs 0.495, 0.80 vs 0.76), so BM25 counts less and a small k
    # keeps each list's top ranks decisive; k 60 / 1:1 let mid-rank BM25 hits push dense's best out.
    # On a plateau (k 2-4, sparse 0.25-0.4): hybrid R@5 0.613 -> 0.650 MuSiQue, 0.83 HotpotQA.
    fusion_k: int = 3
    dense_weight: float = 1.0
    sparse_weight: float = 0.3
    mmr_lambda: float = 0.7  # relevance share when MMR is on
    mmr_depth: int = 4  # MMR picks k out of k * depth candidates
    # the evidence graph: mark each hit current/superseded/amended, rank superseded ones last and hand them
    # over framed as history (retrieval.graph.current); False reads the collection as if it had no graph
    prefer_current: bool = True
    current_depth: int = 2  # read k * this many candidates to fill k with current ones (2-fold CV: bench_graph.py)
    # a second stage (retrieval.rerank) re-orders k * reranker.depth first-stage candidates; off: on unseen
    # questions (5-fold CV, scripts/calibrate/cv_rerank.py) it does not beat the first stage (R@5 0.638 vs 0.650
    # MuSiQue, 0.830 vs 0.830 HotpotQA) and costs 0.5-5 s a query on CPU
    rerank: bool = False
    reranker: RerankSettings = RerankSettings()


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def mmr_order(query: list[float], candidates: list[list[float]], k: int, lambda_: float,
              relevance: list[float] | None = None) -> list[int]:
    """Maximal marginal relevance: indices of k candidates, relevant yet unlike each other. Relevance is
    the cosine with the query unless given (e.g. from the reranker's order)."""
    if relevance is None:
        relevance = [_cosine(query, c) for c in candidates]
    return mmr(relevance, lambda i, j: _cosine(candidates[i], candidates[j]), k, lambda_)


class Corpus:
    """One collection, searchable. Embedders load on first use."""

    def __init__(self, settings: StoreSettings, collection: str, store: PassageStore | None = None,
                 dense: DenseEmbedder | None = None, sparse: SparseEmbedder | None = None,
                 search: SearchSettings | None = None):
        self.settings = settings
        self.collection = collection
        self.store = store or PassageStore(settings)
        self.dense = dense or shared_dense(settings.dense_model, settings.models_dir)
        self.sparse = sparse or SparseEmbedder(settings.models_dir)
        self.encoder = QueryEncoder(self.dense, self.sparse)
        self.search_settings = search or SearchSettings()
        self._checked = False
        self._graph: EvidenceGraph | bool | None = None

    def check(self) -> None:
        """Fail early, with the fix, if the collection is missing, empty or from another model."""
        if not self._checked:
            self.store.require(self.collection, self.dense.vector_name)
            self._checked = True

    def search(self, query: str, k: int = 5, mode: SearchMode | None = None,
               flt: SearchFilter | None = None, mmr: bool = False,
               vectors: QueryVectors | None = None) -> list[SearchHit]:
        """`vectors`: the query already embedded (`QueryEncoder` over this collection's models)."""
        if not query.strip():
            raise RaystormError("empty search query")
        if k < 1:
            raise RaystormError(f"k must be at least 1, got {k}")
        self.check()
        s = self.search_settings
        mode = mode or s.mode
        if vectors is None:
            vectors = self.encoder.encode(query, mode, mmr)
        dense, sparse = vectors.dense, vectors.sparse
        lacks_dense = dense is None and (mode in ("dense", "hybrid") or mmr)
        if lacks_dense or (sparse is None and mode in ("sparse", "hybrid")):
            raise RaystormError(f"query vectors for '{query[:60]}' lack what a {mode} search needs")
        if mode == "sparse" and not sparse[0]:
            return []  # only stopwords or unknown tokens: BM25 has nothing to match
        if mode == "hybrid" and not sparse[0]:
            mode = "dense"
        graph = self.graph() if s.prefer_current else None
        superseded = graph is not None and graph.has_superseded()
        limit = k * s.mmr_depth if mmr else (s.current_depth * k if superseded else k)  # room for current ones
        if s.rerank:
            limit = max(limit, k * s.reranker.depth)
        found = self.store.query(self.collection, mode, limit, self.dense.vector_name, dense, sparse, flt,
                                 with_vectors=mmr, fusion_k=s.fusion_k,
                                 fusion_weights=(s.dense_weight, s.sparse_weight))
        if s.rerank and len(found) > 1:
            found = [found[i] for i in Reranker(self.dense.embed, s.reranker).rerank(query, [p for _, p in found])]
        if mmr and found:
            vectors = [p.vector[self.dense.vector_name] for p, _ in found]
            # after the reranker, its order is the relevance MMR trades against diversity
            relevance = [1.0 - r / len(found) for r in range(len(found))] if s.rerank else None
            found = [found[i] for i in mmr_order(dense, vectors, k, s.mmr_lambda, relevance)]
        if graph is None:
            return [SearchHit(rank=r, score=float(p.score), passage=passage)
                    for r, (p, passage) in enumerate(found[:k], start=1)]
        scores = {passage.passage_id: float(p.score) for p, passage in found}

        def newer(doc_ids: list[str]) -> list[Passage]:  # the superseding documents' best passages, same query
            if flt and flt.doc_ids and not set(doc_ids) & set(flt.doc_ids):
                return []
            within = (flt or SearchFilter()).model_copy(update={"doc_ids": doc_ids})
            more = self.store.query(self.collection, mode, 6 * len(doc_ids), self.dense.vector_name, dense, sparse,
                                    within, fusion_k=s.fusion_k, fusion_weights=(s.dense_weight, s.sparse_weight))
            scores.update({passage.passage_id: float(p.score) for p, passage in more})
            return [passage for _, passage in more]

        ranked = rank_current_first(graph, [passage for _, passage in found], k, newer)
        return [SearchHit(rank=r, score=scores[passage.passage_id], passage=passage, status=status)
                for r, (passage, status) in enumerate(ranked, start=1)]

    def graph(self) -> EvidenceGraph | None:
        """The collection's evidence graph, read once (None when it has none)."""
        if self._graph is None:
            graphs = GraphStore(self.store)
            self._graph = graphs.load(self.collection) if graphs.exists(self.collection) else False
        return self._graph or None

    def version(self) -> str:
        """What the collection holds, as one hash of its passage ids. Ids derive from each passage's
        text and place, so it changes whenever a passage is added, edited, moved or removed."""
        self.check()
        ids = sorted(i for group in self.store.ids_by_path(self.collection).values() for i in group)
        return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]

    def close(self) -> None:
        self.store.close()


def check_collection(settings: StoreSettings, collection: str) -> None:
    """The collection is in the store and searchable (a one-line error with the fix if not); the store is let
    go again (a command checks before it starts work that opens it elsewhere)."""
    corpus = Corpus(settings, collection)
    try:
        corpus.check()
    finally:
        corpus.store.close()


class AsyncCorpus:
    """A `Corpus` behind one worker thread: awaitable, and the embedded store sees one caller at a time."""

    def __init__(self, corpus: Corpus, mode: SearchMode | None = None, mmr: bool = False):
        self.corpus = corpus
        self.mode = mode
        self.mmr = mmr
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="corpus")

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, lambda: self.corpus.search(query, k=k, mode=self.mode, flt=flt, mmr=self.mmr))

    async def version(self) -> str:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.corpus.version)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.corpus.close()
