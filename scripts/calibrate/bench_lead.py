#!/usr/bin/env python3
"""Benchmark the extractive lead (`WriteLead.extract`) against FreshWiki's real leads.

Two steps, over a work folder that `python -m scripts.bench_report --work DIR` filled:

- `capture`: rerun each report's polish stage (its checkpoint dropped, every other stage
  reused) with `WriteLead.extract` wrapped, so that the `LeadInput` it was given is saved
  to DIR/lead_inputs/<article>.json. The lead is then scored offline, in this process.
- `score`: the lead of the current code and of the variants of its knobs, each scored
  against the article's gold `summary`: ROUGE-1 F1 over content words (lower case,
  stopwords out), the MiniLM cosine of the two texts (fastembed, the offline model, as
  the shared `outline_metrics.py` loads it), and lead sentences that name the topic.
  The knobs are chosen by 5-fold cross-validation by article (on mean ROUGE-1 F1 plus
  mean cosine); the held-out figures are printed beside the in-sample ones.

usage: python -m scripts.calibrate.bench_lead capture --work DIR [--data DIR] [--only NAME]
       python -m scripts.calibrate.bench_lead score --work DIR [--data DIR] [--folds 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
from pathlib import Path

from scripts.shared_tools import metrics_module

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def articles(data: Path, work: Path, only: list[str]) -> list[tuple[str, dict, dict]]:
    """(name, FreshWiki article, gold outline) for each article with a corpus in `work`."""
    out = []
    for path in sorted(data.glob("*.json")):
        gold = work / "corpora" / path.stem / "gold_outline.json"
        if gold.is_file() and (not only or any(o in path.name for o in only)):
            out.append((path.stem, json.loads(path.read_text()), json.loads(gold.read_text())))
    return out


# --- capture ------------------------------------------------------------------------------------


def capture(args) -> int:
    from agents.storm.artifacts import topic_slug
    from agents.storm.steps_article import WriteLead
    from cluster.cli import main as raystorm

    original = WriteLead.extract.__func__
    saved: list = []

    def recording(cls, inp, nlp):
        saved.append(inp)
        return original(cls, inp, nlp)

    WriteLead.extract = classmethod(recording)
    target = args.work / "lead_inputs"
    target.mkdir(exist_ok=True)
    for name, _, gold in articles(args.data, args.work, args.only):
        topic = gold["topic"]
        folder = args.work / "runs" / "storm" / topic_slug(topic)
        points = folder / "checkpoints.json"
        marks = json.loads(points.read_text())
        marks.pop("polish", None)  # every other stage is reused; the lead is written again
        points.write_text(json.dumps(marks, indent=2))
        collection = "fw-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
        saved.clear()
        code = raystorm(["report", topic, "--collection", collection, "--data-dir", str(args.work / "home"),
                         "--out", str(args.work / "runs" / "storm"), "--exclude-url", gold["url"],
                         "--writer", "storm"])
        if code != 0 or len(saved) != 1:
            sys.exit(f"{name}: report exit {code}, {len(saved)} leads written")
        (target / f"{name}.json").write_text(saved[0].model_dump_json(indent=1))
        print(f"{name}: {len(saved[0].sources)} sources, {len(saved[0].sections)} sections", flush=True)
    return 0


# --- score --------------------------------------------------------------------------------------


class Scorer:
    """A lead against the gold summary: content-word ROUGE-1 F1 and MiniLM cosine."""

    def __init__(self, tools: Path = SHARED / "tools"):
        import numpy as np

        embedder = metrics_module(tools).embedder

        from agents.lm.text.tokens import ALL_STOPWORDS

        self.np = np
        self.stop = ALL_STOPWORDS
        self.model = embedder()
        self._vectors: dict[str, object] = {}

    def words(self, text: str) -> list[str]:
        return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in self.stop]

    def rouge1(self, lead: str, gold: str) -> float:
        from collections import Counter

        a, b = Counter(self.words(lead)), Counter(self.words(gold))
        overlap = sum((a & b).values())
        if not overlap:
            return 0.0
        p, r = overlap / sum(a.values()), overlap / sum(b.values())
        return 2 * p * r / (p + r)

    def vector(self, text: str):
        if text not in self._vectors:
            v = next(iter(self.model.embed([text])))
            self._vectors[text] = v / self.np.linalg.norm(v)
        return self._vectors[text]

    def cosine(self, lead: str, gold: str) -> float:
        return float(self.vector(lead) @ self.vector(gold)) if lead.strip() else 0.0


def naming(lead: str, topic: str, nlp) -> tuple[int, int]:
    """(sentences that use one of the topic's content words, sentences)."""
    from agents.storm.citations import strip_citations

    words = set(nlp.content_tokens(topic))
    said = nlp.sentences(strip_citations(lead)) if lead.strip() else []
    return sum(1 for s in said if words & set(nlp.content_tokens(s))), len(said)


def _memoize(nlp) -> None:
    """The lead's per-article work (topical sentences, similarities, tokens) once per article, not once per
    setting: the same inputs give the same values, and the grid then runs in minutes."""
    import functools

    from agents.storm import steps_article

    topical, similar, tokens = steps_article.topical_sentences, steps_article.similarity, nlp.content_tokens
    seen: dict = {}

    def topical_sentences(topic, sources, nlp_):
        key = ("topical", topic, tuple(s.text for s in sources))
        if key not in seen:
            seen[key] = topical(topic, sources, nlp_)
        return seen[key]

    def similarity(a, b, nlp_):
        key = ("similarity", tuple(a), tuple(b))
        if key not in seen:
            seen[key] = similar(a, b, nlp_)
        return seen[key]

    steps_article.topical_sentences, steps_article.similarity = topical_sentences, similarity
    nlp.content_tokens = functools.lru_cache(maxsize=None)(tokens)


def score(args) -> int:
    from agents.lm.nlp import TextToolkit
    from agents.storm.citations import strip_citations
    from agents.storm.steps_article import LEAD_PARAMS, LeadInput, LeadParams, extract_lead
    from retrieval.config import StoreSettings
    from retrieval.embeddings import shared_dense

    settings = StoreSettings.resolve(str(args.work / "home"))
    nlp = TextToolkit(embed=shared_dense(settings.dense_model, settings.models_dir).embed)
    scorer = Scorer()
    _memoize(nlp)
    cases = []
    for name, article, gold in articles(args.data, args.work, args.only):
        path = args.work / "lead_inputs" / f"{name}.json"
        if path.is_file():
            cases.append((name, LeadInput.model_validate_json(path.read_text()), article["summary"]))
    if not cases:
        sys.exit(f"no captured lead inputs in {args.work / 'lead_inputs'}: run `capture` first")

    current = LEAD_PARAMS
    fields = list(LeadParams.model_fields)
    grid = [LeadParams(**dict(zip(fields, values))) for values in itertools.product(
        *(sorted(set(args.grid.get(k, [getattr(current, k)])) | {getattr(current, k)}) for k in fields))]
    print(f"{len(cases)} articles, {len(grid)} settings; current: {current!r}", flush=True)

    # per setting, per article: (rouge1, cosine, naming sentences, sentences)
    results: dict[int, list[tuple[float, float, int, int]]] = {}
    for g, setting in enumerate(grid):
        rows = []
        for _, inp, summary in cases:
            lead = strip_citations(extract_lead(inp, nlp, setting))
            named, total = naming(lead, inp.topic, nlp)
            rows.append((scorer.rouge1(lead, summary), scorer.cosine(lead, summary), named, total))
        results[g] = rows
        if g % 50 == 49:
            print(f"{g + 1}/{len(grid)} settings scored", file=sys.stderr, flush=True)

    def mean(g: int, idx: list[int]) -> tuple[float, float, float]:
        rows = [results[g][i] for i in idx]
        named, total = sum(r[2] for r in rows), sum(r[3] for r in rows)
        return (statistics.mean(r[0] for r in rows), statistics.mean(r[1] for r in rows),
                named / total if total else 0.0)

    def objective(g: int, idx: list[int]) -> float:
        r, c, _ = mean(g, idx)
        return r + c

    current = grid.index(current)
    everything = list(range(len(cases)))
    best = max(range(len(grid)), key=lambda g: (objective(g, everything), g == current))
    # 5-fold by article: the fold's articles are scored with the setting the other folds chose
    held: list[tuple[float, float, int, int] | None] = [None] * len(cases)
    chosen = []
    for f in range(args.folds):
        test = [i for i in everything if i % args.folds == f]
        train = [i for i in everything if i % args.folds != f]
        g = max(range(len(grid)), key=lambda g: (objective(g, train), g == current))
        chosen.append(grid[g])
        for i in test:
            held[i] = results[g][i]
    named, total = sum(r[2] for r in held), sum(r[3] for r in held)
    cv = (statistics.mean(r[0] for r in held), statistics.mean(r[1] for r in held), named / total)

    print(f"\n{'':<34} {'ROUGE-1 F1':>10} {'cosine':>7} {'naming':>7}")
    for label, (r, c, n) in [("current code (in-sample = held-out)", mean(current, everything)),
                             ("best setting, in-sample", mean(best, everything)),
                             (f"chosen by {args.folds}-fold CV, held-out", cv)]:
        print(f"{label:<34} {r:>10.3f} {c:>7.3f} {n:>7.2f}")
    print(f"\nbest in-sample setting: {grid[best]}")
    for f, setting in enumerate(chosen):
        print(f"fold {f + 1} chose: {setting}")
    if args.rows:
        print(f"\n{'article':<40} {'cur R1':>6} {'cur cos':>7} {'best R1':>7} {'best cos':>8}")
        for i, (name, _, _) in enumerate(cases):
            a, b = results[current][i], results[best][i]
            print(f"{name[:40]:<40} {a[0]:>6.3f} {a[1]:>7.3f} {b[0]:>7.3f} {b[1]:>8.3f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=["capture", "score"])
    parser.add_argument("--work", type=Path, required=True, help="a bench_report.py --work folder")
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "freshwiki")
    parser.add_argument("--only", action="append", default=[], help="only articles whose file name contains this")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--grid", type=json.loads, default={},
                        help='values to try per LeadParams field, JSON: {"naming": [0, 0.2, 0.4]}; '
                             'the others keep the current value')
    parser.add_argument("--rows", action="store_true", help="print per-article figures too")
    args = parser.parse_args()
    return capture(args) if args.step == "capture" else score(args)


if __name__ == "__main__":
    sys.exit(main())
