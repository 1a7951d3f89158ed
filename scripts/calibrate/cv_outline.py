#!/usr/bin/env python3
"""Cross-validate the extractive outline stage on FreshWiki: every parameter chosen on other articles.

For each FreshWiki article, once (cached under --work): its research corpus (the shared
`freshwiki_corpus.py`: the article's structure hidden), ingested into an embedded Qdrant
store, and the research stage of a report (personas and writer-expert conversations with the
extractive model, then the survey: one search for the topic itself; the article's own URL excluded),
kept as `research/NAME.json`. Then only the
outline stage runs, for every setting of `OutlineParams` in a grid, and its outline is scored
with the shared `outline_metrics.py` definitions (heading soft recall, heading match recall and
precision).

K-fold cross-validation by article: for each fold, the setting with the best objective on the
other folds' articles is chosen and scored on the fold's own articles. Printed per fold and as
the mean: in-sample (the chosen setting on its training articles) and cross-validated figures,
then the setting chosen on all articles (what `OutlineParams` defaults to) and the old constants.
The objective is mean match recall less twice any shortfall of mean match precision below
--min-precision. Settings: the defaults, the old constants and --samples random draws from a
grid's axes (`GRIDS`; folds, objective and grids are in `cv_outline_folds.py`); `--prune TAUS`
also tries dropping the lexicon sections that missed on the training folds; `--filter` also learns a
logistic heading filter on the training folds (`cross_validate_filter`) on top of the chosen setting. One fold split's
held-out figure moves by about 0.01 with --seed; `--repeats N` runs the CV over N splits and prints their mean and
spread (`held_out_over_splits`). Scores are kept per setting and article under --work while the code is unchanged.
With `--writers BENCH_WORK` (a `bench_report.py --work` folder run with the defaults) the splits are also scored as a
report's outline: less the sections its writers found nothing new for (`held_out_as_written`, an estimate).
With `--export DIR` each split's held-out knobs are written per article, and `bench_report.py --outline-params-dir`
measures whole reports with them: the held-out figure of what a report delivers, not an estimate.

usage: python -m scripts.calibrate.cv_outline --work DIR [--data DIR] [--tools DIR] [--folds 5] [--seed 0] [--repeats 1]
                                    [--grid precision|corpus|narrow|random|defaults] [--samples N] [--prune TAUS]
                                    [--only NAME] [--prepare-only] [--show] [--filter] [--ablate FIELD=VALUE]
                                    [--writers BENCH_WORK] [--export DIR]
e.g.   python -m scripts.calibrate.cv_outline --work DIR --grid precision --samples 60 --prune ""
           --ablate min_cohesion=0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from scripts.calibrate.cv_outline_folds import (CORPUS_CHOSEN, GRIDS, LEGACY, NO_FILTER, PREVIOUS, cross_validate,
                                                cross_validate_filter, describe, folds_by_article, grid,
                                                held_out_over_splits, mean, report_cv, report_splits)
from scripts.shared_tools import metrics_module

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


# --- preparation: corpus and research, once per article ---------------------------------------------


def build_corpus(article: Path, work: Path, tools: Path) -> Path:
    corpus = work / "corpora" / article.stem
    if not (corpus / "gold_outline.json").is_file():
        done = subprocess.run([sys.executable, str(tools / "freshwiki_corpus.py"), str(article), str(corpus)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"freshwiki_corpus.py failed on {article.name}:\n{done.stderr[-2000:]}")
    return corpus


async def _research(topic: str, corpus: Path, collection: str, exclude: list[str], home: Path,
                    conversations: list | None = None):
    """Personas, conversations and the survey (`stages.survey_topic`) as `raystorm report` runs them
    (extractive model, its defaults); with `conversations` (research cached before the survey), the
    survey only."""
    from agents.lm.extractive import ExtractiveModel
    from agents.lm.nlp import TextToolkit
    from agents.stage import StageContext
    from agents.storm.conversation import run_conversation
    from agents.storm.options import SURVEY_PASSAGES
    from agents.storm.persona import find_personas
    from agents.storm.records import ConversationLog
    from agents.storm.stages import SurveyArgs, survey_topic
    from retrieval.config import StoreSettings
    from retrieval.ingest import Ingestor
    from retrieval.search import AsyncCorpus, Corpus

    settings = StoreSettings(data_dir=str(home))
    ingestor = Ingestor(settings)
    try:
        ingestor.ingest_paths([corpus / "docs"], collection)
        retriever = AsyncCorpus(Corpus(settings, collection, store=ingestor.store, dense=ingestor.dense,
                                       sparse=ingestor.sparse))
        models = ExtractiveModel(TextToolkit(embed=ingestor.dense.embed))
        if conversations is None:
            plan = await find_personas(topic, models, retriever, max_personas=3, questions_per_persona=3,
                                       exclude_urls=exclude)
            conversations = [await run_conversation(topic, p, models, retriever, max_turns=3, search_k=8,
                                                    exclude_urls=exclude) for p in plan.personas]
        survey = await survey_topic(SurveyArgs(topic=topic, k=SURVEY_PASSAGES, exclude_urls=exclude),
                                    StageContext(models, retriever))
        retriever._pool.shutdown(wait=True)
        return ConversationLog(conversations=conversations, survey=survey)
    finally:
        ingestor.store.close()


def research(article: Path, work: Path, tools: Path) -> dict:
    """{'topic', 'gold' (headings), 'log' (ConversationLog JSON), 'survey_k'}, computed once (research
    cached with another `survey_k` gets the survey anew, its conversations kept)."""
    from agents.storm.options import SURVEY_PASSAGES
    from agents.storm.records import Conversation

    cached = work / "research" / f"{article.stem}.json"
    known = json.loads(cached.read_text()) if cached.is_file() else None
    if known is not None and known.get("survey_k") == SURVEY_PASSAGES:
        return known
    corpus = build_corpus(article, work, tools)
    gold = json.loads((corpus / "gold_outline.json").read_text())
    collection = "fw-" + re.sub(r"[^a-z0-9]+", "-", article.stem.lower()).strip("-")[:40]
    held = None if known is None else [Conversation.model_validate(c) for c in known["log"]["conversations"]]
    log = asyncio.run(_research(gold["topic"], corpus, collection, [gold["url"]], work / "home", held))
    out = {"topic": gold["topic"], "gold": [h["heading"] for h in gold["headings"]], "log": log.model_dump(),
           "survey_k": SURVEY_PASSAGES}
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(out))
    return out


# --- evaluation: the outline stage alone, scored with the shared metric -----------------------------


class CachedEmbedder:
    """The metric's embedder, each heading embedded once."""

    def __init__(self, embedder):
        self.embedder, self.cache = embedder, {}

    def embed(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.embedder.embed(missing)))
        return [self.cache[t] for t in texts]


