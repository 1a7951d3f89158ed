"""Answers per kind of corpus: answered share, accuracy of the answered, accuracy over all, calibration, held out.

    python -m scripts.bench_answers      # musique, hotpotqa (../shared/data), regulatory, prose, fresh, fifth, sixth
    python -m scripts.bench_answers --sets regulatory prose fresh fifth sixth CFR_DIR   # the six document families
    python -m scripts.bench_answers --sets regulatory --limit 20
    PYTHONPATH=CHECKOUT python -m scripts.bench_answers --out-dir bench-answers-before   # another checkout's code

Each set is ingested in this process (a multi-hop set from its corpus.json; the regulatory set from its
Markdown files, so the evidence graph orders its editions) and every question is asked with the chain
strategy and the extractive model; one JSON line per question goes to OUT_DIR/<set>.jsonl (a rerun reuses it:
delete the file to measure again). Then the abstention threshold is chosen leaving one family out: each set
(a family of documents written one way: the generator's templates `regulatory`, the hand-written `prose`
family in tests/data/regulatory_prose, the hand-written `fresh`, `fifth` and `sixth` families in
tests/data/regulatory_fresh, regulatory_fifth and regulatory_sixth (each written after the rules of its day, to measure them out
of sample once), the public-domain Regulation C editions that
scripts/calibrate/make_cfr_family.py builds, MuSiQue, HotpotQA) is answered at the threshold that maximised
the other sets' utility (a right answer +1, a wrong one -1, an abstention 0), so no family is scored at a
threshold it chose. Per family: the reliability table (confidence bucket: how many, how many right) and
the share right among the answers above the threshold, which should be at least the threshold. Each line also holds the evidence the answer layer read (but for a change, which
is two answers), so `scripts/calibrate/calibrate_answers.py OUT_DIR/*.jsonl` refits the weights on all sets. Right: F1 >= 0.5 on the multi-hop sets; on the regulatory set, the answer states the
gold value, normalised ("$300" = "three hundred dollars"), and for a change both values, old then new.
The scoring reads this checkout's agents/answer/values.py whatever code answers.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
REGULATORY = ROOT / "tests" / "data" / "regulatory"
PROSE = ROOT / "tests" / "data" / "regulatory_prose"
FRESH = ROOT / "tests" / "data" / "regulatory_fresh"
FIFTH = ROOT / "tests" / "data" / "regulatory_fifth"
SIXTH = ROOT / "tests" / "data" / "regulatory_sixth"
FOLDS = 5
THRESHOLDS = [round(0.05 * i, 2) for i in range(0, 20)]  # scripts/calibrate/calibrate_answers.py's grid (not imported:
# it needs this checkout's agents, and the answering code may be another checkout's)


def _own_values():
    """This checkout's value grammar, under its own name (the answering code may be another checkout's)."""
    spec = importlib.util.spec_from_file_location("bench_values", ROOT / "agents" / "answer" / "values.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_values"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


VALUES = _own_values()


def right_value(answer: str | None, golds: list[str], kind: str) -> bool:
    """A named-edition or current answer states the gold value; a change states both, in order."""
    if not answer:
        return False
    stated = VALUES.values_in(answer)
    wanted = [VALUES.parse_value(g) for g in golds]
    if kind != "change":
        return any(VALUES.same_value(w, s) for w in wanted if w for s in stated)
    if all(w and wanted[0] and VALUES.same_value(w, wanted[0]) for w in wanted) and answer.startswith("unchanged"):
        return any(VALUES.same_value(wanted[0], s) for s in stated)  # "unchanged: $44 million in both"
    at = -1
    for w in wanted:
        found = [i for i, s in enumerate(stated) if i > at and w and VALUES.same_value(w, s)]
        if not found:
            return False
        at = found[0]
    return True


def load_questions(name: str, data: Path) -> tuple[list[dict], object]:
    """(questions as {id, question, answers, kind, fold}, what to ingest: documents or Markdown paths)."""
    folder = {"regulatory": REGULATORY, "prose": PROSE, "fresh": FRESH, "fifth": FIFTH,
              "sixth": SIXTH}.get(name) or Path(name)
    if (folder / "docs").is_dir():  # Markdown documents and their questions (another set like the regulatory one)
        raw = json.loads((folder / "questions.json").read_text(encoding="utf-8"))["questions"]
        return raw, sorted((folder / "docs").glob("*.md"))
    from retrieval.datasets import load_multihop_set

    dataset = load_multihop_set(data / name)
    return ([{"id": q.id, "question": q.question, "answers": q.answers, "kind": "multihop", "fold": i % FOLDS}
             for i, q in enumerate(dataset.questions)], dataset.documents)


async def answer_all(settings, collection: str, questions: list[dict], out: Path, concurrency: int) -> None:
    from agents.answer.layer import evidence_of
    from agents.lm.extractive import ExtractiveModel
    from agents.lm.nlp import TextToolkit
    from agents.multihop.metrics import f1_score
    from agents.multihop.strategies import MultihopSettings, ask
    from retrieval.search import AsyncCorpus, Corpus

    lm = ExtractiveModel(TextToolkit())
    retriever = AsyncCorpus(Corpus(settings, collection))
    multihop = MultihopSettings()
    multihop.answer.min_confidence = 0.0  # the threshold is chosen here, by cross-validation
    gate = asyncio.Semaphore(concurrency)

    async def one(q: dict) -> None:
        async with gate:
            a = await ask(q["question"], "chain", lm, retriever, multihop)
        said = a.short_answer or a.guess or ""
        right = right_value(said, q["answers"], q["kind"]) if q["kind"] != "multihop" else \
            f1_score(said, q["answers"]) >= 0.5
        record = {"id": q["id"], "kind": q["kind"], "fold": q["fold"], "question": q["question"], "answer": said,
                  "golds": q["answers"], "verified": not a.abstained, "confidence": a.confidence or 0.0,
                  "right": right, "f1": f1_score(said, q["answers"]) if said else 0.0,
                  "reason": a.abstain_reason or ""}
        if q["kind"] != "change":  # what the answer layer read, for scripts/calibrate/calibrate_answers.py
            # as the layer read it: the strategy's own span, not the short answer the layer put in its place
            before = a.model_copy(update={"short_answer": a.strategy_span})
            record["evidence"] = evidence_of(before)[0].model_dump(mode="json")
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    try:
        await asyncio.gather(*(one(q) for q in questions))
    finally:
        retriever.close()


def run_set(name: str, args) -> list[dict]:
    out = Path(args.out_dir) / f"{Path(name).name}.jsonl"
    questions, corpus = load_questions(name, Path(args.data))
    questions = questions[: args.limit] if args.limit else questions
    done = {}
    if out.exists():
        done = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    todo = [q for q in questions if q["id"] not in done]
    if todo:
        from retrieval.config import StoreSettings
        from retrieval.ingest import Ingestor

        settings = StoreSettings.resolve(args.data_dir)
        collection = f"bench-answers-{Path(name).name}"
        ingestor = Ingestor(settings)
        try:
            if isinstance(corpus, list) and corpus and isinstance(corpus[0], Path):
                ingestor.ingest_paths(corpus, collection, prune=True)
            else:
                ingestor.ingest_documents(corpus, collection)
        finally:
            ingestor.store.close()
        asyncio.run(answer_all(settings, collection, todo, out, args.concurrency))
        done = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    for r in done.values():  # scored again by this checkout's rules, whatever scored it when it was written
        if r["kind"] != "multihop":
            r["right"] = right_value(r["answer"], r["golds"], r["kind"])
    return [done[q["id"]] for q in questions if q["id"] in done]


def utility(records: list[dict], t: float) -> float:
    return sum(1 if r["right"] else -1 for r in records if r["verified"] and r["confidence"] >= t)


def choose(records: list[dict]) -> float:
    return max(THRESHOLDS, key=lambda t: (utility(records, t), -t))


def figures(records: list[dict], threshold: float) -> dict:
    answered = [r for r in records if r["verified"] and r["confidence"] >= threshold]
    mean = lambda xs: round(statistics.fmean(xs), 3) if xs else 0.0  # noqa: E731
    out = {"n": len(records), "threshold": threshold, "answered": mean([r in answered for r in records]),
           "right_of_answered": mean([r["right"] for r in answered]),
           "right_of_all": mean([r["right"] and r in answered for r in records]),
           "right_no_abstention": mean([r["right"] for r in records]),
           "F1_no_abstention": mean([r["f1"] for r in records])}
    kinds = sorted({r["kind"] for r in records} - {"multihop"})
    for kind in kinds:  # the regulatory kinds: right over all (abstention 0) and answered share
        mine = [r for r in records if r["kind"] == kind]
        out[kind] = {"n": len(mine), "right_of_all": mean([r["right"] and r in answered for r in mine]),
                     "answered": mean([r in answered for r in mine]),
                     "right_of_answered": mean([r["right"] for r in mine if r in answered])}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="folder holding musique/ and hotpotqa/")
    p.add_argument("--sets", nargs="+", default=["musique", "hotpotqa", "regulatory", "prose", "fresh", "fifth", "sixth"],
                   help="musique, hotpotqa (from --data), regulatory, prose, fresh, fifth, sixth, or a folder with docs/*.md and "
                        "questions.json (e.g. the one scripts/calibrate/make_cfr_family.py writes)")
    p.add_argument("--limit", type=int, default=None, help="only the first N questions of each set")
    p.add_argument("--out-dir", default="bench-answers")
    p.add_argument("--data-dir", default=None, help="raystorm data dir (default $RAYSTORM_HOME)")
    p.add_argument("--concurrency", type=int, default=4)
    args = p.parse_args(argv)
    from agents.multihop.evaluation import confidence_buckets

    Path(args.out_dir).mkdir(parents=True, exist_ok=True)
    records = {Path(name).name: run_set(name, args) for name in args.sets}
    every = [r for rs in records.values() for r in rs]
    # leave one family out: each set's threshold is chosen on all the other sets
    chosen = {name: choose([r for other, rs in records.items() if other != name for r in rs]) for name in records}
    print(f"threshold per held-out family (chosen on the other families): {chosen}")
    print(f"threshold on all: {choose(every)}")
    print(f"{'family':<16} {'n':>4} {'answered':>8} {'right/ans':>9} {'right/all':>9} {'no abst.':>8} {'F1 no abst.':>11}")
    report = {}
    for name, rs in records.items():
        f = report[name] = figures(rs, chosen[name])
        print(f"{name:<16} {f['n']:>4} {f['answered']:>8.3f} {f['right_of_answered']:>9.3f} "
              f"{f['right_of_all']:>9.3f} {f['right_no_abstention']:>8.3f} {f['F1_no_abstention']:>11.3f}")
        for kind in ("named", "current", "change"):
            if kind in f:
                print(f"  {kind:<9} n {f[kind]['n']:>3}  right over all {f[kind]['right_of_all']:.3f}  "
                      f"answered {f[kind]['answered']:.3f}  right of answered {f[kind]['right_of_answered']:.3f}")
        buckets = confidence_buckets([(r["confidence"], r["right"]) for r in rs if r["verified"]])
        f["reliability"] = buckets
        print("  reliability (confidence: n @ share right): " +
              "  ".join(f"{b}: {v['n']:.0f} @ {v['right']:.2f}" for b, v in buckets.items()))
        above = [r for r in rs if r["verified"] and r["confidence"] >= chosen[name]]
        share = statistics.fmean(r["right"] for r in above) if above else None
        print(f"  above the threshold {chosen[name]:.2f}: {len(above)} answers, "
              + (f"right {share:.2f} ({'holds' if share >= chosen[name] else 'BELOW the threshold'})"
                 if share is not None else "none"))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
