"""BM25 search for embedded Qdrant: a numpy inverted index of a collection's sparse vectors.

qdrant-client's local mode scores a sparse query in pure Python against every
point (~100 ms a query at 2k passages, growing with the corpus). `SparseIndex`
touches only the postings of the query's terms, and does local mode's arithmetic
in the same order, so it returns the same points with the same scores:

- IDF modifier as `LocalCollection._compute_idf`: ln((n - df + 0.5) / (df + 0.5) + 1),
  n = points holding the sparse vector (empty ones count), df = those holding the term;
- score = sum of query weight x idf x document weight over the shared terms,
  added in ascending term order in float64, then rounded to float32;
- points sharing no term with the query are not hits.

Equal float32 scores are ordered by point id; local mode leaves ties to numpy's
unstable argsort. A Qdrant server does its own sparse search and needs none of this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Collection, Iterable, Sequence

import numpy as np
from qdrant_client import QdrantClient, models

SparseTerms = tuple[Sequence[int], Sequence[float]]  # (term indices, weights), as the embedder gives them


@dataclass(frozen=True)
class _Postings:
    """The index proper: every (term, row, weight) sorted by term; rows follow `ids`."""

    ids: list[str]  # row -> point id, sorted, so a tie goes to the smaller id
    vocab: np.ndarray  # distinct terms, ascending
    starts: np.ndarray  # postings of vocab[i] are [starts[i], starts[i + 1])
    rows: np.ndarray
    weights: np.ndarray  # float64 holding the stored float32 values, as local mode's Python floats do

    @classmethod
    def build(cls, docs: dict[str, tuple[np.ndarray, np.ndarray]]) -> "_Postings":
        ids = sorted(docs)
        terms = [docs[i][0] for i in ids]
        total = sum(len(t) for t in terms)
        if total == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(ids, empty, np.zeros(1, dtype=np.int64), empty, np.zeros(0))
        flat_terms = np.concatenate(terms)
        rows = np.repeat(np.arange(len(ids)), [len(t) for t in terms])
        weights = np.concatenate([docs[i][1] for i in ids])
        order = np.argsort(flat_terms, kind="stable")
        vocab, starts = np.unique(flat_terms[order], return_index=True)
        return cls(ids, vocab, np.append(starts, total), rows[order], weights[order])


class SparseIndex:
    """One collection's BM25 vectors, kept in step with its writes, searched with numpy.

    Points live in a dict (id -> terms, weights); the postings arrays are rebuilt from
    it on the first search after a write, which costs milliseconds, not a scroll.
    """

    def __init__(self, points: Iterable[tuple[str, SparseTerms]] = ()):
        self._docs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._postings: _Postings | None = None
        self.upsert(points)

    @classmethod
    def from_collection(cls, client: QdrantClient, collection: str, vector_name: str,
                        page: int = 2048) -> "SparseIndex":
        """Read every point's `vector_name` vector: a collection scroll, once."""
        points, offset = [], None
        while True:
            records, offset = client.scroll(collection, limit=page, offset=offset, with_payload=False,
                                            with_vectors=[vector_name])
            for r in records:
                vector = (r.vector or {}).get(vector_name)
                if vector is not None:  # a point without it is outside the BM25 corpus, as in Qdrant
                    points.append((str(r.id), (vector.indices, vector.values)))
            if offset is None:
                return cls(points)

    def __len__(self) -> int:
        return len(self._docs)

    def upsert(self, points: Iterable[tuple[str, SparseTerms]]) -> None:
        for point_id, (indices, values) in points:
            self._docs[point_id] = (np.asarray(indices, dtype=np.int64), np.asarray(values, dtype=np.float64))
        self._postings = None

    def delete(self, ids: Iterable[str]) -> None:
        for point_id in ids:
            self._docs.pop(point_id, None)
        self._postings = None

    def search(self, query: SparseTerms, limit: int,
               allowed: Collection[str] | None = None) -> list[tuple[str, float]]:
        """The `limit` best (point id, score) pairs, best first; only ids in `allowed` if given."""
        postings = self._postings
        if postings is None:
            postings = self._postings = _Postings.build(self._docs)
        n = len(postings.ids)
        if limit < 1 or n == 0:
            return []
        scores, matched = np.zeros(n), np.zeros(n, dtype=bool)
        for term, weight in sorted(zip(query[0], query[1])):  # local mode adds in ascending term order
            at = int(np.searchsorted(postings.vocab, term))
            if at == len(postings.vocab) or postings.vocab[at] != term:
                continue  # no point holds it: nothing to add
            lo, hi = postings.starts[at], postings.starts[at + 1]
            df = int(hi - lo)
            idf = math.log((n - df + 0.5) / (df + 0.5) + 1)
            rows = postings.rows[lo:hi]
            scores[rows] += (float(weight) * idf) * postings.weights[lo:hi]  # float64, as Python floats
            matched[rows] = True
        rows = np.flatnonzero(matched)
        if allowed is not None:
            rows = rows[np.fromiter((postings.ids[r] in allowed for r in rows), dtype=bool, count=len(rows))]
        hits = scores[rows].astype(np.float32)
        if len(rows) > limit:
            # the limit best, plus every point tied with the last of them, so ids break the tie
            cut = hits[np.argpartition(-hits, limit - 1)[:limit]].min()
            rows, hits = rows[hits >= cut], hits[hits >= cut]
        order = np.lexsort((rows, -hits))[:limit]
        return [(postings.ids[rows[i]], float(hits[i])) for i in order]