class Article:
    """One article's cached research as the outline stage reads it, and its gold headings."""

    def __init__(self, name: str, cached: dict, nlp, metric):
        from agents.storm.outline import refine_input
        from agents.storm.records import ConversationLog
        from agents.storm.stages import table_sources
        from agents.storm.steps_outline import DraftOutline, DraftOutlineInput, clean_outline
        from retrieval.snippets import group_by_url

        self.name, self.topic = name, cached["topic"]
        self.gold = [h for h in cached["gold"] if h.lower() not in metric.SKIP]
        log = ConversationLog.model_validate(cached["log"])
        # the information table's order (retrieval.infotable.InformationTable.snippets): one copy of each
        unique = {s.point_id: s for s in table_sources(log)}
        ordered = sorted(unique.values(), key=lambda s: (s.url, s.path, s.record or 0, s.line_start, s.line_end,
                                                         s.passage_id))
        snippets = [s for e in group_by_url(ordered).values() for s in e.snippets]
        draft = clean_outline(DraftOutline.extract(DraftOutlineInput(topic=self.topic), nlp), self.topic)
        self.inputs = {}  # by max_headings
        self._make = lambda m: refine_input(self.topic, draft, log, snippets, m)

    def input(self, max_headings: int):
        if max_headings not in self.inputs:
            self.inputs[max_headings] = self._make(max_headings)
        return self.inputs[max_headings]


def memoize_outline_helpers() -> None:
    """What depends on few of `OutlineParams` (which sentences are about the topic, similarity matrices)
    is worked out once per article: a speed-up for the grid only, the results are the same."""
    import agents.storm.headings as headings
    import agents.storm.lexicon as lexicon

    def memo(fn, key, copy=lambda x: x):
        cache = {}

        def cached(*args):
            k = key(*args)
            if k not in cache:
                cache[k] = fn(*args)
            return copy(cache[k])
        return cached

    texts = lambda xs: tuple(x.text if hasattr(x, "text") else x for x in xs)  # noqa: E731
    headings.topical_sentences = memo(headings.topical_sentences,
                                      lambda t, sources, nlp, rule: (t, tuple((s.text, s.title, s.section)
                                                                              for s in sources), rule), list)
    similarity = memo(headings.similarity, lambda a, b, nlp: (texts(a), texts(b)), lambda m: m.copy())
    headings.similarity = lexicon.similarity = similarity
    lexicon.vectors = memo(lexicon.vectors, lambda a, nlp, v=(): (texts(a), texts(v)), lambda m: m.copy())


