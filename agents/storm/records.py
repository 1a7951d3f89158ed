"""The records a STORM run passes between its stages, its actors and its artifact files.

Field names follow STORM's own files where there is one (`perspective`,
`dlg_turns`, `user_utterance`, `agent_utterance`, `search_queries`,
`search_results`), so `conversation_log.json` reads like STORM's, while every
search result keeps the exact place of its text for citations.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

# Size hints in the JSON schemas the chat model is asked to follow: a server that turns the schema
# into a grammar (llama.cpp) then cannot ramble past them. They are hints, not validation limits.
def _hint(**limits) -> dict:
    return {"json_schema_extra": limits}

from retrieval.documents import Part
from retrieval.snippets import Snippet

THANK_YOU = "Thank you so much for your help!"


class Persona(BaseModel):
    """A perspective the topic is researched from."""

    name: str = Field(**_hint(maxLength=60))
    description: str = Field(**_hint(maxLength=300))
    focus: list[str] = Field(default_factory=list, description="aspects this persona asks about, in order",
                             **_hint(maxItems=6))

    @property
    def perspective(self) -> str:
        return f"{self.name}: {self.description}"


BASIC_FACT_WRITER = Persona(
    name="Basic fact writer",
    description="writes the basic facts: what the topic is, its main parts, who and what is involved, "
                "and when and where it happened",
)


class SearchResult(BaseModel):
    """One retrieved passage, in STORM's search-result shape plus its place in the source."""

    url: str
    title: str
    description: str = ""
    snippets: list[str]
    path: str
    line_start: int
    line_end: int
    passage_id: str
    heading_path: list[str] = Field(default_factory=list)
    record: int | None = None
    part: Part | None = None  # the PDF page, slide or sheet the lines count within

    @classmethod
    def from_snippet(cls, s: Snippet) -> "SearchResult":
        return cls(url=s.url, title=s.title, description=" > ".join(s.heading_path), snippets=[s.text],
                   path=s.path, line_start=s.line_start, line_end=s.line_end, passage_id=s.passage_id,
                   heading_path=s.heading_path, record=s.record, part=s.part)

    def to_snippet(self) -> Snippet:
        return Snippet(url=self.url, title=self.title, text=self.snippets[0], path=self.path,
                       line_start=self.line_start, line_end=self.line_end, passage_id=self.passage_id,
                       heading_path=self.heading_path, record=self.record, part=self.part)


class DialogueTurn(BaseModel):
    """One question of the writer and the expert's answer."""

    user_utterance: str  # the writer's question
    search_queries: list[str] = Field(default_factory=list)
    search_results: list[SearchResult] = Field(default_factory=list)
    agent_utterance: str  # the expert's answer, with [n] pointing into search_results (1-based)
    cited: list[int] = Field(default_factory=list, description="the [n] the answer uses, ascending")

    def cited_results(self) -> list[SearchResult]:
        return [self.search_results[n - 1] for n in self.cited if 0 < n <= len(self.search_results)]


class Conversation(BaseModel):
    """One persona's whole interview."""

    persona: Persona
    perspective: str
    dlg_turns: list[DialogueTurn] = Field(default_factory=list)

    @classmethod
    def of(cls, persona: Persona, turns: list[DialogueTurn]) -> "Conversation":
        return cls(persona=persona, perspective=persona.perspective, dlg_turns=turns)


class ConversationLog(BaseModel):
    conversations: list[Conversation]
    survey: list[SearchResult] = Field(default_factory=list, description="the results of one search for the "
                                       "topic itself (`ReportOptions.survey_k`): what the sources say of it as a "
                                       "whole, whatever the personas asked; they join the information table")

    def sources(self) -> list[Snippet]:
        """Every answer's sources (the results it cites), in conversation order."""
        return [r.to_snippet() for c in self.conversations for t in c.dlg_turns for r in t.cited_results()]

    @property
    def turns(self) -> int:
        return sum(len(c.dlg_turns) for c in self.conversations)

    def dialogue_only(self) -> "ConversationLog":
        """The questions, queries and answers without the search results (and so without citations):
        what the outline and the nothing-found report read once the information table holds the results."""
        return ConversationLog(conversations=[
            c.model_copy(update={"dlg_turns": [t.model_copy(update={"search_results": [], "cited": []})
                                               for t in c.dlg_turns]})
            for c in self.conversations], survey=[])


class RelatedDocument(BaseModel):
    """A corpus document related to the topic, by its title and heading structure."""

    title: str
    source: str
    headings: list[str] = Field(default_factory=list)


class OutlineSection(BaseModel):
    heading: str = Field(**_hint(maxLength=80))
    subsections: list[str] = Field(default_factory=list, **_hint(maxItems=6))


class Outline(BaseModel):
    sections: list[OutlineSection] = Field(default_factory=list, **_hint(maxItems=12))

    def headings(self) -> list[str]:
        return [h for s in self.sections for h in [s.heading, *s.subsections]]


class Citation(BaseModel):
    """An article-wide citation index: one source URL and the snippets cited from it."""

    index: int
    url: str
    title: str
    snippets: list[Snippet] = Field(default_factory=list)


class ArticleSection(BaseModel):
    heading: str
    text: str  # markdown body: paragraphs, "### sub" headings, [n] in the article's numbering


class Article(BaseModel):
    """The article with one citation index for all of it."""

    topic: str
    lead: str = ""
    sections: list[ArticleSection] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)

    def citation(self, index: int) -> Citation | None:
        return next((c for c in self.citations if c.index == index), None)