class SparseIndexes:
    """An embedded store's BM25 side: a `SparseIndex` per collection and the ids each filter allows.

    An index loads on its collection's first sparse search and then follows the store's
    writes, which are all the writes there are (an embedded store has one process).
    Filters are evaluated by Qdrant (a scroll), so their semantics stay Qdrant's; the
    allowed ids are kept per (collection, filter), as a conversation repeats its filter.
    """

    def __init__(self, vector_name: str, filters_kept: int = 64):
        self.vector_name = vector_name
        self.filters_kept = filters_kept
        self._indexes: dict[str, SparseIndex] = {}
        self._allowed: dict[tuple[str, str], frozenset[str]] = {}

    def search(self, client: QdrantClient, collection: str, query: SparseTerms, limit: int,
               query_filter: models.Filter | None = None) -> list[models.ScoredPoint]:
        """Hits as the ScoredPoints Qdrant's own sparse query returns, payload still to fetch."""
        if collection not in self._indexes:
            self._indexes[collection] = SparseIndex.from_collection(client, collection, self.vector_name)
        allowed = self._allowed_ids(client, collection, query_filter) if query_filter else None
        hits = self._indexes[collection].search(query, limit, allowed)
        return [models.ScoredPoint(id=point_id, version=0, score=score) for point_id, score in hits]

    def upsert(self, collection: str, points: Iterable[tuple[str, SparseTerms]]) -> None:
        if collection in self._indexes:
            self._indexes[collection].upsert(points)
        self._forget_filters(collection)

    def delete(self, collection: str, ids: Iterable[str]) -> None:
        if collection in self._indexes:
            self._indexes[collection].delete(ids)
        self._forget_filters(collection)

    def forget(self, collection: str | None = None) -> None:
        """Drop what is held for `collection` (all of them if None): it was dropped, created or closed."""
        if collection is None:
            self._indexes.clear()
            self._allowed.clear()
        else:
            self._indexes.pop(collection, None)
            self._forget_filters(collection)

    def _forget_filters(self, collection: str) -> None:
        self._allowed = {key: ids for key, ids in self._allowed.items() if key[0] != collection}

    def _allowed_ids(self, client: QdrantClient, collection: str, query_filter: models.Filter) -> frozenset[str]:
        key = (collection, query_filter.model_dump_json())
        if key not in self._allowed:
            if len(self._allowed) >= self.filters_kept:
                self._allowed.pop(next(iter(self._allowed)))  # the oldest
            ids, offset = set(), None
            while True:
                points, offset = client.scroll(collection, scroll_filter=query_filter, limit=4096, offset=offset,
                                               with_payload=False, with_vectors=False)
                ids.update(str(p.id) for p in points)
                if offset is None:
                    break
            self._allowed[key] = frozenset(ids)
        return self._allowed[key]
