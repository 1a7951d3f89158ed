"""Benchmark the actor system against the in-process pipeline: 8 topics x 3 personas.

Both runs research the same topics over the bundled example corpus with the
extractive model, each model call made `--inject-latency-ms` slower, standing in
for a remote LLM (the benchmark knob; off, 0, by default in raystorm itself):

  (a) in-process: `run_report` for one topic after another (personas of a topic
      converse at once, as the pipeline does);
  (b) the actor system: `run_reports_distributed`, every topic and persona at once.

It prints wall seconds for each (for (b) also without the actors' start-up),
the speedup, the number of model calls, and the critical-path lower bound: the
longest chain of calls that must follow one another, times the latency. The
chain is counted per topic from what the run recorded (its conversation log and
its call history), never assumed:

  perspectives + max over personas (that conversation's calls, in order)
  + outline draft + refine + (one section call, sections run at once)
  + lead + one polish call per section (polish goes section by section)

and the bound is the longest topic's chain (topics are independent). Both runs
must write identical artifacts; the script checks that too. Last line: JSON.

    python -m scripts.bench_cluster                          # 100 ms per call
    python -m scripts.bench_cluster --inject-latency-ms 500 --experts 8 --writers 8
    python -m scripts.bench_cluster --address auto           # on a running cluster
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

TOPICS = [
    "Flood rider waiting period",
    "Small business policy revisions",
    "Cyber add-on coverage",
    "Homeowners policy form HM-3",
    "Renters policy",
    "Flood claims handling",
    "Deductible schedule",
    "Company history",
]
SKIP = {"llm_call_history.jsonl", "run_config.json"}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", type=int, default=8, help="how many of the 8 bundled topics (default 8)")
    p.add_argument("--personas", type=int, default=2, help="personas besides the basic fact writer (default 2)")
    p.add_argument("--turns", type=int, default=3, help="questions per conversation (default 3)")
    p.add_argument("--inject-latency-ms", type=float, default=100.0, help="wait per model call (default 100)")
    p.add_argument("--writers", type=int, default=None, help="PersonaWriter actors (default: sized from the cluster)")
    p.add_argument("--experts", type=int, default=None, help="Expert actors (default: sized from the cluster)")
    p.add_argument("--address", default=None, help="join this Ray cluster (default: a local Ray)")
    p.add_argument("--keep", metavar="DIR", help="keep the data dir and both runs' files here")
    return p.parse_args()


def ingest(home: Path):
    import retrieval.config
    from retrieval.config import StoreSettings
    from retrieval.ingest import Ingestor

    settings = StoreSettings.resolve(str(home))
    ingestor = Ingestor(settings)
    try:
        ingestor.ingest_paths([Path(retrieval.config.__file__).parent / "example_corpus"], "example")
    finally:
        ingestor.store.close()
    return settings


def run_in_process(settings, topics, options, latency_s: float, out: Path) -> float:
    """`raystorm report`'s in-process path, one topic after another, with the latency knob."""
    from actors.models import LatencyModel
    from agents.lm.models import RoleModels
    from agents.lm.nlp import TextToolkit
    from agents.lm.settings import LLMSettings
    from agents.runtime import LocalRuntime
    from agents.storm.flow import run_topic
    from retrieval.infotable import AsyncInformationTable, InformationTable
    from retrieval.search import AsyncCorpus, Corpus

    async def run_all() -> float:
        corpus = Corpus(settings, "example")
        corpus.check()
        retriever = AsyncCorpus(corpus)
        models = RoleModels.from_settings(LLMSettings(), nlp=TextToolkit(embed=corpus.dense.embed))
        slow = LatencyModel(models, latency_s) if latency_s else models
        runtime = LocalRuntime(slow, retriever, version=retriever.version, tables=lambda name: AsyncInformationTable(
            InformationTable(corpus.store, name, corpus.dense, corpus.sparse, source="example")))
        started = time.perf_counter()
        try:
            for topic in topics:
                await run_topic(topic, runtime, str(out), options)
            return time.perf_counter() - started
        finally:
            retriever.close()
            corpus.close()

    return asyncio.run(run_all())


def run_distributed(settings, topics, options, args, out: Path) -> tuple[float, float]:
    """Wall seconds of the whole call, and from the moment every actor was up."""
    from cluster.distributed import ClusterPlan, run_reports_distributed

    plan = ClusterPlan(writer_actors=args.writers, expert_actors=args.experts,
                       inject_latency_ms=args.inject_latency_ms)
    ready_at: list[float] = []

    def progress(event) -> None:
        if event.stage == "cluster" and not ready_at:
            ready_at.append(time.perf_counter())

    started = time.perf_counter()
    run_reports_distributed(topics, store=settings, collection="example", out_dir=str(out), options=options,
                            plan=plan, progress=progress, address=args.address)
    ended = time.perf_counter()
    return ended - started, ended - (ready_at[0] if ready_at else started)


