"""Every knob of the extractive outline (`agents.storm.headings.plan_headings`), as one printable value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # light to import: `ReportOptions` carries these knobs to the command line
    from agents.storm.topicality import Topicality


class OutlineParams(BaseModel):
    """Every knob of the extractive outline. The defaults were chosen by 5-fold cross-validation by
    article over the 40 FreshWiki dev articles, never by hand for an article:

        python -m scripts.calibrate.cv_outline --work DIR --grid precision --samples 60 --prune "" --filter

    The grid (the `corpus` grid's 130 draws as they were, then 60 draws of the cohesion floor, the
    person evidence, `sentences_per_heading`, `max_headings` and `kind_claim` around what it chose; all
    without the heading filter) chose the rest on all 40; then a logistic heading filter
    (`heading_filter`, `filter_threshold`) was fitted on the headings its plans considered. The
    research it reads is the report's: the conversations, then the survey (one search for the topic
    itself, `ReportOptions.survey_k` = 40 passages). In-sample: soft recall 0.732, heading match recall
    0.366, precision 0.514; chosen on 4 folds (the setting, the filter's coefficients and threshold) and
    scored on the 5th: soft 0.738 -> 0.719, match recall 0.350 -> 0.347, precision 0.501 -> 0.524
    (without -> with the filter). Over four fold splits (`--repeats 4`): held out 0.344 ± 0.004 / 0.508 ± 0.012;
    without the survey (round 22's defaults) 0.313 ± 0.010 / 0.489 ± 0.004. The survey's size is research, not
    outline, so this CV does not choose it: 20 passages give held out 0.336 / 0.489, 100 give 0.359 / 0.494, and
    choosing among 0, 20 and 40 inside the folds 0.340 / 0.497. The survey adds recall whatever its size;
    precision sits at 0.50 within noise (a tighter objective, `--min-precision 0.52`: 0.333 / 0.502). Before the
    survey, `kind_claim` added held-out recall (`--ablate kind_claim=1.0`: 0.304 / 0.463 without the filter,
    against 0.310 / 0.452).
    Round 21 also gave the lexicon the usual layouts of storms and other natural disasters, of
    competitions and of footballers' careers, and read a title's disambiguator ("Takeoff (rapper)") as
    the article kind; before (the same command): held out 0.676 / 0.274 / 0.482 with the filter. Those lexicon entries
    were written after reading the dev articles' headings, so the CV cannot vouch for them as it does
    for the numbers. Tried and dropped: keeping other kinds' sections as candidates for the sentences but
    not as headings (0.306 / 0.484 over four fold splits, against 0.314 / 0.489), a tighter precision
    objective (`--min-precision 0.55`: 0.261 / 0.497), pruning the lexicon by its misses on the training
    folds (it fits the training articles).
    Round 25 (the research cache rebuilt; over eight fold splits these defaults give held out 0.348 ± 0.010 /
    0.493 ± 0.009): the CV scores the outline stage's own outline, while a report's outline
    (`storm_gen_outline.txt`) then loses the sections the writers found nothing new for, which raises its
    precision; `scripts/bench_report.py` end to end, in-sample: match recall 0.32, precision 0.58. Held out,
    each fold's outline less the headings those reports dropped (`--writers`, an estimate that keeps any
    heading the defaults did not plan), over eight splits: 0.303 ± 0.010 / 0.521 ± 0.016 (recall 0.292-0.326,
    precision 0.487-0.543). A floor of
    0.55 in the objective chose a stricter outline (at most 12 headings, about 6 sentences each, a cohesion
    floor of 0.26, a 0.15 filter threshold): held out over eight splits 0.319 ± 0.006 / 0.518 ± 0.015 for the
    outline stage, but end to end 0.29 / 0.57, so the writers' own pruning already gave what it added, and
    these defaults stay. Weighting each article alike in the filter's fit moved along the same curve
    (0.312 / 0.521 at that floor, four splits). FreshWiki corpora have no headings of their own, so
    `under_heading` and `document_topic` keep their earlier values: this CV cannot choose them.
    Round 26 measured the outline a report delivers held out, not an estimate: `cv_outline.py --export DIR`
    writes each article's knobs as chosen on the folds without it, and `bench_report.py --outline-params-dir
    DIR/seedS` runs whole reports with them (`raystorm report --outline-params FILE`). These defaults, over eight
    fold splits: soft 0.680 ± 0.011, match recall 0.299 ± 0.006 (0.289-0.310), precision 0.544 ± 0.015
    (0.521-0.568). With `writable_fit` 0.3 (the writer's floor: a heading it would leave empty is not planned, which
    removed 28 of the 51 sections the writers dropped in split 0 and 2 of the 264 they kept) and every knob chosen
    again by the CV: outline stage 0.330 ± 0.008 / 0.500 ± 0.018, whole reports 0.698 ± 0.009 / 0.303 ± 0.007 /
    0.520 ± 0.018 (precision 0.499-0.556): a point on the same curve, so `writable_fit` stays off."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    assign_threshold: float = Field(0.2, description="a sentence less similar than this to every candidate "
                                                     "stays unassigned")
    kind_evidence: float = Field(0.75, ge=0, le=1, description="how much the evidence, against the topic's "
                                                               "words, decides the article kind")
    person_evidence: float = Field(0.2, ge=0, description="how much evidence told of a 'he' or 'she' counts "
                                   "for the article kind 'person' (`lexicon.article_kind`)")
    kind_prior: float = Field(0.12, description="bonus for the usual sections of the topic's article kind")
    preferred_prior: float = Field(0.04, description="bonus for headings the caller prefers (a draft outline)")
    under_heading: float = Field(0.12, description="bonus for a document heading from the sentences under it")
    document_topic: float = Field(1.0, description="weight of how related a document heading is to the topic")
    kind_claim: float = Field(0.3, description="a usual section of the article kind with too few sentences "
                              "of its own also takes those at least this similar to it that went to other "
                              "headings (1: never)")
    min_share: float = Field(0.02, description="a heading needs this share of the sentences ...")
    min_support: int = Field(2, ge=1, description="... and at least this many")
    sentences_per_heading: int = Field(4, ge=1, description="thin evidence makes a short outline")
    synonym: float = Field(0.8, description="headings this similar name one section")
    min_cohesion: float = Field(0.0, ge=0, description="a heading whose sentences are on average less similar "
                                "than this to its own name and cue (`_cohesion`) is dropped: the evidence went to "
                                "it for want of a better one (the most cohesive heading is always kept)")
    heading_filter: tuple[float, ...] = Field((-4.116, -0.809, 0.0, 0.473, 0.954, -1.609, -0.106, 8.7, -0.247,
                                               2.596, 2.379, 0.473, -0.376, -0.186), description="coefficients of a logistic model over "
                                              "`headings.HEADING_FEATURES` (bias first) of how likely a heading is "
                                              "to name a section of the article; () : no filter")
    filter_threshold: float = Field(0.2, gt=0, lt=1, description="a heading the filter gives a lower "
                                    "probability is dropped (the most cohesive heading is always kept)")
    writable_fit: float = Field(0.0, ge=0, description="a heading no evidence sentence that stands alone fits "
                                "this well is left out: the section writer would leave it empty (0.3 is its "
                                "`steps_article.MIN_HEADING_FIT`; 0: off, the default: round 26)")
    min_headings: int = Field(4, ge=1)
    min_fitting: int = Field(3, ge=0, description="fewer fitting headings than this and key phrases name the rest")
    max_headings: int = Field(20, ge=1, description="headings in all, subsections included")
    lexicon_scope: Literal["all", "kind"] = Field("all", description="lexicon candidates: every section type, "
                                                  "or only the usual sections of the topic's article kind")
    dropped_sections: tuple[str, ...] = Field((), description="lexicon sections never proposed")
    entity_headings: int = Field(4, ge=0, description="at most this many names that recur across the sources "
                                                      "become headings of their own")
    entity_min_sources: int = Field(2, ge=1, description="a name must occur in this many sources")
    entity_min_share: float = Field(0.06, ge=0, description="and in this share of the evidence sentences")
    entity_place: float = Field(0.45, description="and be at least this similar to the word 'country' or 'city' "
                                                  "(places head sections; people and films seldom do)")
    phrase_max_fit: float = Field(0.3, description="phrase headings only for evidence that fits its article "
                                                   "kind less than this (cosine of its centroid to the kind): "
                                                   "where the lexicon misleads")
    phrase_headings: int = Field(4, ge=0, description="at most this many common-noun phrases that recur across "
                                                      "the sources become headings of their own")
    phrase_min_sources: int = Field(2, ge=1, description="a phrase must occur in this many sources")
    phrase_min_share: float = Field(0.06, ge=0, description="and in this share of the evidence sentences")
    phrase_noun_share: float = Field(0.3, ge=0, le=1, description="and follow a determiner ('the', 'a', 'its') "
                                                                 "in this share of them: a noun, not a verb")
    # which sentences are about the topic (`topicality.Topicality`; the research and article steps keep its
    # defaults, 0.6 / 25 / 4: this CV scores outlines only)
    topic_telling_share: float = Field(0.8, gt=0, le=1,
                                       description="a topic word in more than this share of the sentences "
                                                   "does not tell them apart")
    topic_named_percentile: float = Field(10, ge=0, le=100,
                                          description="a sentence not naming the topic must be as close to it as "
                                                      "this percentile of those that do")
    topic_min_word: int = Field(5, ge=1, description="shorter topic words are ignored")

    def topicality(self) -> Topicality:
        from agents.storm.topicality import Topicality

        return Topicality(telling_share=self.topic_telling_share, named_percentile=self.topic_named_percentile,
                          min_word=self.topic_min_word)


OUTLINE_PARAMS = OutlineParams()
# The plan the personas' aspects come from (`steps_perspectives`). `scripts/calibrate/cv_outline.py` holds the research
# fixed while it varies the outline's knobs, so the research must not follow them: it keeps its own copy
# (these defaults as of round 24), and a change to the outline's defaults leaves the research as it was.
RESEARCH_PLAN_PARAMS = OutlineParams(
    person_evidence=0.2, kind_claim=0.3, sentences_per_heading=4, min_cohesion=0.0, max_headings=20, writable_fit=0.0,
    heading_filter=(-4.116, -0.809, 0.0, 0.473, 0.954, -1.609, -0.106, 8.7, -0.247, 2.596, 2.379, 0.473, -0.376,
                    -0.186), filter_threshold=0.2)


def load_outline_params(path: str | None) -> OutlineParams | None:
    """The `OutlineParams` a `--outline-params` file holds; None without one; a one-line error for a missing file,
    a file that is not JSON, or a field out of range."""
    import json
    from pathlib import Path

    from pydantic import ValidationError

    from retrieval.errors import UsageError

    if path is None:
        return None
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"--outline-params {path}: no such file")
    try:
        return OutlineParams.model_validate(json.loads(file.read_text(encoding="utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"--outline-params {path}: not a JSON object ({exc})") from exc
    except ValidationError as exc:
        wrong = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'the file'}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"--outline-params {path}: {wrong} (the fields are OutlineParams' in "
                         f"agents/storm/outline_params.py)") from exc
