"""Which evidence sentences are about the topic itself.

Retrieval brings passages that share a word with the topic but are about something
else: in a company's documents every passage says "Harborline", so a search for
"Harborline cyber add-on" also returns the flood deductible. A sentence is about the
topic when it (or its document's title or heading) uses a *telling* word of the topic,
one that most of the sentences at hand do not use; or else when it is about as close in meaning
to the telling part of the topic as the sentences that name it are. When every topic word is
everywhere, or no sentence names the topic's telling part, nothing is set aside.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agents.lm.nlp import TextToolkit
from agents.storm.evidence import EvidenceSentence, sentences_of, similarity
from retrieval.cjk import has_cjk
from retrieval.documents import PassageText


class Topicality(BaseModel):
    """The rule's three numbers. The outline stage's are chosen by cross-validation (`OutlineParams`,
    `scripts/calibrate/cv_outline.py`); the research and article steps use these defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    telling_share: float = Field(0.6, gt=0, le=1, description="a topic word in more than this share of the "
                                 "sentences tells little about any one")
    named_percentile: float = Field(25, ge=0, le=100, description="a sentence that does not name the topic must "
                                    "be as close to it as this percentile of those that do")
    min_word: int = Field(4, ge=1, description="shorter topic stems are ignored: they match too much "
                          "(\"add\" of add-on matches \"adding\")")


TOPICALITY = Topicality()


def about_topic(topic: str, items: Sequence[PassageText], nlp: TextToolkit,
                rule: Topicality = TOPICALITY) -> list[bool]:
    """For each item (a sentence with its document title and heading), whether it is about `topic`."""
    if len(items) < 4:
        return [True] * len(items)
    # (a Chinese or Japanese bigram is as telling as a long English stem: it is not held to min_word)
    words = {w for w in nlp.content_tokens(topic) if len(w) >= rule.min_word or has_cjk(w)}
    bags = [set(nlp.content_tokens(e.in_context())) for e in items]
    common = {w for w in words if sum(w in b for b in bags) > rule.telling_share * len(bags)}
    telling = words - common
    if not telling:
        return [True] * len(items)
    named = [bool(telling & b) for b in bags]
    if not any(named):  # nothing here names the topic proper: no way to tell, keep it all
        return [True] * len(items)
    # a sentence that does not name the topic proper must be about as close to the topic as most of
    # those that do (a stricter rule would need word counts over the whole corpus: what is common in
    # the evidence for "claims handling" is also what the topic is about)
    relevance = similarity([topic], [e.text for e in items], nlp)[0]
    floor = float(np.percentile(relevance[np.array(named)], rule.named_percentile))
    return [n or float(r) >= floor for n, r in zip(named, relevance)]


def topical_sentences(topic: str, sources: Sequence[PassageText], nlp: TextToolkit,
                      rule: Topicality = TOPICALITY) -> list[EvidenceSentence]:
    """The usable sentences of `sources` that are about `topic` (`source` indexes into `sources`)."""
    sentences = sentences_of([s.text for s in sources], nlp)
    items = [PassageText(text=x.text, title=sources[x.source].title, section=sources[x.source].section)
             for x in sentences]
    keep = about_topic(topic, items, nlp, rule)
    return [x for x, k in zip(sentences, keep) if k]