class PlanRecorder:
    """Keeps the last plan `outline_from_evidence` made (`steps_outline.plan_headings` wrapped): the
    headings it considered and their features, for the learned heading filter."""

    def __init__(self):
        import agents.storm.steps_outline as steps

        self.last, inner = None, steps.plan_headings

        def recording(*args, **kwargs):
            self.last = inner(*args, **kwargs)
            return self.last
        steps.plan_headings = recording


PLANS: PlanRecorder | None = None


def code_version(research: dict[str, dict]) -> str:
    """A hash of the outline stage's code and of what it reads (the cached research): cached scores are
    reused only while both are unchanged."""
    import hashlib

    parts = ["agents/storm/headings.py", "agents/storm/heading_models.py", "agents/storm/heading_filter.py",
             "agents/storm/lexicon.py", "agents/storm/topicality.py",
             "agents/storm/steps_outline.py", "agents/storm/evidence.py", "agents/storm/outline.py"]
    inputs = json.dumps(research, sort_keys=True).encode()
    return hashlib.sha256(b"".join((ROOT / p).read_bytes() for p in parts) + inputs).hexdigest()[:12]


def score(article: Article, params, nlp, metric, emb) -> dict:
    from agents.storm.steps_outline import clean_outline, outline_from_evidence

    outline = clean_outline(outline_from_evidence(article.input(params.max_headings), nlp, params), article.topic)
    topic = article.topic.lower()
    pred = [h for h in outline.headings() if h.lower() not in metric.SKIP and h.lower() != topic]
    recall, precision = metric.match_recall(article.gold, pred, emb)
    # every heading the plan considered, with its features and whether it names a gold heading
    considered = [c for c in PLANS.last.considered if c.heading.lower() not in metric.SKIP
                  and c.heading.lower() != topic]
    matched = matches(article.gold, pred, emb)
    return {"soft": metric.soft_recall(article.gold, pred, emb), "recall": recall, "precision": precision,
            "pred": pred, "matched": matched,
            "considered": [[c.heading, [round(x, 4) for x in c.features], m]
                           for c, m in zip(considered, matches(article.gold, [c.heading for c in considered], emb))]}


def held_out_as_written(arts: dict, defaults: dict[str, dict], bench: Path, names: list[str], k: int,
                        seeds: list[int], run, metric, emb) -> list[dict]:
    """A report's outline (`storm_gen_outline.txt`) keeps only the sections its writers found something new
    for. For each fold split, each article's held-out outline less the headings that the defaults' outline of
    the article planned and the report run in `bench` (`bench_report.py --work`, with the defaults) dropped."""
    from agents.storm.artifacts import topic_slug

    dropped = {}
    for n in names:
        path = bench / "runs" / "storm" / topic_slug(arts[n].topic) / "storm_gen_outline.txt"
        if not path.is_file():
            sys.exit(f"--writers: no {path} (run python -m scripts.bench_report --work {bench} first)")
        dropped[n] = set(defaults[n]["pred"]) - set(metric.read_pred(str(path), arts[n].topic))
    out = []
    for seed in seeds:
        folds = folds_by_article(names, k, seed)
        rows = []
        for held, result in zip(folds, run(folds)):
            for n, row in zip(held, result["test"]):
                pred = [h for h in row["pred"] if h not in dropped[n]]
                recall, precision = metric.match_recall(arts[n].gold, pred, emb)
                rows.append({"soft": metric.soft_recall(arts[n].gold, pred, emb), "recall": recall,
                             "precision": precision})
        out.append({"seed": seed, **{key: mean(rows, key) for key in ("soft", "recall", "precision")}})
    return out


def export_held_out_knobs(out: Path, names: list[str], k: int, seeds: list[int], run) -> None:
    """For each fold split, each article's knobs as chosen without it: `out/seedS/NAME.json`, the whole
    `OutlineParams` (`raystorm report --outline-params` reads it), so that whole reports can be scored held out."""
    from agents.storm.outline_params import OutlineParams

    for seed in seeds:
        folds = folds_by_article(names, k, seed)
        folder = out / f"seed{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        for held, result in zip(folds, run(folds)):
            knobs = OutlineParams(**result["setting"]).model_dump(mode="json")
            for name in held:
                (folder / f"{name}.json").write_text(json.dumps(knobs, indent=1) + "\n", encoding="utf-8")
        print(f"held-out knobs of fold split {seed}: {folder}/ ({len(names)} articles)")


