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

from agents.lm.nlp import TextToolkit
from agents.storm.evidence import EvidenceSentence, sentences_of, similarity
from retrieval.documents import PassageText

TELLING_SHARE = 0.6  # a topic word in more than this share of the sentences tells little about any one
NAMED_PERCENTILE = 25  # a sentence that does not name the topic must be as close to it as most that do
MIN_WORD = 4  # shorter stems match too much ("add" of add-on matches "adding")


def about_topic(topic: str, items: Sequence[PassageText], nlp: TextToolkit) -> list[bool]:
    """For each item (a sentence with its document title and heading), whether it is about `topic`."""
    if len(items) < 4:
        return [True] * len(items)
    words = {w for w in nlp.content_tokens(topic) if len(w) >= MIN_WORD}
    bags = [set(nlp.content_tokens(e.in_context())) for e in items]
    common = {w for w in words if sum(w in b for b in bags) > TELLING_SHARE * len(bags)}
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
    floor = float(np.percentile(relevance[np.array(named)], NAMED_PERCENTILE))
    return [n or float(r) >= floor for n, r in zip(named, relevance)]

def topical_sentences(topic: str, sources: Sequence[PassageText], nlp: TextToolkit) -> list[EvidenceSentence]:
    """The usable sentences of `sources` that are about `topic` (`source` indexes into `sources`)."""
    sentences = sentences_of([s.text for s in sources], nlp)
    items = [PassageText(text=x.text, title=sources[x.source].title, section=sources[x.source].section)
             for x in sentences]
    keep = about_topic(topic, items, nlp)
    return [x for x, k in zip(sentences, keep) if k]
