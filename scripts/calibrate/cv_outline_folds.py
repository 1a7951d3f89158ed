"""The cross-validation half of `scripts/calibrate/cv_outline.py`: folds by article, the objective, the choice of a
setting on training articles only, the grids of settings, and the per-fold report. Pure functions over
a table of scores (one row per setting and article), so they are tested without any article.
"""

from __future__ import annotations

import random
import statistics


def folds_by_article(names: list[str], k: int, seed: int = 0) -> list[list[str]]:
    """`k` folds of whole articles (an article's headings never sit on both sides of a split)."""
    if not 2 <= k <= len(names):
        raise ValueError(f"{k} folds need at least {k} articles, got {len(names)}")
    shuffled = sorted(names)
    random.Random(seed).shuffle(shuffled)
    return [sorted(shuffled[i::k]) for i in range(k)]


def mean(rows: list[dict], key: str) -> float:
    return statistics.mean(r[key] for r in rows) if rows else 0.0


PRECISION_WEIGHT = 2.0  # a point of precision below the floor costs two points of recall


def objective(rows: list[dict], min_precision: float) -> float:
    """Mean match recall, less twice any shortfall of mean match precision below `min_precision`."""
    r, p = mean(rows, "recall"), mean(rows, "precision")
    return r - PRECISION_WEIGHT * max(0.0, min_precision - p)


def choose(table: list[dict[str, dict]], train: list[str], min_precision: float) -> int:
    """The setting with the best objective over the `train` articles only (ties: the earlier one)."""
    return max(range(len(table)),
               key=lambda i: (round(objective([table[i][n] for n in train], min_precision), 9), -i))


def lexicon_misses(rows: list[dict], tau: float) -> tuple[str, ...]:
    """Lexicon sections that, where the outline proposed them in `rows`, matched a gold heading less
    than `tau` of the time: the list of section types is chosen on training articles, like a number."""
    from agents.storm.lexicon import SECTION_TYPES

    lexicon = {s.heading for s in SECTION_TYPES}
    hits: dict[str, list[bool]] = {}
    for r in rows:
        for h, m in zip(r["pred"], r["matched"]):
            if h in lexicon:
                hits.setdefault(h, []).append(m)
    return tuple(sorted(h for h, ms in hits.items() if sum(ms) < tau * len(ms)))


def cross_validate(table: list[dict[str, dict]], settings_list: list[dict], names: list[str],
                   folds: list[list[str]], min_precision: float, evaluate=None, taus=()) -> list[dict]:
    """Per fold: the setting chosen on the other folds, its rows there (in-sample) and on the fold.

    With `evaluate(overrides) -> {article: row}` and `taus`, the lexicon is pruned too: sections that
    missed on the training articles (`lexicon_misses`) are dropped when that helps there."""
    out = []
    for held in folds:
        train = [n for n in names if n not in held]
        i = choose(table, train, min_precision)
        best = {"setting": settings_list[i], "rows": table[i]}
        for tau in taus:
            dropped = lexicon_misses([table[i][n] for n in train], tau)
            if not dropped:
                continue
            overrides = {**settings_list[i], "dropped_sections": dropped}
            best = _better(best, overrides, evaluate(overrides), train, min_precision)
        out.append({"setting": best["setting"], "train": [best["rows"][n] for n in train],
                    "test": [best["rows"][n] for n in held]})
    return out


def _better(best: dict, setting: dict, rows, train, min_precision: float) -> dict:
    """`setting` with its `rows` if it beats `best` on the training articles, else `best`."""
    if objective([rows[n] for n in train], min_precision) > objective([best["rows"][n] for n in train], min_precision):
        return {"setting": setting, "rows": rows}
    return best


# --- the learned heading filter ------------------------------------------------------------------------


