"""`raystorm bench multihop --dataset DIR --strategy S [--limit N] --out FILE.jsonl`.

Ingests the set's corpus once (a collection in the data dir; re-ingesting is a
no-op), then answers the questions in parallel on `Hopper` actors over one
`CorpusPool`, writing one JSON line per question as it finishes. Questions
already in FILE are skipped, so a rerun resumes. The last line printed is the
JSON summary over every question of the run in FILE.

Without --llm every step runs on the offline extractive model. With an LLM
endpoint the same command measures the LLM strategies (API keys from the
environment; completions cached in the data dir, so a rerun replays them):

    export OPENAI_API_KEY=...
    raystorm bench multihop --dataset ../shared/data/musique --strategy chain \
        --out musique-chain-4o-mini.jsonl --llm openai:gpt-4o-mini --max-iter 7
    # a local OpenAI-compatible server (vLLM, Ollama, llama.cpp), more questions in flight:
    raystorm bench multihop ... --llm MODEL --llm-base-url http://localhost:8000/v1 --concurrency 16
    # one role on another model (roles: route plan read filter reflect answer):
    raystorm bench multihop ... --llm openai:gpt-4o-mini --role-llm answer=openai:gpt-4o

DeepSearcher reports Recall@5 rising from 0.685 (naive) to 0.94 with
gpt-4o-mini at 7 iterations on 2WikiMultiHopQA; `--max-iter 7` is that setting.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import time
from pathlib import Path

from cluster.commands.common import add_store_arguments, collection_name, count, info, store_settings


def register(sub: argparse._SubParsersAction) -> None:
    from cluster.commands.ask import confidence

    p = sub.add_parser("bench", help="benchmarks (multihop)")
    kinds = p.add_subparsers(dest="bench", metavar="BENCH")
    m = kinds.add_parser(
        "multihop", help="multi-hop QA on a dataset folder: Recall@k, EM/F1, abstention, calibration, tokens, latency",
        description="Answer a multi-hop set (a folder with questions.json + corpus.json in the MuSiQue or "
                    "HotpotQA layout) in parallel on Ray and score retrieval (Recall@2/@5 of the gold "
                    "supporting passages) and answers (SQuAD EM/F1 with aliases).",
        epilog="With an LLM: add --llm openai:gpt-4o-mini (OPENAI_API_KEY), or --llm MODEL --llm-base-url "
               "http://host:8000/v1 for an OpenAI-compatible server; --role-llm ROLE=SPEC per role "
               "(route plan read filter reflect answer). DeepSearcher's setting for its 0.94 Recall@5 on "
               "2WikiMultiHopQA (gpt-4o-mini) is --max-iter 7.")
    m.add_argument("--dataset", required=True, metavar="DIR", help="folder with questions.json and corpus.json")
    m.add_argument("--strategy", choices=["auto", "chain", "deep", "naive"], default="chain")
    m.add_argument("--limit", type=count(1), default=None, metavar="N", help="only the first N questions")
    m.add_argument("--out", required=True, metavar="FILE.jsonl",
                   help="one JSON line per question; questions already in it are skipped")
    m.add_argument("--collection", metavar="NAME", type=collection_name,
                   help="collection for the corpus (default: bench-<set>-<hash of its path>)")
    m.add_argument("--max-iter", type=count(1), default=None, metavar="N",
                   help="hops (chain, default 4) or search rounds (deep, default 3)")
    m.add_argument("--early-stop", action="store_true", help="chain: stop once the hops are judged sufficient")
    m.add_argument("--min-confidence", type=confidence, default=None, metavar="P",
                   help="abstain below this confidence, 0-1 (default: the threshold chosen on the dev sets)")
    m.add_argument("--hoppers", type=count(1), default=None, metavar="N",
                   help="Hopper actors (default: the cluster's CPUs, at most 4)")
    m.add_argument("--concurrency", type=count(1), default=8, metavar="N", help="questions in flight (default 8)")
    m.add_argument("--question-timeout", type=float, default=600.0, metavar="SECONDS",
                   help="limit for one question (default 600)")
    m.add_argument("--address", metavar="ADDR", help="a Ray cluster to join (default: a local Ray)")
    from agents.lm.arguments import add_llm_arguments

    add_llm_arguments(m)
    add_store_arguments(m)
    m.set_defaults(func=run_multihop)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def default_collection(folder: str, name: str) -> str:
    return f"bench-{name}-{hashlib.sha256(folder.encode()).hexdigest()[:8]}"


def run_multihop(args: argparse.Namespace) -> int:
    from agents.lm.arguments import settings_from_args
    from agents.multihop.evaluation import read_records
    from agents.multihop.strategies import MultihopSettings
    from retrieval.datasets import load_multihop_set
    from retrieval.errors import UsageError

    if args.max_iter is not None and args.strategy == "naive":
        raise UsageError("--max-iter does not apply to naive (one search); drop it or pick another --strategy")
    if args.early_stop and args.strategy not in ("chain", "auto"):
        raise UsageError("--early-stop applies to the chain strategy only (--strategy chain or auto)")
    settings = store_settings(args)
    llm = settings_from_args(args)  # refuses bad LLM options before any work
    dataset = load_multihop_set(args.dataset)
    questions = dataset.questions[: args.limit] if args.limit else dataset.questions
    out = Path(args.out).expanduser().resolve()
    if out.is_dir():
        raise UsageError(f"--out {args.out}: is a folder; give a .jsonl file (created if missing)")
    out.parent.mkdir(parents=True, exist_ok=True)
    done = read_records(out)
    other = sorted({r.strategy for r in done.values()} - {args.strategy})
    if other and args.strategy != "auto":
        raise UsageError(f"{out} holds answers of strategy {', '.join(other)}, not {args.strategy}: "
                         "give each strategy its own --out file")
    todo = [q for q in questions if q.id not in done]
    info(f"{dataset.name}: {len(questions)} questions, {len(questions) - len(todo)} already in {out.name}")
    multihop = MultihopSettings()
    if args.max_iter is not None:
        multihop.chain.max_iter = multihop.deep.max_iter = args.max_iter
    multihop.chain.early_stop = args.early_stop
    if args.min_confidence is not None:
        multihop.answer.min_confidence = args.min_confidence
    collection = args.collection or default_collection(dataset.folder, dataset.name)
    _ingest(settings, dataset, collection)
    started = time.perf_counter()
    if todo:
        asyncio.run(_answer_all(args, settings, llm, multihop, collection, todo, out))
    return _report(out, questions, time.perf_counter() - started)


def _ingest(settings, dataset, collection: str) -> None:
    from retrieval.ingest import Ingestor

    ingestor = Ingestor(settings, max_words=dataset.max_words)
    try:  # in the driver, before the corpus actor opens the store: embedded Qdrant has one owner
        summary = ingestor.ingest_documents(dataset.documents, collection)
    finally:
        ingestor.store.close()
    info(f"corpus in '{collection}': {summary.line()}")


async def _answer_all(args, settings, llm, multihop, collection: str, todo, out: Path) -> None:
    from actors.corpus import CorpusPool
    from actors.hopper import HopperPool, HopperRecipe
    from actors.pool import default_pool_size
    from agents.multihop.evaluation import BenchRecord, append_record
    from cluster.runtime import connect
    from retrieval.config import data_home
    from retrieval.errors import RaystormError

    keys = llm.api_key_env()  # actors on other nodes read the API keys from their environment
    cluster = connect(args.address, runtime_env={"env_vars": keys} if keys else None)
    info(cluster.line())
    corpus = CorpusPool(settings, collection, size=default_pool_size(0.5, at_most=4))
    corpus.wait_ready()
    cache_dir = str(data_home(settings.data_dir) / "cache" / "llm")
    hoppers = HopperPool(HopperRecipe(llm=llm, multihop=multihop, cache_dir=cache_dir), corpus.retriever(),
                         size=args.hoppers or default_pool_size(1.0, at_most=4), concurrency=args.concurrency,
                         timeout_s=args.question_timeout)
    hoppers.wait_ready()
    finished = failed = 0

    async def one(question) -> None:
        nonlocal finished, failed
        try:
            result = await hoppers.answer(question.question, args.strategy)
        except RaystormError as exc:  # one question's failure is reported; the others go on
            failed += 1
            info(f"question {question.id} failed: {exc}")
            return
        append_record(out, BenchRecord.score(question, result.answer, result.tokens, result.latency_s))
        finished += 1
        if finished % 10 == 0 or finished + failed == len(todo):
            info(f"{finished}/{len(todo)} answered" + (f", {failed} failed (rerun to retry them)" if failed else ""))

    try:
        await asyncio.gather(*(one(q) for q in todo))
    finally:
        hoppers.kill()
        corpus.kill()


def _report(out: Path, questions, wall_s: float) -> int:
    from agents.multihop.evaluation import read_records, summarize

    records = read_records(out)
    mine = [records[q.id] for q in questions if q.id in records]
    summary = summarize(mine, wall_s=wall_s)
    print(summary.line(), flush=True)
    return 0 if summary.n == len(questions) else 1
