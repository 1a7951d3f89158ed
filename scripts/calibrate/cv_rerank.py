#!/usr/bin/env python3
"""Choose the reranker's weights by cross-validation on the multi-hop dev sets, and say whether it wins.

For each set (MuSiQue, HotpotQA) the corpus is ingested into a temporary embedded store and
every question runs once through the first stage (hybrid search, `SearchSettings()`),
k * depth candidates deep; the reranker's features (`retrieval.rerank.features`) are computed
once per question. Then a grid of weights is scored offline: 5-fold cross-validation by
question over both sets together (folds drawn within each set), the weights with the best
mean Recall@5 (+ Recall@2 / 10 to break ties) on the other folds scored on the held-out one.
Printed per set: first-stage and reranked Recall@2/@5, in-sample and cross-validated, the
weights chosen on all questions, and the reranker's latency per query.

usage: python -m scripts.calibrate.cv_rerank [--data DIR] [--sets musique hotpotqa] [--depth 4] [--folds 5]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

from retrieval.config import StoreSettings  # noqa: E402
from retrieval.datasets import load_multihop_set, recall_at_k  # noqa: E402
from retrieval.ingest import Ingestor  # noqa: E402
from retrieval.rerank import FEATURES, RerankSettings, features, order  # noqa: E402
from retrieval.search import Corpus, SearchSettings  # noqa: E402

KS = (2, 5)
AXES = {"first": [0.0, 0.5, 1.0, 2.0], "passage": [0.0, 0.5, 1.0], "sentence": [0.0, 0.5, 1.0],
        "terms": [0.0, 0.5, 1.0], "title": [0.0, 0.5, 1.0], "proximity": [0.0, 0.25, 0.5]}


def prepare(data: Path, name: str, depth: int) -> list[dict]:
    """Per question: its candidates (first-stage order), their features, the question, and seconds spent."""
    dataset = load_multihop_set(data / name)
    out = []
    with tempfile.TemporaryDirectory(prefix="raystorm-cv-rerank-") as tmp:
        settings = StoreSettings.resolve(data_dir=tmp, qdrant_url=None)
        ingestor = Ingestor(settings, max_words=dataset.max_words)
        ingestor.ingest_documents(dataset.documents, dataset.name)
        corpus = Corpus(settings, dataset.name, store=ingestor.store, dense=ingestor.dense, sparse=ingestor.sparse,
                        search=SearchSettings())
        for q in dataset.questions:
            hits = corpus.search(q.question, k=max(KS) * depth)
            started = time.perf_counter()
            x = features(q.question, [h.passage for h in hits], ingestor.dense.embed)
            out.append({"set": name, "question": q, "hits": hits, "x": x,
                        "seconds": time.perf_counter() - started})
        corpus.close()
    return out


def recalls(item: dict, settings: RerankSettings | None) -> tuple[float, float]:
    hits = item["hits"] if settings is None else [item["hits"][i] for i in order(item["x"], settings)]
    return tuple(recall_at_k(hits, item["question"], k) for k in KS)


def grid() -> list[RerankSettings]:
    keys = list(AXES)
    out = [RerankSettings(**dict(zip(keys, v))) for v in itertools.product(*(AXES[k] for k in keys))]
    return [s for s in out if s.weights().any()]


def objective(table: np.ndarray, rows: list[int]) -> float:
    """Mean Recall@5, Recall@2 / 10 breaking ties."""
    return float(table[rows, 1].mean() + table[rows, 0].mean() / 10)


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sets", nargs="+", default=["musique", "hotpotqa"])
    parser.add_argument("--depth", type=int, default=4, help="candidates per query: max k * depth")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    items = [it for name in args.sets for it in prepare(args.data, name, args.depth)]
    settings = grid()
    # scores[s, i] = (R@2, R@5) of setting s on question i
    scores = np.array([[recalls(it, s) for it in items] for s in settings])
    base = np.array([recalls(it, None) for it in items])
    rng = random.Random(args.seed)
    fold_of = [0] * len(items)
    for name in args.sets:  # folds drawn within each set, so each fold holds both kinds of question
        idx = [i for i, it in enumerate(items) if it["set"] == name]
        rng.shuffle(idx)
        for j, i in enumerate(idx):
            fold_of[i] = j % args.folds
    cv = np.zeros((len(items), 2))
    chosen_per_fold = []
    for f in range(args.folds):
        train = [i for i in range(len(items)) if fold_of[i] != f]
        test = [i for i in range(len(items)) if fold_of[i] == f]
        best = max(range(len(settings)), key=lambda s: (round(objective(scores[s], train), 9), -s))
        cv[test] = scores[best][test]
        chosen_per_fold.append(settings[best])
    everything = list(range(len(items)))
    best_all = max(range(len(settings)), key=lambda s: (round(objective(scores[s], everything), 9), -s))
    print(f"\n{len(settings)} weight settings, {args.folds}-fold CV by question, depth {args.depth}")
    print(f"{'set':<10} {'first R@2':>9} {'R@5':>6}   {'in-sample R@2':>13} {'R@5':>6}   {'CV R@2':>6} {'R@5':>6}"
          f"   {'rerank ms/query':>15}")
    for name in args.sets:
        rows = [i for i, it in enumerate(items) if it["set"] == name]
        ms = statistics.mean(items[i]["seconds"] for i in rows) * 1000
        print(f"{name:<10} {base[rows, 0].mean():>9.3f} {base[rows, 1].mean():>6.3f}   "
              f"{scores[best_all][rows, 0].mean():>13.3f} {scores[best_all][rows, 1].mean():>6.3f}   "
              f"{cv[rows, 0].mean():>6.3f} {cv[rows, 1].mean():>6.3f}   {ms:>15.1f}")
    for f, s in enumerate(chosen_per_fold):
        print(f"fold {f + 1}: " + ", ".join(f"{k}={getattr(s, k)}" for k in FEATURES))
    s = settings[best_all]
    print("chosen on all questions: " + ", ".join(f"{k}={getattr(s, k)}" for k in FEATURES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