def fit_filter(rows: list[dict], l2: float = 1.0, steps: int = 30) -> tuple[float, ...]:
    """Logistic regression of "this heading matches a gold heading" on its features (`row["considered"]`:
    [heading, features, matched] for every heading the plan considered), L2-penalised on standardised
    features, by Newton's method. The coefficients are for the raw features (bias first), rounded to
    3 places: what `OutlineParams.heading_filter` holds."""
    import numpy as np

    x = np.array([f for r in rows for _, f, _ in r["considered"]], dtype=np.float64)
    y = np.array([m for r in rows for _, _, m in r["considered"]], dtype=np.float64)
    if len(y) == 0 or y.min() == y.max():
        raise ValueError("the filter needs considered headings that match and that do not")
    mu, sd = x.mean(axis=0), x.std(axis=0)
    mu[0], sd[0] = 0.0, 1.0  # the bias column stays 1
    live = sd > 0
    z = np.where(live, (x - mu) / np.where(live, sd, 1.0), 0.0)
    z[:, 0] = 1.0
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        prob = 1.0 / (1.0 + np.exp(-(z @ w)))
        grad = z.T @ (prob - y) + penalty * w
        hess = (z * (prob * (1 - prob))[:, None]).T @ z + np.diag(penalty + 1e-9)
        w -= np.linalg.solve(hess, grad)
    raw = np.where(live, w / np.where(live, sd, 1.0), 0.0)
    raw[0] = w[0] - float((raw[1:] * mu[1:]).sum())
    return tuple(round(float(v), 3) for v in raw)


FILTER_THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
# the pools the filter may choose from: the setting as chosen, or looser (no cohesion floor, a longer cap,
# thinner evidence, phrase headings for any evidence, more names)
_LOOSE = {"min_cohesion": 0.0, "max_headings": 20}
FILTER_VARIANTS = ({}, _LOOSE, {**_LOOSE, "min_share": 0.01},
                   {**_LOOSE, "phrase_max_fit": 1.0, "entity_headings": 8},
                   {**_LOOSE, "min_share": 0.01, "phrase_max_fit": 1.0, "entity_headings": 8})
# (three more, no minimum support, phrase headings and names on top, assign_threshold 0.15, raised the
# in-sample figures and lowered the held-out ones: 0.642 / 0.270 / 0.468)


def cross_validate_filter(table: list[dict[str, dict]], settings_list: list[dict], names: list[str],
                          folds: list[list[str]], min_precision: float, evaluate,
                          thresholds=FILTER_THRESHOLDS, variants=FILTER_VARIANTS) -> list[dict]:
    """Per fold, on the other folds' articles only: the setting (`choose`); for each variant of it (a
    looser pool of headings), a filter fitted on the headings its plans considered there (`fit_filter`);
    the variant and threshold with the best objective there, or the setting without a filter when
    that is better there."""
    out = []
    for held in folds:
        train = [n for n in names if n not in held]
        i = choose(table, train, min_precision)
        best = {"setting": settings_list[i], "rows": table[i]}
        for variant in variants:
            pool = evaluate({**settings_list[i], **variant}) if variant else table[i]
            coefficients = fit_filter([pool[n] for n in train])
            for t in thresholds:
                overrides = {**settings_list[i], **variant, "heading_filter": coefficients, "filter_threshold": t}
                best = _better(best, overrides, evaluate(overrides), train, min_precision)
        out.append({"setting": best["setting"], "train": [best["rows"][n] for n in train],
                    "test": [best["rows"][n] for n in held]})
    return out


def held_out_over_splits(names: list[str], k: int, seeds: list[int], run) -> list[dict]:
    """Repeated k-fold CV: for each seed, the fold split it shuffles (`folds_by_article`), the CV
    `run(folds) -> results` (`cross_validate` or `cross_validate_filter`), and its held-out figures
    (every article scored once). One split's figure moves by about 0.01 with the seed; their mean
    is the steadier estimate."""
    out = []
    for seed in seeds:
        test = [row for r in run(folds_by_article(names, k, seed)) for row in r["test"]]
        out.append({"seed": seed, **{key: mean(test, key) for key in ("soft", "recall", "precision")}})
    return out


def report_splits(figures: list[dict], title: str = "") -> None:
    """Each fold split's held-out figures, then their mean and standard deviation."""
    print(f"\nrepeated {len(figures)} times with other fold splits{title}:")
    for f in figures:
        print(f"  seed {f['seed']}: held out soft {f['soft']:.3f}, match R {f['recall']:.3f}, P {f['precision']:.3f}")
    spread = {key: (statistics.mean(f[key] for f in figures),
                    statistics.stdev(f[key] for f in figures) if len(figures) > 1 else 0.0)
              for key in ("soft", "recall", "precision")}
    print("  mean over the splits: " + ", ".join(f"{label} {m:.3f} ± {sd:.3f}" for label, (m, sd) in
                                                zip(("soft", "match R", "P"), spread.values())))


