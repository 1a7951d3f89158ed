"""The embedded store at scale: Qdrant Edge (raystorm's engine) beside qdrant-client's local mode (the
engine before it), on real dev passages repeated with variations.

The MuSiQue and HotpotQA dev passages are embedded once (dense all-MiniLM-L6-v2 + BM25); a collection of
N passages repeats them, each copy with its own text variant (a copy number in the text, so its BM25
vector differs) and its dense vector moved by small noise. Each engine and size runs in a process of its
own (so its peak RSS is its own): write every point, build the index (Edge: `optimize`; local mode has
none), close and reopen, then the hybrid queries (dense + BM25 prefetch, RRF fusion in the engine) with
the dev questions' own vectors (--queries, default 100).

    python -m scripts.bench_store                          # 10k, 100k, 300k; local mode up to 100k
    python -m scripts.bench_store --sizes 10000 --local-max 10000
    python -m scripts.bench_store --sizes 10000 100000 --local-max 0 --search-threads 1 0   # Edge's threads

Ends with one JSON line per engine and size:
{"engine": ..., "passages": N, "write_s": ..., "index_s": ..., "reopen_s": ..., "query_p50_ms": ...,
 "query_p95_ms": ..., "query_cpu_ms": ..., "rss_mb": ..., "rss_before_store_mb": ...}
(query_cpu_ms: the process's CPU per query, search threads included; Edge's lines also carry "search_threads";
rss_mb: the child's peak, the store's own share being rss_mb - rss_before_store_mb, the models and the dev
vectors the rest)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from retrieval.edge import SEARCH_THREADS

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def embed_dev(cache: Path) -> Path:
    """The dev passages and questions, embedded once (cached in `cache`)."""
    out = cache / "dev_vectors.npz"
    if out.is_file():
        return out
    from retrieval.config import StoreSettings
    from retrieval.datasets import load_multihop_set
    from retrieval.embeddings import DenseEmbedder

    settings = StoreSettings.resolve()
    dense = DenseEmbedder(settings.dense_model, settings.models_dir)
    texts, questions = [], []
    for name in ("musique", "hotpotqa"):
        dev = load_multihop_set(DATA / name)
        texts += ["\n".join(s.text for s in d.segments) for d in dev.documents]
        questions += [q.question for q in dev.questions]
    vectors = np.asarray(dense.embed(texts), dtype=np.float32)
    qvectors = np.asarray(dense.embed(questions), dtype=np.float32)
    np.savez(out, vectors=vectors, qvectors=qvectors, texts=np.asarray(texts, dtype=object),
             questions=np.asarray(questions, dtype=object), allow_pickle=True)
    return out


def points(base: dict, n: int, batch: int = 2000):
    """N points in batches: dev passage i % len, copy i // len, its own text and a nudged vector."""
    from qdrant_client import models

    from retrieval.embeddings import SparseEmbedder
    from retrieval.config import StoreSettings

    sparse = SparseEmbedder(StoreSettings.resolve().models_dir)
    texts, vectors = base["texts"], base["vectors"]
    rng = np.random.default_rng(7)
    for start in range(0, n, batch):
        idx = np.arange(start, min(n, start + batch))
        chunk_texts = [f"{texts[i % len(texts)]} (copy {i // len(texts)})" for i in idx]
        dense = vectors[idx % len(texts)] + rng.normal(0, 0.01, (len(idx), vectors.shape[1])).astype(np.float32)
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        sparse_vectors = sparse.embed(chunk_texts)
        yield [models.PointStruct(id=str(uuid.UUID(int=int(i) + 1)), payload={
            "text": t, "path": f"/corpus/doc-{i // 20}.md", "doc_id": f"d{i // 20}", "title": t[:40], "tags": []},
            vector={"dense": d.tolist(), "bm25": models.SparseVector(indices=s[0], values=s[1])})
            for i, t, d, s in zip(idx, chunk_texts, dense, sparse_vectors)]