def chain_of(folder: Path, turns: int) -> tuple[int, int]:
    """(the topic's longest chain of dependent calls, its calls in all), from its files."""
    calls = [json.loads(line) for line in (folder / "llm_call_history.jsonl").read_text().splitlines()]
    steps: dict[str, int] = {}
    for c in calls:
        steps[c["step"]] = steps.get(c["step"], 0) + 1
    conversations = json.loads((folder / "conversation_log.json").read_text())
    per_persona = []
    for conv in conversations:
        asked = len(conv["dlg_turns"]) + (1 if len(conv["dlg_turns"]) < turns else 0)  # an early thank-you
        answered = sum(1 for t in conv["dlg_turns"] if t["search_results"])
        per_persona.append(asked + len(conv["dlg_turns"]) + answered)  # ask, plan queries, answer
    chain = (steps.get("storm.perspectives", 0)
             # the draft outline is made while the personas converse (agents.storm.flow)
             + max(max(per_persona, default=0), steps.get("storm.outline.draft", 0))
             + steps.get("storm.outline.refine", 0)
             + min(steps.get("storm.article.section", 0), 1)
             # the lead and every section's polish run at once (agents.storm.stages.finish_article)
             + min(max(steps.get("storm.article.lead", 0), steps.get("storm.article.polish", 0)), 1))
    conversation_calls = sum(steps.get(s, 0) for s in ("storm.writer.ask", "storm.expert.queries",
                                                        "storm.expert.answer"))
    if conversation_calls != sum(per_persona):
        raise SystemExit(f"{folder.name}: the call history has {conversation_calls} conversation calls, the "
                         f"conversation log implies {sum(per_persona)}: the chain count is out of date")
    return chain, len(calls)


def artifacts(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file() and p.name not in SKIP}


def main() -> None:
    args = parse_args()
    from agents.storm.flow import ReportOptions

    topics = TOPICS[: args.topics]
    options = ReportOptions(personas=args.personas, turns=args.turns)
    base = Path(args.keep or tempfile.mkdtemp(prefix="raystorm-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        settings = ingest(base / "home")
        latency_s = args.inject_latency_ms / 1000.0
        local_s = run_in_process(settings, topics, options, latency_s, base / "in-process")
        wall_s, running_s = run_distributed(settings, topics, options, args, base / "actors")
        same = artifacts(base / "in-process") == artifacts(base / "actors")
        chains, calls = zip(*(chain_of(base / "actors" / d.name, args.turns)
                              for d in sorted((base / "actors").iterdir()) if d.is_dir()))
        local_calls = sum(chain_of(base / "in-process" / d.name, args.turns)[1]
                          for d in sorted((base / "in-process").iterdir()) if d.is_dir())
        bound_s = max(chains) * latency_s
        print(f"{len(topics)} topics x {args.personas + 1} personas, {args.turns} turns, "
              f"{args.inject_latency_ms:g} ms per model call, {os.cpu_count()} CPUs here")
        print(f"(a) in-process, one topic after another: {local_s:8.2f} s  ({local_calls} model calls)")
        print(f"(b) actor system, all at once:           {wall_s:8.2f} s  ({sum(calls)} model calls); "
              f"{running_s:.2f} s once the actors were up")
        print(f"speedup: {local_s / wall_s:.2f}x ({local_s / running_s:.2f}x without start-up)")
        if bound_s:
            print(f"critical path: {max(chains)} dependent calls x {latency_s * 1000:g} ms = {bound_s:.2f} s "
                  f"lower bound; (b) took {wall_s / bound_s:.2f}x it ({running_s / bound_s:.2f}x without start-up)")
        print(f"artifacts identical: {same}")
        print(json.dumps({"topics": len(topics), "personas": args.personas + 1, "turns": args.turns,
                          "latency_ms": args.inject_latency_ms, "in_process_s": round(local_s, 3),
                          "distributed_s": round(wall_s, 3), "distributed_running_s": round(running_s, 3),
                          "speedup": round(local_s / wall_s, 3), "speedup_running": round(local_s / running_s, 3),
                          "model_calls": sum(calls), "model_calls_in_process": local_calls,
                          "critical_path_calls": max(chains), "critical_path_s": round(bound_s, 3),
                          "identical": same}))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