def report_cv(table, settings_list, names, folds, min_precision, evaluate=None, taus=(), results=None,
              title="") -> list[dict]:
    line = "{:<6} {:>6} {:>6} {:>6}   {:>6} {:>6} {:>6}   {}"
    print(f"\n{len(folds)}-fold CV by article over {len(names)} articles, {len(table)} settings{title} "
          f"(objective: match recall, precision >= {min_precision})")
    print(line.format("fold", "soft", "R", "P", "cvSoft", "cvR", "cvP", "chosen on the other folds"))
    keys = ("soft", "recall", "precision")
    if results is None:
        results = cross_validate(table, settings_list, names, folds, min_precision, evaluate, taus)
    for f, r in enumerate(results):
        print(line.format(f + 1, *(f"{mean(r['train'], k):.3f}" for k in keys),
                          *(f"{mean(r['test'], k):.3f}" for k in keys), describe(r["setting"])))
    test = [row for r in results for row in r["test"]]
    print(line.format("mean", *(f"{statistics.mean(mean(r['train'], k) for r in results):.3f}" for k in keys),
                      *(f"{mean(test, k):.3f}" for k in keys), "(CV: each article scored once, held out)"))
    return results


# The constants of the outline stage before cross-validation (the 10-article fit), for comparison.
LEGACY = {"assign_threshold": 0.2, "kind_prior": 0.12, "preferred_prior": 0.04, "under_heading": 0.12,
          "document_topic": 1.0, "min_share": 0.02, "min_support": 2, "sentences_per_heading": 6, "synonym": 0.8,
          "min_headings": 4, "min_fitting": 3, "max_headings": 12, "lexicon_scope": "all",
          "dropped_sections": (), "entity_headings": 0, "entity_min_sources": 2, "entity_place": 0.0,
          "entity_min_share": 0.0,
          "kind_evidence": 0.5, "phrase_headings": 0, "topic_telling_share": 0.6, "topic_named_percentile": 25,
          "topic_min_word": 4, "person_evidence": 0.0, "min_cohesion": 0.0, "kind_claim": 1.0}
# The defaults before the topicality rule and the phrase headings were CV parameters (held out: soft 0.693,
# match recall 0.258, precision 0.386 with `--grid narrow --samples 70`).
PREVIOUS = {"phrase_headings": 0, "topic_telling_share": 0.6, "topic_named_percentile": 25, "topic_min_word": 4,
            "person_evidence": 0.0, "min_cohesion": 0.0, "kind_claim": 1.0}
# The defaults the `corpus` grid chose (held out: soft 0.731, match recall 0.291, precision 0.434), before
# the cohesion floor and the person evidence were CV parameters: the base of the `precision` grid's draws.
CORPUS_CHOSEN = {"assign_threshold": 0.2, "kind_evidence": 0.75, "kind_prior": 0.12, "preferred_prior": 0.04,
                 "min_share": 0.02, "min_support": 2, "sentences_per_heading": 4, "synonym": 0.8,
                 "min_headings": 4, "min_fitting": 3, "max_headings": 12, "lexicon_scope": "all",
                 "entity_headings": 4, "entity_min_sources": 2, "entity_min_share": 0.06, "entity_place": 0.45,
                 "phrase_max_fit": 0.3, "phrase_headings": 4, "phrase_min_sources": 2, "phrase_min_share": 0.06,
                 "phrase_noun_share": 0.3, "topic_telling_share": 0.8, "topic_named_percentile": 10,
                 "topic_min_word": 5, "person_evidence": 0.0, "min_cohesion": 0.0}