def matches(gold: list[str], headings: list[str], emb) -> list[bool]:
    """For each heading, whether its closest gold heading has cosine >= 0.6 (the metric's match)."""
    if not headings or not gold:
        return [False] * len(headings)
    import numpy as np
    g = np.stack([v / np.linalg.norm(v) for v in emb.embed(gold)])
    q = np.stack([v / np.linalg.norm(v) for v in emb.embed(headings)])
    return [bool(x) for x in (g @ q.T).max(axis=0) >= 0.6]


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "freshwiki")
    parser.add_argument("--tools", type=Path, default=SHARED / "tools")
    parser.add_argument("--work", type=Path, required=True, help="corpora, store and research cache (reused)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="shuffles the articles before the fold split")
    parser.add_argument("--repeats", type=int, default=1, help="also run the CV over this many fold splits (seeds "
                        "--seed, --seed+1, ...) and print the mean and spread of the held-out figures")
    parser.add_argument("--min-precision", type=float, default=0.5)
    parser.add_argument("--grid", default="random", choices=["defaults", *GRIDS])
    parser.add_argument("--samples", type=int, default=60, help="settings drawn from the grid (random)")
    parser.add_argument("--prune", default="0.34,0.5", help="match rates below which a lexicon section is "
                        "dropped, tried on the training folds ('' : never)")
    parser.add_argument("--only", action="append", default=[], help="only articles whose file name contains this")
    parser.add_argument("--prepare-only", action="store_true", help="build corpora and research, then stop")
    parser.add_argument("--show", action="store_true", help="print each article's outline under the chosen setting")
    parser.add_argument("--filter", action="store_true", help="also learn a heading filter on each fold's "
                        "training articles (`cross_validate_filter`); the setting chosen on all then has one")
    parser.add_argument("--writers", type=Path, metavar="BENCH_WORK",
                        help="a `scripts/bench_report.py --work` folder run with the current defaults: with "
                             "--repeats, also print the held-out figures of the outline a report keeps, each "
                             "held-out outline less the headings the writers dropped from the defaults' outline "
                             "of that article there (an estimate: a heading the defaults did not plan is kept)")
    parser.add_argument("--export", type=Path, metavar="DIR",
                        help="write DIR/seedS/ARTICLE.json for each fold split S (--seed, and the --repeats): the "
                             "knobs chosen on the folds that hold the article out, for `scripts/bench_report.py "
                             "--outline-params-dir DIR/seedS` (the held-out figure of whole reports)")
    parser.add_argument("--ablate", action="append", default=[], metavar="FIELD=VALUE",
                        help="also cross-validate over only the settings with FIELD at VALUE (e.g. min_cohesion=0: "
                             "what the field adds held out); repeat for more")
    args = parser.parse_args()
    articles = sorted(p for p in args.data.glob("*.json") if not args.only or any(o in p.name for o in args.only))
    if not articles:
        sys.exit(f"no FreshWiki articles in {args.data}")
    cached = {}
    for a in articles:
        started = time.monotonic()
        fresh = not (args.work / "research" / f"{a.stem}.json").is_file()
        cached[a.stem] = research(a, args.work, args.tools)
        if fresh:
            print(f"research {a.stem}: {time.monotonic() - started:.0f} s", flush=True)
    if args.prepare_only:
        return 0

    from agents.lm.nlp import TextToolkit
    from agents.storm.outline_params import OutlineParams
    from retrieval.embeddings import shared_dense
    from retrieval.config import StoreSettings

    settings = StoreSettings(data_dir=str(args.work / "home"))
    nlp = TextToolkit(embed=shared_dense(settings.dense_model, settings.models_dir).embed)
    metric = metrics_module(args.tools)
    emb = CachedEmbedder(metric.embedder())
    memoize_outline_helpers()
    global PLANS
    PLANS = PlanRecorder()
    arts = {n: Article(n, c, nlp, metric) for n, c in cached.items()}
    settings_list = grid(args.grid, args.samples, seed=0)  # the same draws whatever the fold split
    started = time.monotonic()
    # scores of each setting on each article, kept across runs while the outline code is unchanged
    store = args.work / "scores" / f"{code_version(cached)}.jsonl"
    store.parent.mkdir(parents=True, exist_ok=True)
    cache: dict[str, dict] = {}
    if store.is_file():
        for line in store.read_text().splitlines():
            entry = json.loads(line)
            cache.setdefault(entry["key"], {})[entry["article"]] = entry["row"]
    fresh = 0

    def evaluate(overrides: dict) -> dict[str, dict]:
        nonlocal fresh
        key = json.dumps(OutlineParams(**overrides).model_dump(mode="json"), sort_keys=True)
        have = cache.setdefault(key, {})
        missing = [n for n in arts if n not in have]
        if missing:
            params = OutlineParams(**overrides)
            with store.open("a") as out:
                for n in missing:
                    have[n] = score(arts[n], params, nlp, metric, emb)
                    out.write(json.dumps({"key": key, "article": n, "row": have[n]}) + "\n")
            fresh += 1
            if fresh % 5 == 0:
                print(f"evaluated {fresh} new settings ({time.monotonic() - started:.0f} s)", flush=True)
        return {n: have[n] for n in arts}

    table = [evaluate(o) for o in settings_list]
    names = sorted(arts)
    taus = [float(t) for t in args.prune.split(",") if t.strip()] if args.prune else []
    folds = folds_by_article(names, args.folds, args.seed)
    report_cv(table, settings_list, names, folds, args.min_precision, evaluate, taus)
    for ablation in args.ablate:
        field, _, value = ablation.partition("=")
        keep = [i for i, o in enumerate(settings_list)
                if str(getattr(OutlineParams(**o), field)) == str(type(getattr(OutlineParams(), field))(value))]
        results = cross_validate([table[i] for i in keep], [settings_list[i] for i in keep], names, folds,
                                 args.min_precision, evaluate, taus)
        test = [row for r in results for row in r["test"]]
        train = {k: sum(mean(r["train"], k) for r in results) / len(results) for k in ("soft", "recall", "precision")}
        print(f"only {field}={value} ({len(keep)} settings): in-sample soft {train['soft']:.3f}, match R "
              f"{train['recall']:.3f}, P {train['precision']:.3f}; held out soft {mean(test, 'soft'):.3f}, match R "
              f"{mean(test, 'recall'):.3f}, P {mean(test, 'precision'):.3f}")
    if args.filter:
        results = cross_validate_filter(table, settings_list, names, folds, args.min_precision, evaluate)
        report_cv(table, settings_list, names, folds, args.min_precision, results=results,
                  title=", then a learned heading filter")
        final = cross_validate_filter(table, settings_list, names, [[]], args.min_precision, evaluate)[0]
    else:
        final = cross_validate(table, settings_list, names, [[]], args.min_precision, evaluate, taus)[0]
    def run(split: list[list[str]]) -> list[dict]:
        if args.filter:
            return cross_validate_filter(table, settings_list, names, split, args.min_precision, evaluate)
        return cross_validate(table, settings_list, names, split, args.min_precision, evaluate, taus)

    seeds = list(range(args.seed, args.seed + args.repeats))
    if args.export:
        export_held_out_knobs(args.export, names, args.folds, seeds, run)
    if args.repeats > 1:
        report_splits(held_out_over_splits(names, args.folds, seeds, run),
                      title=", then a learned heading filter" if args.filter else "")
        if args.writers:
            report_splits(held_out_as_written(arts, evaluate({}), args.writers, names, args.folds, seeds, run,
                                              metric, emb), title=", less the headings the writers dropped")
    rows = final["train"]
    print(f"\nchosen on all {len(names)} (in-sample): soft {mean(rows, 'soft'):.3f}, match R "
          f"{mean(rows, 'recall'):.3f}, P {mean(rows, 'precision'):.3f}\n  {describe(final['setting'])}")
    for label, overrides in (("before CV (old constants)", {**NO_FILTER, **LEGACY}),
                             ("previous defaults", {**NO_FILTER, **PREVIOUS}),
                             ("chosen by the corpus grid", {**NO_FILTER, **CORPUS_CHOSEN}),
                             ("OutlineParams() defaults", {})):
        rows = [evaluate(overrides)[n] for n in names]
        print(f"{label}: soft {mean(rows, 'soft'):.3f}, match R {mean(rows, 'recall'):.3f}, "
              f"P {mean(rows, 'precision'):.3f}")
    print(f"({fresh} settings evaluated anew in {time.monotonic() - started:.0f} s; scores kept in {store})")
    chosen = evaluate(final["setting"])
    if args.show:
        for n in names:
            r = chosen[n]
            print(f"{n[:34]:<34} R {r['recall']:.2f} P {r['precision']:.2f} | "
                  + " | ".join(("+" if m else "") + h for h, m in zip(r["pred"], r["matched"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
