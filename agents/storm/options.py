"""What a report is asked to do (`ReportOptions`) and what it did (`ReportSummary`): light to import,
for the command line and for clients that hand the run to a service."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agents.storm.outline_params import OutlineParams

SECTION_SNIPPETS = 10  # snippets a section is written from
SURVEY_PASSAGES = 40  # a search for the topic itself, beside the conversations (`stages.survey_topic`)


class ReportOptions(BaseModel):
    """How one report is researched and written. Safe to print and to ship to actors."""

    personas: int = Field(3, ge=0, description="personas besides the basic fact writer")
    turns: int = Field(3, ge=1, description="questions per conversation")
    search_k: int = Field(8, ge=1, description="passages per search query")
    survey_k: int = Field(SURVEY_PASSAGES, ge=0, description="passages of one search for the topic itself that "
                          "join the information table after the conversations (0: none)")
    section_k: int = Field(SECTION_SNIPPETS, ge=1, description="snippets a section is written from")
    exclude_urls: list[str] = Field(default_factory=list, description="never retrieved (e.g. the ground truth)")
    polish: bool = Field(True, description="remove repeated sentences after writing")
    force: bool = Field(False, description="redo every stage, even those whose artifacts exist")
    where: str = Field("the corpus", description="what was searched, for the nothing-found report")
    writer: Literal["storm", "react"] = Field("storm", description="storm: sections written from the table; "
                                              "react: the report agent researches each section with tools")
    react_min_calls: int = Field(2, ge=1, description="react: tool calls per section, at least")
    react_max_calls: int = Field(5, ge=1, description="react: tool calls per section, at most")
    outline: OutlineParams | None = Field(None, description="the extractive outline's knobs (None: the defaults "
                                          "`scripts/calibrate/cv_outline.py` chose); a chat model's outline step "
                                          "reads only their max_headings, the others apply where it falls back")


class ReportSummary(BaseModel):
    topic: str
    directory: str
    report: str
    relevant: bool
    personas: int
    turns: int
    sources: int
    sections: int
    citations: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    reused: list[str] = Field(default_factory=list, description="stages whose artifacts were reused")
    fell_back: str | None = Field(None, description="how many language-model calls fell back to the extractive "
                                                    "model, by step (None: no call went to a language model)")

    def line(self) -> str:
        return (f"{self.personas} personas, {self.turns} turns, {self.sources} sources, {self.sections} sections, "
                f"{self.citations} citations, {self.prompt_tokens + self.completion_tokens} tokens, "
                f"{self.seconds:.1f} s")
