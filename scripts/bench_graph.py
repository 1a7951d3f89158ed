"""Evidence graph and wiki figures: build time, edges per type, wiki check time, and "what is current"
accuracy with the graph against the same pipeline ignoring it.

    python -m scripts.bench_graph                    # everything (ingests two corpora: a few minutes)
    python -m scripts.bench_graph --no-answers       # graph and wiki figures only (seconds)

1. Graph build (extraction + resolution, no store) on the bundled corpus and on a synthetic corpus about
   10x its size (scripts/graph_synthetic.py: 18 products x 8 documents = 144), with edge counts per type and, on the synthetic corpus,
   precision/recall of supersedes/amends edges against the edges it was written with.
2. Writing the graph to embedded Qdrant, and an incremental update after one document changes.
3. `wiki check` over a wiki compiled from the bundled corpus (extractive model), median of runs.
4. Accuracy on tests/data/current_questions.json (bundled corpus) and on the synthetic corpus' questions:
   `ask --strategy chain` (extractive) with the graph (search prefers current evidence) and without it.
   Correct: the answer holds the value in force and never states a replaced value except as history
   (framed as such, or in the sentence that gives the value replacing it).
Figures print with the load average: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from scripts.graph_synthetic import write_corpus

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def build_graph(folder: Path):
    from retrieval.graph.extract import document_record
    from retrieval.graph.view import EvidenceGraph
    from retrieval.loaders import load_paths
    from retrieval.splitter import split_document

    docs = [d for d in load_paths([folder]) if hasattr(d, "segments")]
    return EvidenceGraph(document_record(d, split_document(d)) for d in docs), docs


def timed(fn, runs: int):
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def graph_figures(name: str, folder: Path, truth=None) -> dict:
    seconds, (graph, docs) = timed(lambda: build_graph(folder), 5)
    row = {"corpus": name, "documents": len(docs), "passages": sum(len(r.passages) for r in graph.records),
           "build_ms": round(seconds * 1000, 1), "edges": dict(sorted(Counter(e.type for e in graph.edges).items())),
           "via": dict(sorted(Counter(e.via for e in graph.edges).items()))}
    if truth is not None:
        found = {(e.type, e.source, e.target) for e in graph.edges if e.type in ("supersedes", "amends")}
        row["typed_precision"] = round(len(found & truth) / max(len(found), 1), 3)
        row["typed_recall"] = round(len(found & truth) / max(len(truth), 1), 3)
    return row


def correct(answer: str, item: dict) -> tuple[bool, bool]:
    """(holds the value in force, states a replaced value as if in force)."""
    from agents.lm.text.sentences import sentences
    from retrieval.graph.current import is_history

    has_current = any(v.lower() in answer.lower() for v in item["current"])
    # a replaced value is fine as history: framed by the graph, or beside the value that replaced it
    stated_old = any(v.lower() in s.lower() and not is_history(s)
                     and not any(c.lower() in s.lower() for c in item["current"])
                     for s in sentences(answer) for v in item.get("superseded", []))
    return has_current and not stated_old, stated_old


async def answer_all(settings, collection: str, questions: list[dict], prefer_current: bool,
                     depth: int | None = None) -> dict:
    from agents.lm.models import RoleModels
    from agents.multihop.strategies import MultihopSettings, ask
    from retrieval.search import AsyncCorpus, Corpus, SearchSettings

    models = RoleModels.from_settings(__import__("agents.lm.settings", fromlist=["LLMSettings"]).LLMSettings())
    search = SearchSettings(prefer_current=prefer_current)
    if depth is not None:
        search.current_depth = depth
    corpus = Corpus(settings, collection, search=search)
    retriever = AsyncCorpus(corpus)
    good = old = 0
    started = time.perf_counter()
    try:
        for item in questions:
            answer = await ask(item["question"], "chain", models, retriever, MultihopSettings())
            ok, stale = correct(answer.answer, item)
            good, old = good + ok, old + stale
    finally:
        retriever.close()
        await models.close()
    n = len(questions)
    return {"graph": prefer_current, "depth": search.current_depth if prefer_current else None, "n": n,
            "accuracy": round(good / n, 3), "correct": good, "stated_replaced_value": old,
            "seconds": round(time.perf_counter() - started, 1)}


def ingest(settings, folder: Path, collection: str) -> float:
    from retrieval.ingest import Ingestor

    t = time.perf_counter()
    ingestor = Ingestor(settings)
    try:
        ingestor.ingest_paths([folder], collection)
    finally:
        ingestor.store.close()
    return time.perf_counter() - t


def store_figures(settings, folder: Path) -> dict:
    from retrieval.graph.store import GraphStore
    from retrieval.loaders import load_paths
    from retrieval.splitter import split_document
    from retrieval.store import PassageStore

    docs = [d for d in load_paths([folder]) if hasattr(d, "segments")]
    passages = [p for d in docs for p in split_document(d)]
    store = PassageStore(settings)
    try:
        graphs = GraphStore(store)
        t = time.perf_counter()
        graphs.update("graphonly", docs, passages)
        first = time.perf_counter() - t
        target = docs[0]
        Path(target.path).write_text(Path(target.path).read_text() + "\nSee Bulletin 2099-01.\n")
        docs = [d for d in load_paths([folder]) if hasattr(d, "segments")]
        passages = [p for d in docs for p in split_document(d)]
        t = time.perf_counter()
        summary = graphs.update("graphonly", docs, passages)
        again = time.perf_counter() - t
        t = time.perf_counter()
        graphs.load("graphonly")
        read = time.perf_counter() - t
    finally:
        store.close()
    return {"write_all_ms": round(first * 1000, 1), "update_one_changed_ms": round(again * 1000, 1),
            "update": summary.line(), "load_ms": round(read * 1000, 1)}


def main() -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--products", type=int, default=18, help="synthetic products (8 documents each)")
    p.add_argument("--no-answers", action="store_true", help="skip the accuracy runs (they ingest and embed)")
    p.add_argument("--limit", type=int, default=None, help="at most this many questions per set")
    p.add_argument("--cv", action="store_true", help="also cross-validate SearchSettings.current_depth (2 folds)")
    args = p.parse_args()
    from retrieval.config import StoreSettings

    example = ROOT / "retrieval" / "example_corpus"
    work = Path(tempfile.mkdtemp(prefix="bench-graph-"))
    synthetic = work / "synthetic"
    truth, synthetic_questions = write_corpus(synthetic, args.products)
    print(f"# bench_graph ({load()}, {os.cpu_count()} CPUs)")
    for row in (graph_figures("bundled", example), graph_figures("synthetic", synthetic, truth)):
        print(json.dumps(row))
    settings = StoreSettings.resolve(data_dir=str(work / "data"), qdrant_url=None)
    print(json.dumps({"store (synthetic, embedded Qdrant)": store_figures(settings, synthetic), "load": load()}))

    # wiki check on a wiki compiled from the bundled corpus
    from agents.lm.models import RoleModels
    from agents.lm.settings import LLMSettings
    from agents.wiki.build import build_wiki
    from agents.wiki.check import check_folder
    from retrieval.store import PassageStore

    ingest_s = ingest(settings, example, "bundled")
    store = PassageStore(settings)
    models = RoleModels.from_settings(LLMSettings())
    try:
        built = asyncio.run(build_wiki(store, "bundled", work / "wiki", models, models.name))
    finally:
        store.close()
    seconds, report = timed(lambda: check_folder(work / "wiki", write=False), 20)
    print(json.dumps({"wiki": {"pages": built.pages, "claims": built.claims, "build_s": round(built.seconds, 2),
                               "check_ms_median_of_20": round(seconds * 1000, 1), "counts": report.counts},
                      "bundled_ingest_s": round(ingest_s, 1), "load": load()}))
    if args.no_answers:
        return 0
    bundled = json.loads((ROOT / "tests" / "data" / "current_questions.json").read_text())["questions"]
    sets = [("bundled", "bundled", bundled[: args.limit])]
    print(json.dumps({"synthetic_ingest_s": round(ingest(settings, synthetic, "synthetic"), 1), "load": load()}))
    sets.append(("synthetic", "synthetic", synthetic_questions[: args.limit]))
    for name, collection, questions in sets:
        for prefer in (True, False):
            row = asyncio.run(answer_all(settings, collection, questions, prefer))
            print(json.dumps({"questions": name, **row, "load": load()}))
    if args.cv:
        cross_validate_depth(settings, sets)
    return 0


def cross_validate_depth(settings, sets) -> None:
    """2-fold CV of `SearchSettings.current_depth` (candidates read per result slot) over both question sets:
    pick the depth on one half (even/odd questions), score it on the other."""
    depths = (1, 2, 3, 4)
    folds = []
    for half in (0, 1):
        scores = {}
        for d in depths:
            correct = {}
            for name, collection, questions in sets:
                for part in (0, 1):
                    qs = [q for i, q in enumerate(questions) if i % 2 == part]
                    correct[(name, part)] = asyncio.run(answer_all(settings, collection, qs, True, d))["correct"]
            scores[d] = correct
        train = {d: sum(v for (n, p), v in c.items() if p == half) for d, c in scores.items()}
        best = max(depths, key=lambda d: (train[d], -abs(d - 2)))
        test = sum(v for (n, p), v in scores[best].items() if p != half)
        total = sum(len([q for i, q in enumerate(qs) if i % 2 != half]) for _, _, qs in sets)
        folds.append({"train_half": half, "train_correct_by_depth": train, "chosen": best,
                      "held_out_accuracy": round(test / total, 3)})
    print(json.dumps({"cv_current_depth": folds, "load": load()}))


if __name__ == "__main__":
    sys.exit(main())
