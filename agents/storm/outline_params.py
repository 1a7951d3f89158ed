"""Every knob of the extractive outline (`agents.storm.headings.plan_headings`), as one printable value."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.storm.topicality import Topicality


class OutlineParams(BaseModel):
    """Every knob of the extractive outline. The defaults were chosen by 5-fold cross-validation by
    article over the 40 FreshWiki dev articles, never by hand for an article:

        python scripts/cv_outline.py --work DIR --grid precision --samples 60 --prune "" --filter

    The grid (the `corpus` grid's 130 draws as they were, then 60 draws of the cohesion floor, the
    person evidence, `sentences_per_heading` and `max_headings` around what it chose; all without the
    heading filter) chose the rest on all 40; then a logistic heading filter (`heading_filter`,
    `filter_threshold`) was fitted on the headings its plans considered, with the threshold and a
    looser pool of headings (`cv_outline_folds.FILTER_VARIANTS`) chosen for the objective. In-sample:
    soft recall 0.686, heading match recall 0.293, precision 0.512; chosen on 4 folds (the setting,
    the filter's coefficients and threshold) and scored on the 5th: soft 0.706 -> 0.676, match recall
    0.278 -> 0.279, precision 0.462 -> 0.504 (without -> with the filter). The filter keeps the recall
    and buys precision; looser pools of headings for it to choose from (no minimum support, phrase
    headings and names for any evidence, `assign_threshold` 0.15) raised the in-sample figures (0.673
    / 0.306 / 0.512) and lowered the held-out ones (0.642 / 0.270 / 0.468). Without the filter the
    grid's choice is, in-sample, 0.714 / 0.296 / 0.473 (the same command without `--filter` and with
    `--ablate min_cohesion=0 --ablate person_evidence=0`). The `corpus` grid's choice
    before (`--grid corpus --samples 60`): held out 0.731 / 0.291 / 0.434, in-sample 0.733 / 0.294 /
    0.438. The cohesion floor chose 0.24 in four folds of five (0.28 in one): it buys held-out
    precision for a little recall (`--ablate min_cohesion=0`: held out 0.732 / 0.287 / 0.433); the
    person evidence adds little (`--ablate person_evidence=0`: 0.710 / 0.282 / 0.455). Letting the
    grid also vary `min_headings` (2, 4) and `kind_prior` (0.12, 0.2) raised the in-sample figures and
    lowered the held-out ones (`--samples 80`: 0.711 / 0.269 / 0.452), so they stay. Earlier:
    `--grid narrow --samples 70` (no phrase headings, topicality's own constants) held out 0.693 /
    0.258 / 0.386; the old hand-set constants 0.675 / 0.248 / 0.396 in-sample. FreshWiki corpora have
    no headings of their own, so `under_heading` and `document_topic` keep their earlier values: this
    CV cannot choose them. Pruning the lexicon by its misses on the training folds (`--prune
    0.1,0.2,0.34`) raises held-out precision to 0.478 but lowers recall to 0.269 (in-sample 0.319 /
    0.557: it fits the training articles), so no section is dropped."""

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
    min_share: float = Field(0.02, description="a heading needs this share of the sentences ...")
    min_support: int = Field(2, ge=1, description="... and at least this many")
    sentences_per_heading: int = Field(6, ge=1, description="thin evidence makes a short outline")
    synonym: float = Field(0.8, description="headings this similar name one section")
    min_cohesion: float = Field(0.24, ge=0, description="a heading whose sentences are on average less similar "
                                "than this to its own name and cue (`_cohesion`) is dropped: the evidence went to "
                                "it for want of a better one (the most cohesive heading is always kept)")
    heading_filter: tuple[float, ...] = Field((-4.313, 0.423, 0.0, 1.532, 1.867, -2.64, -0.079, 7.867, -0.345,
                                               2.041, 1.665, 0.257, -0.181, -0.17), description="coefficients of a logistic model over "
                                              "`headings.HEADING_FEATURES` (bias first) of how likely a heading is "
                                              "to name a section of the article; () : no filter")
    filter_threshold: float = Field(0.15, gt=0, lt=1, description="a heading the filter gives a lower "
                                    "probability is dropped (the most cohesive heading is always kept)")
    min_headings: int = Field(4, ge=1)
    min_fitting: int = Field(3, ge=0, description="fewer fitting headings than this and key phrases name the rest")
    max_headings: int = Field(14, ge=1, description="headings in all, subsections included")
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
        return Topicality(telling_share=self.topic_telling_share, named_percentile=self.topic_named_percentile,
                          min_word=self.topic_min_word)


OUTLINE_PARAMS = OutlineParams()
