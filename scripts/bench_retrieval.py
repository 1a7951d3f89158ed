"""Benchmark the retrieval core on the multi-hop sets: ingest speed, query latency, Recall@k.

For each set folder (questions.json + corpus.json, MuSiQue or HotpotQA layout) it
ingests the corpus into a fresh temporary data dir (embedded Qdrant, the offline
all-MiniLM-L6-v2 int8 model + BM25), then runs every question through each search
mode and prints ingest passages/s, query p50/p95 latency and Recall@2/@5 as a
table, then one JSON line with all figures.

    python -m scripts.bench_retrieval                      # ../shared/data/{musique,hotpotqa}
    python -m scripts.bench_retrieval --sets musique --modes hybrid
    python -m scripts.bench_retrieval --data /path/to/sets --sets my_set
    python -m scripts.bench_retrieval --modes hybrid --rerank   # hybrid beside hybrid + the reranker

`--rerank` adds the `hybrid+rerank` rows: the second stage (`retrieval.rerank`, weights from
`scripts/calibrate/cv_rerank.py`) over the same first stage, its latency included.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from retrieval.config import StoreSettings
from retrieval.datasets import MultihopSet, load_multihop_set, recall_at_k
from retrieval.embeddings import DenseEmbedder
from retrieval.ingest import Ingestor
from retrieval.search import Corpus, SearchSettings
from retrieval.store import PassageStore

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MODES = ("dense", "sparse", "hybrid", "hybrid+mmr", "hybrid+rerank")
KS = (2, 5)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_set(dataset: MultihopSet, modes: list[str], search: SearchSettings, dense_batch: int | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="raystorm-bench-") as tmp:
        settings = StoreSettings.resolve(data_dir=tmp, qdrant_url=None)
        store = PassageStore(settings)
        dense = DenseEmbedder(settings.dense_model, settings.models_dir,
                              **({"batch_size": dense_batch} if dense_batch else {}))
        ingestor = Ingestor(settings, store=store, dense=dense, max_words=dataset.max_words)
        started = time.perf_counter()
        ingestor.dense.dimension, ingestor.sparse.embed_query("warm up")  # load both models
        load_s = time.perf_counter() - started
        cpu = time.process_time()
        summary = ingestor.ingest_documents(dataset.documents, dataset.name)
        cpu = time.process_time() - cpu
        # the first stage alone, and with the second-stage reranker ("+rerank" modes)
        corpora = {flag: Corpus(settings, dataset.name, store=store, dense=ingestor.dense, sparse=ingestor.sparse,
                                search=search.model_copy(update={"rerank": flag})) for flag in (False, True)}
        result = {"set": dataset.name, "documents": summary.documents, "passages": summary.passages,
                  "questions": len(dataset.questions), "model_load_s": round(load_s, 2),
                  "ingest_s": round(summary.seconds, 2), "ingest_cpu_s": round(cpu, 2),
                  "ingest_passages_per_s": round(summary.passages / summary.seconds, 1), "modes": {}}
        for name in modes:
            corpus = corpora[name.endswith("+rerank")]
            first = name.removesuffix("+rerank")
            mode, mmr = first.removesuffix("+mmr"), first.endswith("+mmr")
            corpus.search(dataset.questions[0].question, k=max(KS), mode=mode, mmr=mmr)  # warm-up
            latencies, recalls, cpu = [], {k: [] for k in KS}, time.process_time()
            for question in dataset.questions:
                t0 = time.perf_counter()
                hits = corpus.search(question.question, k=max(KS), mode=mode, mmr=mmr)
                latencies.append((time.perf_counter() - t0) * 1000)
                for k in KS:
                    recalls[k].append(recall_at_k(hits, question, k))
            cpu_ms = (time.process_time() - cpu) * 1000 / len(dataset.questions)
            result["modes"][name] = {"p50_ms": round(percentile(latencies, 0.5), 1),
                                     "p95_ms": round(percentile(latencies, 0.95), 1),
                                     "cpu_ms_per_query": round(cpu_ms, 1),
                                     **{f"recall@{k}": round(statistics.mean(recalls[k]), 3) for k in KS}}
        store.close()
    return result


def print_table(results: list[dict], default_mode: str) -> None:  # default_mode: e.g. "hybrid+rerank"
    print(f"\n{'set':<10} {'mode':<12} {'p50 ms':>7} {'p95 ms':>7} {'cpu ms':>7} {'R@2':>6} {'R@5':>6}")
    for r in results:
        for mode, m in r["modes"].items():
            mark = " (default)" if mode == default_mode else ""
            print(f"{r['set']:<10} {mode:<12} {m['p50_ms']:>7.1f} {m['p95_ms']:>7.1f} {m['cpu_ms_per_query']:>7.1f} "
                  f"{m['recall@2']:>6.3f} {m['recall@5']:>6.3f}{mark}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"folder holding the set folders (default: {DEFAULT_DATA})")
    parser.add_argument("--sets", nargs="+", default=["musique", "hotpotqa"],
                        help="set folders under --data, each with questions.json + corpus.json")
    parser.add_argument("--modes", nargs="+", default=[m for m in MODES if not m.endswith("+rerank")],
                        choices=MODES, help="search modes to run (default: all without the reranker)")
    parser.add_argument("--rerank", action="store_true",
                        help="also run hybrid with the second-stage reranker (retrieval.rerank) beside hybrid")
    parser.add_argument("--fusion-k", type=int, help="override SearchSettings.fusion_k")
    parser.add_argument("--dense-weight", type=float, help="override SearchSettings.dense_weight")
    parser.add_argument("--sparse-weight", type=float, help="override SearchSettings.sparse_weight")
    parser.add_argument("--dense-batch", type=int, help="override DenseEmbedder's batch size")
    args = parser.parse_args(argv)

    overrides = {key: value for key, value in (("fusion_k", args.fusion_k), ("dense_weight", args.dense_weight),
                                               ("sparse_weight", args.sparse_weight)) if value is not None}
    search = SearchSettings(**overrides)
    modes = list(dict.fromkeys([*args.modes, *(["hybrid", "hybrid+rerank"] if args.rerank else [])]))
    # wall-clock figures depend on what else runs: print the load, and CPU time beside wall time
    print(f"search settings: {search.model_dump_json()}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    results = []
    for name in args.sets:
        dataset = load_multihop_set(args.data / name)
        result = bench_set(dataset, modes, search, args.dense_batch)
        print(f"{name}: {result['passages']} passages ingested in {result['ingest_s']:.1f} s "
              f"({result['ingest_passages_per_s']:.0f} passages/s, {result['ingest_cpu_s']:.1f} CPU-s; "
              f"models loaded in {result['model_load_s']:.1f} s)")
        results.append(result)
    print_table(results, search.mode + ("+rerank" if search.rerank else ""))
    print(json.dumps({"bench": "retrieval", "search": search.model_dump(), "load_average": os.getloadavg()[0],
                      "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