def run_one(engine: str, n: int, npz: Path, queries: int, threads: int) -> dict:
    from qdrant_client import QdrantClient, models

    import retrieval.edge
    from retrieval.config import StoreSettings
    from retrieval.edge import EdgeClient
    from retrieval.embeddings import SparseEmbedder

    retrieval.edge.SEARCH_THREADS = threads

    base = dict(np.load(npz, allow_pickle=True))
    SparseEmbedder(StoreSettings.resolve().models_dir).embed(["warm up"])  # its model is in both engines' RSS
    base_mb = _rss_mb()
    work = Path(tempfile.mkdtemp(prefix=f"bench-store-{engine}-"))

    def open_client():
        return EdgeClient(work / "edge") if engine == "edge" else QdrantClient(path=str(work / "qdrant"))

    client = open_client()
    client.create_collection("c", vectors_config={"dense": models.VectorParams(size=base["vectors"].shape[1],
                                                                                distance=models.Distance.COSINE)},
                             sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)})
    started = time.perf_counter()
    for batch in points(base, n):
        client.upsert("c", points=batch, wait=True)
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    if engine == "edge":
        client.create_payload_index("c", "path")
        client.optimize("c")
    index_s = time.perf_counter() - started
    client.close()
    started = time.perf_counter()
    client = open_client()
    client.count("c", exact=True)
    reopen_s = time.perf_counter() - started
    sparse = SparseEmbedder(StoreSettings.resolve().models_dir)
    questions, qvectors = list(base["questions"]), base["qvectors"]
    qsparse = [sparse.embed_query(q) for q in questions[:queries]]
    times = []
    cpu = time.process_time()
    for i in range(queries):
        j = i % len(qsparse)
        started = time.perf_counter()
        client.query_points("c", prefetch=[
            models.Prefetch(query=qvectors[j].tolist(), using="dense", limit=40),
            models.Prefetch(query=models.SparseVector(indices=qsparse[j][0], values=qsparse[j][1]), using="bm25",
                            limit=40)], query=models.RrfQuery(rrf=models.Rrf(k=60)), limit=10)
        times.append((time.perf_counter() - started) * 1000)
    cpu_ms = (time.process_time() - cpu) * 1000 / queries
    client.close()
    shutil.rmtree(work, ignore_errors=True)
    times.sort()
    return {"engine": engine, **({"search_threads": threads} if engine == "edge" else {}), "passages": n,
            "write_s": round(write_s, 1), "index_s": round(index_s, 1),
            "reopen_s": round(reopen_s, 2), "query_p50_ms": round(statistics.median(times), 2),
            "query_p95_ms": round(times[int(0.95 * len(times)) - 1], 2), "query_cpu_ms": round(cpu_ms, 2),
            "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), "rss_before_store_mb": base_mb}


def _rss_mb() -> int:
    """This process's resident memory now (MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 300_000])
    p.add_argument("--local-max", type=int, default=100_000,
                   help="largest size local mode runs at (it holds every point in Python; 300k takes hours)")
    p.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "raystorm-bench-store")
    p.add_argument("--queries", type=int, default=100, help="hybrid queries timed per engine and size (default 100)")
    p.add_argument("--search-threads", type=int, nargs="+", default=[SEARCH_THREADS], metavar="N",
                   help=f"Edge's search threads per query, one run each (default {SEARCH_THREADS}, raystorm's; "
                        "0: Edge's own default, a pool of threads per query)")
    p.add_argument("--child", nargs=5, metavar=("ENGINE", "N", "NPZ", "QUERIES", "THREADS"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        engine, n, path, queries, threads = args.child
        print(json.dumps(run_one(engine, int(n), Path(path), int(queries), int(threads))))
        return 0
    args.cache.mkdir(parents=True, exist_ok=True)
    npz = embed_dev(args.cache)
    print(f"# bench_store: load {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs", flush=True)
    for n in args.sizes:
        for engine, threads in [("local", 0)] + [("edge", t) for t in args.search_threads]:
            if engine == "local" and n > args.local_max:
                print(json.dumps({"engine": engine, "passages": n, "skipped": f"above --local-max {args.local_max}"}))
                continue
            done = subprocess.run([sys.executable, __file__, "--child", engine, str(n), str(npz), str(args.queries),
                                   str(threads)], capture_output=True, text=True)
            if done.returncode != 0:
                print(json.dumps({"engine": engine, "passages": n, "error": done.stderr.strip().splitlines()[-1:]}))
            else:
                print(done.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