GRIDS: dict[str, dict[str, list]] = {
    "narrow": {  # around the best settings of a first random search
        "assign_threshold": [0.15, 0.2],
        "kind_evidence": [0.5, 0.75, 1.0],
        "kind_prior": [0.0, 0.12],
        "preferred_prior": [0.0, 0.04],
        "min_share": [0.02, 0.04],
        "min_support": [2],
        "sentences_per_heading": [4, 6],
        "synonym": [0.8],
        "min_headings": [2, 4],
        "min_fitting": [0, 3],
        "max_headings": [8, 10, 12],
        "lexicon_scope": ["all", "kind"],
        "entity_headings": [0, 4, 8],
        "entity_min_sources": [2, 3],
        "entity_min_share": [0.0, 0.03, 0.06],
        "entity_place": [0.35, 0.45],
    },
    "corpus": {  # drawn on top of the 70 "narrow" settings: the topicality rule, and the corpus's recurring
        # noun phrases as headings (only where the evidence fits its article kind less than phrase_max_fit)
        "topic_telling_share": [0.5, 0.6, 0.8],
        "topic_named_percentile": [10, 25, 50],
        "topic_min_word": [3, 4, 5],
        "phrase_headings": [0, 2, 4],
        "phrase_min_sources": [2, 3, 4],
        "phrase_min_share": [0.03, 0.06],
        "phrase_noun_share": [0.3, 0.5],
        "phrase_max_fit": [0.2, 0.3, 1.0],
    },
    "precision": {  # drawn on top of the "corpus" grid's 130 (`--samples 60`), around what it chose:
        # a floor on how well a heading's sentences fit its name, and "he"/"she" evidence for the kind person
        "min_cohesion": [0.0, 0.2, 0.22, 0.24, 0.26, 0.28],
        "person_evidence": [0.0, 0.1, 0.2, 0.3, 0.5],
        "sentences_per_heading": [4, 6],
        "max_headings": [12, 14],
        # a usual section of the article kind also claims the sentences close to it (1.0: never)
        "kind_claim": [1.0, 0.3, 0.35, 0.4],
    },
    "random": {
        "assign_threshold": [0.15, 0.2, 0.25, 0.3, 0.35],
        "kind_prior": [0.0, 0.06, 0.12, 0.2],
        "preferred_prior": [0.0, 0.04],
        "min_share": [0.02, 0.04, 0.06],
        "min_support": [2, 3],
        "sentences_per_heading": [4, 6, 10],
        "synonym": [0.7, 0.8],
        "min_headings": [2, 4],
        "min_fitting": [0, 3, 6],
        "max_headings": [6, 8, 10, 12],
        "lexicon_scope": ["all", "kind"],
        "entity_headings": [0, 2, 4, 8],
        "entity_min_sources": [2, 3],
        "entity_place": [0.0, 0.35, 0.45, 0.55],
        "entity_min_share": [0.0, 0.03, 0.06],
        "kind_evidence": [0.5, 0.75, 1.0],
    },
}


# a grid drawn on top of another's first draws: (base grid, its draws, the new axes' values in them, the values
# of the other fields in all its draws: {} for the defaults of the time)
EXTENDS = {"corpus": ("narrow", 70, PREVIOUS, {}),
           "precision": ("corpus", 60, {"person_evidence": 0.0, "min_cohesion": 0.0, "kind_claim": 1.0},
                         CORPUS_CHOSEN)}


# the grids are of the stage without the learned heading filter: `cross_validate_filter` learns one on top
NO_FILTER = {"heading_filter": ()}


def grid(name: str, samples: int, seed: int) -> list[dict]:
    """Settings to compare, as overrides of `OutlineParams()`'s fields: the defaults, the old constants,
    the previous defaults, and `samples` random draws from the grid's axes (after the draws of the grid
    it extends, if any, with the new axes at their previous values: the CV then chooses among both);
    all without the heading filter (`NO_FILTER`)."""
    return [{**NO_FILTER, **o} for o in _draws(name, samples, seed)]


def _draws(name: str, samples: int, seed: int) -> list[dict]:
    out = [{}, LEGACY, PREVIOUS]
    if name == "defaults":
        return out
    pinned = {}
    if name in EXTENDS:  # the base grid's draws as they were: the new axes at their previous values
        base, n, previous, pinned = EXTENDS[name]
        out += [{**pinned, **previous, **o} for o in _draws(base, n, seed)[3:]]
        samples += len(out) - 3
    axes = GRIDS[name]
    rng = random.Random(seed)
    while len(out) < samples + 3:
        draw = {**pinned, **{k: rng.choice(v) for k, v in axes.items()}}
        if draw not in out:
            out.append(draw)
    return out


def describe(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "(defaults)"
