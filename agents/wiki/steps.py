"""The one model step of the wiki: write a page's statements from numbered source passages.

Offline, the extractive implementation copies the sentences that carry the
facts (numbers, dates, names, defined terms) from each passage, in order, each
with its `[n]`; a chat model writes its own sentences under the same format.
Either way every statement cites a source, and the claim keeps that source's lines.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from agents.lm.grounding import citation_problem
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.storm.evidence import stands_alone
from agents.storm.steps_research import NumberedSource, render_sources

PER_SOURCE = 2  # statements the offline writer takes from one passage
_FACT = re.compile(r"\d|\$|%|\b[A-Z]{1,4}-\d|\b(?:must|may not|never|only|excluded?|required?)\b")


class PageInput(BaseModel):
    subject: str = Field(description="what the page is about: a document family or a subject")
    sources: list[NumberedSource]


class PageOutput(BaseModel):
    statements: list[str] = Field(description="the page's statements, each one sentence ending in the [n] "
                                               "of the source that supports it")


class WritePage(Step[PageInput, PageOutput]):
    name = "wiki.page"
    role = "article"
    Input = PageInput
    Output = PageOutput
    instructions = """\
You compile a wiki page from numbered source passages. Write short factual statements, one sentence each,
using only what the sources say, and end every statement with the [n] of the one source that supports it.
Keep figures, dates and names exactly as written. A passage marked as superseded is history: state it as
such ("Until ..., ... (superseded by ...)"), never as the rule in force."""

    @classmethod
    def render_input(cls, inp: PageInput) -> str:
        return f"Page: {inp.subject}\n\nSources:\n{render_sources(inp.sources)}"

    @classmethod
    def check(cls, inp: PageInput, out: PageOutput) -> str | None:
        for s in out.statements:
            problem = citation_problem(s, [x.n for x in inp.sources])
            if problem:
                return problem
        return None if out.statements else "write at least one statement"

    @classmethod
    def extract(cls, inp: PageInput, nlp: TextToolkit) -> PageOutput:
        statements = []
        for source in inp.sources:
            candidates = [re.sub(r"^(?:[-*+•]|\d+[.)])\s+", "", s.strip()) for s in nlp.sentences(source.text)]
            candidates = [s for s in candidates if len(s.split()) >= 5 and not s.startswith("#")
                          and stands_alone(s.lstrip("*- ")) and s[-1:] in ".!?)"]
            facts = [s for s in candidates if _FACT.search(s)] or candidates[:1]
            statements += [f"{s} [{source.n}]" for s in facts[:PER_SOURCE]]
        return PageOutput(statements=statements)
