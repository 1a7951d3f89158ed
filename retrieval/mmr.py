"""Maximal marginal relevance (Carbonell & Goldstein 1998), the one implementation raystorm uses.

Callers bring their own similarities (cosine of dense vectors, of sparse term
weights, or of sentence embeddings); `mmr` only chooses. Gains are compared
rounded to 1e-6 and ties go to the lower index, so float noise never reorders a
choice between runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def mmr(relevance: Sequence[float], pairwise: Callable[[int, int], float] | Sequence[Sequence[float]], k: int,
        lambda_: float = 0.7, candidates: Sequence[int] | None = None) -> list[int]:
    """Indices of up to `k` of `candidates` (default: all), each maximising
    λ·relevance[i] − (1−λ)·max pairwise(i, already chosen)."""
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"lambda_ must be within [0, 1], got {lambda_}")
    similar = pairwise if callable(pairwise) else (lambda i, j: float(pairwise[i][j]))
    left = list(range(len(relevance))) if candidates is None else list(candidates)
    chosen: list[int] = []
    redundancy = {i: 0.0 for i in left}
    while left and len(chosen) < k:
        best = max(left, key=lambda i: (_rounded(lambda_ * float(relevance[i]) - (1 - lambda_) * redundancy[i]), -i))
        chosen.append(best)
        left.remove(best)
        for i in left:
            redundancy[i] = max(redundancy[i], similar(i, best))
    return chosen


def _rounded(x: float) -> float:
    return math.floor(x * 1e6 + 0.5) / 1e6
