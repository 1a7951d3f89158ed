"""Perspective discovery: who asks the questions.

STORM reads the tables of contents of Wikipedia pages related to the topic; we
read the heading structure of the corpus documents most related to it, together
with the passages themselves, and let the perspectives step (an LLM, or the
extractive heading finder) propose personas. A "basic fact writer" always comes
first.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, Field

from agents.lm.steps import LanguageModel
from agents.storm.records import BASIC_FACT_WRITER, Persona, RelatedDocument
from agents.storm.steps_perspectives import FindPerspectives, PerspectivesInput
from retrieval.documents import PassageText
from retrieval.query import Retriever, SearchAsk, SearchFilter, SearchHit, search_each

RELATED_PASSAGES = 24  # passages retrieved for the topic
RELATED_DOCUMENTS = 10  # documents whose headings are read
HEADINGS_PER_DOCUMENT = 40


class PersonaPlan(BaseModel):
    """The personas of a run, the documents they were drawn from, and whether the corpus covers the topic."""

    topic: str
    relevant: bool = True
    personas: list[Persona] = Field(default_factory=list)
    related: list[RelatedDocument] = Field(default_factory=list)


async def related_material(topic: str, retriever: Retriever, exclude_urls: Sequence[str] = ()
                           ) -> tuple[list[RelatedDocument], list[PassageText]]:
    """The documents most related to `topic` with their headings in document order, and the passages found."""
    base = SearchFilter(exclude_urls=list(exclude_urls))
    hits = await retriever.search(topic, k=RELATED_PASSAGES, flt=base if exclude_urls else None)
    docs: dict[str, SearchHit] = {}
    for h in hits:
        docs.setdefault(h.passage.doc_id, h)
    top = list(docs.values())[:RELATED_DOCUMENTS]
    found = await search_each(retriever, [SearchAsk(topic, HEADINGS_PER_DOCUMENT, SearchFilter(
        doc_ids=[h.passage.doc_id], exclude_urls=list(exclude_urls))) for h in top])
    related = []
    for first, passages in zip(top, found):
        ordered = sorted((h.passage for h in passages), key=lambda p: (p.record or 0, p.line_start))
        headings: list[str] = []
        for p in ordered:
            for h in p.heading_path:
                if h not in headings:
                    headings.append(h)
        related.append(RelatedDocument(title=first.passage.title, source=first.passage.source, headings=headings))
    return related, [PassageText(text=h.passage.text, title=h.passage.title, section=" > ".join(h.passage.heading_path))
                     for h in hits]


async def find_personas(topic: str, models: LanguageModel, retriever: Retriever, *, max_personas: int = 3,
                        questions_per_persona: int = 3, exclude_urls: Sequence[str] = ()) -> PersonaPlan:
    """The basic fact writer and up to `max_personas` more, each with the aspects it will ask about."""
    related, excerpts = await related_material(topic, retriever, exclude_urls)
    if not excerpts:
        return PersonaPlan(topic=topic, relevant=False, related=related)
    out = await models.run(FindPerspectives, PerspectivesInput(
        topic=topic, related=related, excerpts=excerpts, max_personas=max_personas,
        questions_per_persona=questions_per_persona))
    if not out.relevant:
        return PersonaPlan(topic=topic, relevant=False, related=related)
    basic = BASIC_FACT_WRITER.model_copy(update={"focus": out.basic_focus})
    others = [p for p in out.personas if p.name.strip().lower() != BASIC_FACT_WRITER.name.lower()]
    return PersonaPlan(topic=topic, personas=[basic, *others[:max_personas]], related=related)
