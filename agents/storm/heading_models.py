"""The outline's headings as data: where each came from, its evidence, and the plan they form. Both the
heading planner (`headings`) and its learned filter (`heading_filter`) read them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agents.storm.evidence import EvidenceSentence

HeadingSource = Literal["document", "lexicon", "keywords", "entity", "phrase"]


class Heading(BaseModel):
    heading: str
    source: HeadingSource
    cue: str = ""  # what the section is about, when known
    support: int = 0  # evidence sentences assigned to it
    parent: str | None = None
    evidence: list[int] = Field(default_factory=list, description="indices of its sentences")



class DocumentHeading(BaseModel):
    heading: str
    title: str = ""  # of the document it is from


class ConsideredHeading(BaseModel):
    """A heading with enough evidence, before the cohesion floor, the filter and the length cap."""

    heading: str
    features: list[float]  # `HEADING_FEATURES`, in that order


class HeadingPlan(BaseModel):
    kind: str
    headings: list[Heading]  # in reading order; children right after their parent
    sentences: list[EvidenceSentence]
    considered: list[ConsideredHeading] = Field(default_factory=list)
