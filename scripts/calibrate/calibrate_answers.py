"""Choose the answer layer's weights and abstention threshold by k-fold cross-validation on the dev sets.

    python -m scripts.calibrate.calibrate_answers bench-multihop/musique-chain.jsonl bench-multihop/hotpotqa-chain.jsonl

    python -m scripts.calibrate.calibrate_answers bench-answers/*.jsonl   # bench_answers.py's, with the regulatory set

Reads benchmark records (`raystorm bench multihop --out FILE.jsonl`, written
before the answer layer existed or with it: the strategy's own span is the
record's `strategy_span`, else its `short_answer`), rebuilds each question's
evidence (hops, supporting passages, the first retrieved ones) and its
candidates (once), or the evidence scripts/bench_answers.py recorded, and per fold (by question, every set
in every fold; a record's own fold when it has one):

- fits the candidate model (a conditional logit over `candidates.FEATURES`,
  L2) on the other folds, its L2 strength chosen among `L2_GRID` by an inner
  cross-validation on those folds alone;
- fits the confidence calibration (logistic, on the chosen candidate's share,
  score and `fusion.STATED` features, or those of --calibrate-on) and picks
  the threshold that maximises the training folds' utility (each answered
  question scores 2·F1 − 1, an abstention 0);
- scores the held-out fold (a value answer by value: "three hundred dollars" is right for "$300").

Prints the held-out figures (what to report) over all questions and per dev
set, the held-out calibration by confidence bucket, the in-sample figures
beside them, the weights, calibration and threshold fitted on all questions,
and the seconds it took.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from agents.answer.analysis import analyze
from agents.answer.candidates import FEATURES, Evidence, HopEvidence, gather
from agents.answer.fusion import STATED, fuse, rank, score
from agents.multihop.evaluation import BenchRecord, confidence_buckets, read_records
from agents.answer.values import parse_value, same_value
from agents.multihop.metrics import exact_match
from agents.multihop.metrics import f1_score as text_f1
from retrieval.datasets import load_multihop_set
from retrieval.documents import PassageText

OTHER_PASSAGES = 5
THRESHOLDS = [round(0.05 * i, 2) for i in range(0, 20)]
L2_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)


def f1_score(answer: str, golds: list[str]) -> float:
    """SQuAD F1, but a value answer scores by value: "three hundred dollars" is right for "$300"."""
    value = parse_value(answer or "")
    wanted = [parse_value(g) for g in golds]
    if value and all(wanted):
        return float(any(same_value(value, w) for w in wanted))
    return text_f1(answer, golds)


def evidence_of(record: BenchRecord) -> Evidence:
    by_title: dict[str, PassageText] = {}
    for p in record.retrieved:
        by_title.setdefault(p.title, PassageText(title=p.title, text=p.text))
    order: list[str] = []
    for hop in record.hops:
        order += [t for t in hop.supporting if t in by_title and t not in order]
    order += [p.title for p in record.retrieved[:OTHER_PASSAGES] if p.title not in order]
    index = {t: i for i, t in enumerate(order)}
    hops = [HopEvidence(query=h.query, answer=h.answer, supporting=[index[t] for t in h.supporting if t in index])
            for h in record.hops]
    span = record.strategy_span if record.strategy_span is not None else (record.short_answer or "")
    return Evidence(question=record.question, answer=record.answer, strategy_span=span or "", hops=hops,
                    passages=[by_title[t] for t in order])


def decided(analysis) -> bool:
    return analysis.answer_type == "yes_no" or (analysis.answer_type == "comparison" and len(analysis.options) == 2)


def fit_choice(groups: list[tuple[np.ndarray, np.ndarray]], l2: float = 1.0, steps: int = 1500,
               lr: float = 0.5) -> np.ndarray:
    """Conditional logit: per question, a softmax over its candidates; maximise the right ones' share.
    Gradient descent over all questions' candidates at once (the bias, column 0, is not penalised)."""
    x = np.concatenate([g[0] for g in groups])
    sizes = np.array([len(g[1]) for g in groups])
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    of = np.repeat(np.arange(len(groups)), sizes)
    target = np.concatenate([g[1] / g[1].sum() for g in groups])
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        z = x @ w
        p = np.exp(z - np.maximum.reduceat(z, starts)[of])
        p /= np.add.reduceat(p, starts)[of]
        grad = (x.T @ (p - target) + l2 * np.r_[0, w[1:]]) / len(groups)
        w -= lr * grad
    return w


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000, lr: float = 0.1) -> np.ndarray:
    """Logistic regression by projected gradient descent (the bias, column 0, is not penalised). The other
    coefficients stay >= 0: a confidence never falls as the winner's share or score rises."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) / len(y) + l2 * np.r_[0, w[1:]] / len(y)
        w -= lr * grad
        w[1:] = np.maximum(w[1:], 0.0)
    return w


def folds_of(ids: list[int], k: int) -> list[list[int]]:
    """Interleaved folds: questions of every dev set in each."""
    return [ids[i::k] for i in range(k)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("records", nargs="+", help="benchmark .jsonl files (one per dev set, named SET-STRATEGY.jsonl)")
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[2].parent / "shared" / "data"))
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--leave-family-out", action="store_true",
                   help="one fold per records file (a family of documents: the generator's, the hand-written prose, "
                        "Regulation C, each multi-hop set): every family is scored by weights fitted on the others")
    p.add_argument("--correct-f1", type=float, default=0.5, help="an answer counts as right at this F1 or more")
    p.add_argument("--limit", type=int, default=None, help="only the first N questions of each file (to iterate)")
    p.add_argument("--errors", action="store_true", help="print each question's held-out answer beside the gold one")
    p.add_argument("--calibrate-on", default=",".join(STATED),
                   help="the winner's features the confidence reads beside share and score (comma-separated, "
                        "'' for none)")
    args = p.parse_args(argv)
    calibration_inputs = tuple(f for f in args.calibrate_on.split(",") if f)
    unknown = [f for f in calibration_inputs if f not in FEATURES]
    if unknown:
        p.error(f"--calibrate-on: {unknown} are not candidate features ({', '.join(FEATURES)})")
    if args.folds < 2:
        p.error("--folds must be at least 2")
    started = time.perf_counter()

    from agents.lm.nlp import TextToolkit

    nlp = TextToolkit()
    questions = []  # (golds, analysis, evidence, candidates)
    sets: list[str] = []  # the dev set of each question
    folds: list[int] = []  # each question's fold, when its records say (bench_answers.py: by form family)
    for file_index, path in enumerate(args.records):
        name = Path(path).name.split("-")[0].removesuffix(".jsonl")
        lines = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
        if any("evidence" in x for x in lines):
            for record in [x for x in lines if "evidence" in x][:args.limit]:  # scripts/bench_answers.py
                ev = Evidence.model_validate(record["evidence"])
                analysis = analyze(nlp, ev.question)
                sets.append(name)
                fold = record["fold"]  # the generator's form family; a family's own name in the newer sets
                folds.append(file_index if args.leave_family_out else
                             int(fold) % args.folds if str(fold).isdigit() else file_index % args.folds)
                questions.append((record["golds"], analysis, ev, gather(nlp, analysis, ev)))
            continue
        dataset = load_multihop_set(Path(args.data) / name).questions
        gold = {q.id: q.answers for q in dataset}
        # in the set's own order: a file written as questions finished (bench runs them in parallel) folds the same
        at = {q.id: i for i, q in enumerate(dataset)}
        records = sorted(read_records(Path(path)).values(), key=lambda r: at.get(r.id, len(at)))
        for record in records[:args.limit]:
            if record.id not in gold:
                raise SystemExit(f"{path}: question {record.id} is not in {Path(args.data) / name}")
            sets.append(name)
            folds.append(file_index if args.leave_family_out else -1)
            ev = evidence_of(record)
            analysis = analyze(nlp, record.question)
            questions.append((gold[record.id], analysis, ev, gather(nlp, analysis, ev)))
    n = len(questions)
    if n < args.folds:
        raise SystemExit(f"{n} questions: fewer than --folds {args.folds}")

    def groups(ids):
        out = []
        for i in ids:
            golds, analysis, _, cands = questions[i]
            if decided(analysis) or not cands:  # decided from the evidence, not ranked
                continue
            y = np.array([float(f1_score(c.text, golds) >= args.correct_f1) for c in cands])
            if y.sum():
                out.append((np.array([[c.features[f] for f in FEATURES] for c in cands]), y))
        return out

    def weights_of(ids, l2):
        return dict(zip(FEATURES, (round(float(v), 3) for v in fit_choice(groups(ids), l2=l2))))

    def top1_f1(ids, w):
        """Mean F1 of the best-ranked candidate over the ranked questions of each dev set, averaged over the
        sets (the inner CV's criterion: each kind of corpus counts the same, whatever its size)."""
        out: dict[str, list[float]] = {}
        for i in ids:
            golds, analysis, ev, cands = questions[i]
            if decided(analysis):
                continue
            ranked = rank(nlp, analysis, ev, w, cands)
            out.setdefault(sets[i], []).append(f1_score(ranked[0][0].text, golds) if ranked else 0.0)
        return statistics.fmean(statistics.fmean(v) for v in out.values()) if out else 0.0

    def choose_l2(ids):
        inner = folds_of(list(ids), args.folds)
        held = {l2: statistics.fmean(top1_f1(test, weights_of([i for i in ids if i not in test], l2))
                                     for test in inner) for l2 in L2_GRID}
        return max(L2_GRID, key=lambda l2: (round(held[l2], 6), l2))  # ties: the stronger penalty

    def fit_all(ids):
        l2 = choose_l2(ids)
        w = weights_of(ids, l2)
        rows, labels = [], []
        for i in ids:
            golds, analysis, ev, cands = questions[i]
            if decided(analysis) or not cands:
                continue
            best, share = rank(nlp, analysis, ev, w, cands)[0]
            rows.append([1.0, share, score(best.features, w), *(best.features[f] for f in calibration_inputs)])
            labels.append(float(f1_score(best.text, golds) >= args.correct_f1))
        cal = dict(zip(("bias", "share", "score", *calibration_inputs),
                       (round(float(v), 3) for v in fit(np.array(rows), np.array(labels)))))
        return w, cal, l2

    def predict(ids, weights, cal):
        out = []
        for i in ids:
            golds, analysis, ev, cands = questions[i]
            fused = fuse(nlp, analysis, ev, weights, cal, cands)
            out.append((fused.confidence, fused.short_answer, exact_match(fused.short_answer, golds),
                        f1_score(fused.short_answer, golds) if fused.short_answer else 0.0))
        return out

    def best_threshold(preds):
        def utility(t):
            return sum(2 * f1 - 1 for c, s, em, f1 in preds if s and c >= t)
        return max(THRESHOLDS, key=lambda t: (utility(t), -t))

    def figures(preds, t):
        answered = [x for x in preds if x[1] and x[0] >= t]
        mean = lambda xs: round(statistics.fmean(xs), 3) if xs else 0.0  # noqa: E731
        return {"n": len(preds), "threshold": t, "abstention": round(1 - len(answered) / len(preds), 3),
                "EM_answered": mean([x[2] for x in answered]), "F1_answered": mean([x[3] for x in answered]),
                "EM_all": mean([x[2] if x in answered else 0 for x in preds]),
                "F1_all": mean([x[3] if x in answered else 0 for x in preds]),
                "EM_no_abstain": mean([x[2] for x in preds]), "F1_no_abstain": mean([x[3] for x in preds])}

    held_out: dict[int, tuple] = {}  # question -> (prediction, its fold's threshold)
    chosen, penalties = [], []
    given = [i for i in range(n) if folds[i] >= 0]
    if args.leave_family_out:
        interleaved = [[i for i in given if folds[i] == k] for k in range(len(args.records))]
    else:
        interleaved = folds_of([i for i in range(n) if folds[i] < 0], args.folds)
        for k, test in enumerate(interleaved):
            test += [i for i in given if folds[i] == k]
    for test in interleaved:
        train = [i for i in range(n) if i not in test]
        w, cal, l2 = fit_all(train)
        t = best_threshold(predict(train, w, cal))
        chosen.append(t)
        penalties.append(l2)
        held_out.update({i: (pred, t) for i, pred in zip(test, predict(test, w, cal))})
    cv_preds = [held_out[i][0] for i in range(n)]
    if args.errors:
        for i, (conf, answer, em, f1) in enumerate(cv_preds):
            golds, analysis, ev, cands = questions[i]
            best = max((f1_score(c.text, golds) for c in cands), default=0.0)
            print(f"{sets[i][:8]:8s} {analysis.answer_type:10s} F1 {f1:.2f} (best candidate {best:.2f} of "
                  f"{len(cands)}) conf {conf:.2f} | gold {golds[0]!r} | answer {answer!r} | {ev.question[:90]}")
    thresholded = [(c if c >= t else -1.0, *rest) for (c, *rest), t in (held_out[i] for i in range(n))]
    cv = figures(thresholded, 0.0)
    cv["threshold"] = f"per fold {chosen}"
    w_all, cal_all, l2_all = fit_all(list(range(n)))
    all_preds = predict(range(n), w_all, cal_all)
    t_all = best_threshold(all_preds)
    y = np.concatenate([g[1] for g in groups(range(n))])
    print(f"questions: {n}; ranked ones with a right candidate: {len(groups(range(n)))}, their candidates: "
          f"{len(y)} ({int(y.sum())} right at F1 >= {args.correct_f1})")
    print("cross-validated (held-out folds):", json.dumps(cv), f"L2 per fold {penalties}")
    for name in dict.fromkeys(sets):
        mine = [x for x, s in zip(thresholded, sets) if s == name]
        print(f"  {name}:", json.dumps({k: v for k, v in figures(mine, 0.0).items() if k != "threshold"}))
    print("cv calibration (confidence bucket -> share right):",
          json.dumps(confidence_buckets([(c, f1 >= args.correct_f1) for c, s, em, f1 in cv_preds if s])))
    for name in dict.fromkeys(sets):  # does a confidence mean the same on each kind of corpus?
        print(f"  {name}:", json.dumps(confidence_buckets([(c, f1 >= args.correct_f1) for (c, s, em, f1), of
                                                          in zip(cv_preds, sets) if s and of == name])))
    print("in-sample (all questions):      ", json.dumps(figures(all_preds, t_all)))
    decisions = [(q[1].answer_type, f1_score(fuse(nlp, q[1], q[2], w_all, cal_all, q[3]).short_answer, q[0])
                  >= args.correct_f1)
                 for q in questions if decided(q[1])]
    print("decisions (type, right):", decisions)
    print("L2 =", l2_all)
    print("WEIGHTS =", json.dumps(w_all))
    print("CALIBRATION =", json.dumps(cal_all))
    print("MIN_CONFIDENCE =", t_all)
    print(f"seconds: {time.perf_counter() - started:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
