"""The learned heading filter of the extractive outline: what is known of a heading, and the test.

`heading_features` describes each heading `plan_headings` would keep (`HEADING_FEATURES`);
`passes_filter` keeps those a logistic model over them gives at least the threshold's probability
of matching a real heading. The coefficients and threshold are `OutlineParams.heading_filter` and
`filter_threshold`, fitted on training folds by `scripts/calibrate/cv_outline_folds.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from agents.storm.heading_models import Heading
from agents.storm.lexicon import ArticleKind

HEADING_FEATURES = ("bias", "lexicon", "document", "entity", "phrase", "share", "log support", "cohesion",
                    "log rank", "kind section", "kind fit", "name", "demonym", "words")
# an adjective of a place or people ("American", "Icelandic", "Pakistani"): English word endings, not a list
_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:an|ese|ish|ic|i)$")


def heading_features(chosen: list[Heading], cohesion: list[float], kind: ArticleKind, fit: float,
                     sentences: int) -> np.ndarray:
    """What `plan_headings` knows of each heading (`HEADING_FEATURES`): which source proposed it, its
    share of the evidence and support, its cohesion, its rank by support, whether it is a usual section
    of the article kind and how well the evidence fits that kind, whether it reads as a proper name or a
    demonym, and its length in words. The learned filter's input."""
    rows = []
    for rank, (c, x) in enumerate(zip(chosen, cohesion)):
        words = c.heading.split()
        rows.append([1.0, c.source == "lexicon", c.source == "document", c.source == "entity",
                     c.source == "phrase", c.support / max(sentences, 1), np.log1p(c.support), x, np.log1p(rank),
                     c.heading in kind.sections, fit,
                     len(words) > 1 and all(w[:1].isupper() for w in words) or c.source == "entity",
                     len(words) == 1 and bool(_DEMONYM.match(c.heading)), len(words)])
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(HEADING_FEATURES))


def passes_filter(features: np.ndarray, coefficients: Sequence[float], threshold: float) -> np.ndarray:
    """Which rows of `features` the logistic model keeps: probability of a match >= `threshold`."""
    if len(coefficients) != len(HEADING_FEATURES):
        raise ValueError(f"heading_filter has {len(coefficients)} coefficients, the features are "
                         f"{len(HEADING_FEATURES)}: {', '.join(HEADING_FEATURES)}")
    return features @ np.array(coefficients, dtype=np.float64) >= np.log(threshold / (1 - threshold))
