"""The bounds of every argument a long-lived face takes from outside, in one place.

The HTTP API's request models and query parameters and the MCP tools' parameters are typed with these, so
a negative `k`, a 5 MB question or a thousand personas is refused by validation, naming the field (422
from the API, a tool error over MCP), before it reaches the session. The numbers follow the CLI's own
bounds where it has them (`raystorm report --personas`, `search -k`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

MAX_QUESTION = 4000  # characters: a question or query is a sentence or a paragraph, not a document
MAX_NAME = 500  # a run id, persona, node id, wiki page, folder
MAX_TURNS = 20  # earlier turns of a dialogue sent with a follow-up
MAX_FILTERS = 100  # source paths or tags a search is narrowed to

Question = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION)]
Topic = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]
K = Annotated[int, Field(ge=1, le=100, description="how many results")]
GraphK = Annotated[int, Field(ge=1, le=200, description="how many nodes")]
Hops = Annotated[int, Field(ge=1, le=10, description="edges to follow")]
Personas = Annotated[int, Field(ge=0, le=20, description="personas besides the basic fact writer")]
Since = Annotated[int, Field(ge=0, le=10**6, description="the first progress event to return")]
Citation = Annotated[int, Field(ge=1, le=10**5, description="a citation number [n]")]
Filters = Annotated[list[Annotated[str, Field(max_length=MAX_NAME)]], Field(max_length=MAX_FILTERS)]
Edges = Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=20)]
Strategy = Literal["auto", "chain", "deep", "naive"]
Writer = Literal["storm", "react"]
SearchMode = Literal["hybrid", "dense", "sparse"]
Source = Literal["corpus", "web", "hybrid"]  # the collection, the web (a search engine) or both fused


class Turn(BaseModel):
    """One earlier turn of a dialogue as `ask` returns it in "turn" (the follow-up rewriter reads it)."""

    question: Question
    standalone: Annotated[str, Field(max_length=MAX_QUESTION)] = ""
    short_answer: Annotated[str, Field(max_length=MAX_QUESTION)] | None = None
    guess: Annotated[str, Field(max_length=MAX_QUESTION)] | None = None
    answer_type: Annotated[str, Field(max_length=40)] | None = None


History = Annotated[list[Turn], Field(max_length=MAX_TURNS)]


def history_dicts(history: list[Turn] | None) -> list[dict[str, Any]]:
    return [t.model_dump() for t in history or []]


class AskRequest(BaseModel):
    collection: Name
    question: Question
    strategy: Strategy = "auto"
    history: History = []
    source: Source = "corpus"


class ReportRequest(BaseModel):
    topic: Topic
    writer: Writer = "storm"
    personas: Personas = 3
    source: Source = "corpus"


class InterviewRequest(BaseModel):
    run_id: Name
    question: Question
    persona: Name | None = None
