"""Choose the answer layer's weights and abstention threshold by k-fold cross-validation on the dev sets.

    python scripts/calibrate_answers.py bench-multihop/musique-chain.jsonl bench-multihop/hotpotqa-chain.jsonl

Reads benchmark records (`raystorm bench multihop --out FILE.jsonl`, written
before the answer layer existed or with it: the strategy's own span is the
record's `strategy_span`, else its `short_answer`), rebuilds each question's
evidence (hops, supporting passages, the first retrieved ones), and per fold:
fits the candidate model (logistic regression over `candidates.FEATURES`, L2) on
the other folds' candidates, picks the threshold that maximises the training
folds' utility (each answered question scores 2·F1 − 1, an abstention 0), and
scores the held-out fold. Prints the held-out figures (what to report), the
in-sample ones beside them, and the weights and threshold fitted on all questions.
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
from agents.answer.fusion import fuse, rank, score
from agents.multihop.evaluation import BenchRecord, confidence_buckets, read_records
from agents.multihop.metrics import exact_match, f1_score
from retrieval.documents import PassageText
from retrieval.datasets import load_multihop_set

OTHER_PASSAGES = 5
THRESHOLDS = [round(0.05 * i, 2) for i in range(0, 20)]


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
    """Conditional logit: per question, a softmax over its candidates; maximise the right ones' share."""
    w = np.zeros(groups[0][0].shape[1])
    for _ in range(steps):
        grad = np.zeros_like(w)
        for x, y in groups:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            target = y / y.sum()
            grad += x.T @ (p - target)
        grad = grad / len(groups) + l2 * np.r_[0, w[1:]] / len(groups)
        w -= lr * grad
    return w


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000, lr: float = 0.1) -> np.ndarray:
    """Logistic regression by gradient descent (the bias, column 0, is not penalised)."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) / len(y) + l2 * np.r_[0, w[1:]] / len(y)
        w -= lr * grad
    return w


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("records", nargs="+", help="benchmark .jsonl files (one per dev set)")
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--correct-f1", type=float, default=0.5, help="an answer counts as right at this F1 or more")
    p.add_argument("--limit", type=int, default=None, help="only the first N questions of each file (to iterate)")
    args = p.parse_args(argv)
    started = time.perf_counter()

    from agents.lm.nlp import TextToolkit

    nlp = TextToolkit()
    questions = []  # (golds, analysis, evidence, candidates)
    sets: list[str] = []  # the dev set of each question
    for path in args.records:
        name = Path(path).name.split("-")[0]
        gold = {q.id: q.answers for q in load_multihop_set(Path(args.data) / name).questions}
        for record in list(read_records(Path(path)).values())[:args.limit]:
            sets.append(name)
            ev = evidence_of(record)
            analysis = analyze(nlp, record.question)
            questions.append((gold[record.id], analysis, ev, gather(nlp, analysis, ev)))
    n = len(questions)
    folds = [list(range(i, n, args.folds)) for i in range(args.folds)]  # interleaved: both sets in every fold

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

    def fit_all(ids):
        w = dict(zip(FEATURES, (round(float(v), 3) for v in fit_choice(groups(ids)))))
        rows, labels = [], []
        for i in ids:
            golds, analysis, ev, cands = questions[i]
            if decided(analysis) or not cands:
                continue
            ranked = rank(nlp, analysis, ev, w)
            best, share = ranked[0]
            rows.append([1.0, share, score(best.features, w)])
            labels.append(float(f1_score(best.text, golds) >= args.correct_f1))
        cal = dict(zip(("bias", "share", "score"), (round(float(v), 3) for v in fit(np.array(rows), np.array(labels)))))
        return w, cal

    def predict(ids, weights, cal):
        out = []
        for i in ids:
            golds, analysis, ev, _ = questions[i]
            fused = fuse(nlp, analysis, ev, weights, cal)
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

    held_out, chosen = [], []
    for k, test in enumerate(folds):
        train = [i for i in range(n) if i not in test]
        w, cal = fit_all(train)
        t = best_threshold(predict(train, w, cal))
        chosen.append(t)
        held_out += [(pred, t) for pred in predict(test, w, cal)]
    # held_out is in fold order; back to question order, to split the figures by dev set
    order = [i for test in folds for i in test]
    by_question = {i: x for i, x in zip(order, held_out)}
    cv_preds = [by_question[i][0] for i in range(n)]
    thresholded = [(c if c >= t else -1.0, *rest) for (c, *rest), t in (by_question[i] for i in range(n))]
    cv = figures(thresholded, 0.0)
    cv["threshold"] = f"per fold {chosen}"
    w_all, cal_all = fit_all(range(n))
    all_preds = predict(range(n), w_all, cal_all)
    t_all = best_threshold(all_preds)
    y = np.concatenate([g[1] for g in groups(range(n))])
    print(f"questions: {n}; ranked ones with a right candidate: {len(groups(range(n)))}, their candidates: "
          f"{len(y)} ({int(y.sum())} right at F1 >= {args.correct_f1})")
    print("cross-validated (held-out folds):", json.dumps(cv))
    for name in dict.fromkeys(sets):
        mine = [x for x, s in zip(thresholded, sets) if s == name]
        print(f"  {name}:", json.dumps({k: v for k, v in figures(mine, 0.0).items() if k != "threshold"}))
    print("cv calibration (confidence bucket -> share right):",
          json.dumps(confidence_buckets([(c, f1 >= args.correct_f1) for c, s, em, f1 in cv_preds if s])))
    print("in-sample (all questions):      ", json.dumps(figures(all_preds, t_all)))
    decisions = [(q[1].answer_type, f1_score(fuse(nlp, q[1], q[2], w_all, cal_all).short_answer, q[0])
                  >= args.correct_f1)
                 for q in questions if decided(q[1])]
    print("decisions (type, right):", decisions)
    print("WEIGHTS =", json.dumps(w_all))
    print("CALIBRATION =", json.dumps(cal_all))
    print("MIN_CONFIDENCE =", t_all)
    print(f"seconds: {time.perf_counter() - started:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
