"""Vectors, similarity, MMR and clustering over either sparse bags or dense embeddings.

A `Vector` is a sparse bag (`dict[str, float]`, term → weight) or a dense sequence
of floats; `cosine` takes two of the same kind. Everything here is deterministic:
ties break by input order.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Union

import retrieval.mmr

Dense = Sequence[float]
Sparse = dict[str, float]
Vector = Union[Sparse, Dense]


def idf_table(token_lists: Iterable[Sequence[str]]) -> dict[str, float]:
    """Smoothed inverse document frequency: ln((1 + N) / (1 + df)) + 1."""
    lists = list(token_lists)
    df = Counter(t for tokens in lists for t in set(tokens))
    n = len(lists)
    return {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}


def bag(tokens: Sequence[str], idf: dict[str, float] | None = None) -> Sparse:
    """Sublinear tf (1 + ln tf), times idf when given (unknown terms weigh as the rarest)."""
    top = max(idf.values()) if idf else 1.0
    return {t: (1.0 + math.log(c)) * (idf.get(t, top) if idf else 1.0) for t, c in Counter(tokens).items()}


def cosine(a: Vector, b: Vector) -> float:
    if isinstance(a, dict) != isinstance(b, dict):
        raise TypeError("cosine needs two sparse bags or two dense vectors, not one of each")
    if isinstance(a, dict):
        if len(a) > len(b):
            a, b = b, a
        dot = sum(w * b.get(t, 0.0) for t, w in a.items())
        na = math.sqrt(sum(w * w for w in a.values()))
        nb = math.sqrt(sum(w * w for w in b.values()))
    else:
        if len(a) != len(b):
            raise ValueError(f"dense vectors of different sizes: {len(a)} and {len(b)}")
        dot = sum(x * y for x, y in zip(a, b))
        na = math.sqrt(sum(x * x for x in a))
        nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def mmr(query: Vector, candidates: Sequence[Vector], k: int, lambda_: float = 0.7) -> list[int]:
    """Maximal marginal relevance (Carbonell & Goldstein 1998): indices of up to `k`
    candidates, each maximising λ·sim(query, c) − (1−λ)·max sim(c, already chosen)."""
    return retrieval.mmr.mmr([cosine(query, c) for c in candidates],
                             lambda i, j: cosine(candidates[i], candidates[j]), k, lambda_)


def cluster(vectors: Sequence[Vector], n: int, iterations: int = 10) -> list[list[int]]:
    """Up to `n` groups of indices by spherical k-means, seeded farthest-first from
    item 0 so the result is deterministic. Groups are ordered by their first item."""
    if not vectors:
        return []
    n = max(1, min(n, len(vectors)))
    seeds = [0]
    while len(seeds) < n:
        nearest = [max(cosine(v, vectors[s]) for s in seeds) for v in vectors]
        seeds.append(min((i for i in range(len(vectors)) if i not in seeds), key=lambda i: (nearest[i], i)))
    centroids = [vectors[s] for s in seeds]
    assignment: list[int] = []
    for _ in range(iterations):
        new = [max(range(len(centroids)), key=lambda c: (cosine(v, centroids[c]), -c)) for v in vectors]
        if new == assignment:
            break
        assignment = new
        centroids = [_mean([vectors[i] for i, a in enumerate(assignment) if a == c]) or centroids[c]
                     for c in range(len(centroids))]
    groups = [[i for i, a in enumerate(assignment) if a == c] for c in range(len(centroids))]
    return sorted((g for g in groups if g), key=lambda g: g[0])


def _mean(vectors: list[Vector]) -> Vector | None:
    if not vectors:
        return None
    if isinstance(vectors[0], dict):
        total: Counter[str] = Counter()
        for v in vectors:
            total.update(v)
        return {t: w / len(vectors) for t, w in total.items()}
    return [sum(xs) / len(vectors) for xs in zip(*vectors)]
