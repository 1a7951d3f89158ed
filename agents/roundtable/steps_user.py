"""The simulated user of `raystorm roundtable --observe` (role "user"): with nobody at the keyboard, someone still
steers now and then, as in Co-STORM's own evaluation, where a simulated user takes part in the discussion.

Its message is grounded in the discussion: a follow-up on the mind map's least-covered concept, or a question
about a passage an expert just cited. The extractive twin alternates the two, deterministically.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.roundtable.steps import render_discussion
from agents.storm.headings import clean_heading
from agents.storm.steps_research import NumberedSource, render_sources


class ConceptView(BaseModel):
    """A mind-map concept as the user sees it: its place in the tree and how much the discussion found on it."""

    path: list[str] = Field(description="the concept and those above it, outermost first")
    held: int = Field(0, description="snippets under it (its sub-concepts' included)")


class UserInput(BaseModel):
    topic: str
    discussion: list[str] = Field(default_factory=list, description="the turns so far, oldest first")
    concepts: list[ConceptView] = Field(default_factory=list, description="the mind map, in the tree's order")
    cited: list[NumberedSource] = Field(default_factory=list, description="the passages the last expert cited")
    asked: list[str] = Field(default_factory=list, description="what the simulated user asked before")


class UserOutput(BaseModel):
    message: str = Field(description="what the user says to the table: one question",
                         json_schema_extra={"maxLength": 300})
    about: str = Field("", description="the concept or the passage the question follows up",
                       json_schema_extra={"maxLength": 120})


class SimulatedUser(Step[UserInput, UserOutput]):
    name = "roundtable.user.ask"
    role = "user"
    Input = UserInput
    Output = UserOutput
    instructions = """\
You take part in a roundtable discussion on a topic as a curious reader who wants to learn about it; experts
answer from sources. Read the discussion, the mind map (the concepts found so far, with how many snippets
each holds) and the passages the last expert cited. Steer the discussion with one short question: follow up on
a concept the mind map covers least, or ask about something a cited passage says that nobody has explained.
Do not repeat what you asked before. Name the concept or passage you follow up in `about`."""

    @classmethod
    def render_input(cls, inp: UserInput) -> str:
        tree = "\n".join(f"{'  ' * (len(c.path) - 1)}- {c.path[-1]} ({c.held} snippets)" for c in inp.concepts)
        asked = "; ".join(inp.asked) or "(nothing yet)"
        return (f"Topic: {inp.topic}\n\nDiscussion so far:\n{render_discussion(inp.discussion)}\n\n"
                f"Mind map:\n{tree or '(empty)'}\n\nPassages the last expert cited:\n"
                f"{render_sources(inp.cited) if inp.cited else '(none)'}\n\nYou asked before: {asked}")

    @classmethod
    def extract(cls, inp: UserInput, nlp: TextToolkit) -> UserOutput:
        # every other message: the least-covered concept, then a passage just cited (each the fallback of the other)
        ways = [cls._on_concept, cls._on_passage]
        if len(inp.asked) % 2:
            ways.reverse()
        for way in ways:
            out = way(inp, nlp)
            if out is not None:
                return out
        return UserOutput(message=f"What else should we know about {inp.topic}?", about=inp.topic)

    @staticmethod
    def _on_concept(inp: UserInput, nlp: TextToolkit) -> UserOutput | None:
        said = " ".join(inp.asked).lower()
        fresh = [(c.held, i, c) for i, c in enumerate(inp.concepts) if c.path[-1].lower() not in said]
        if not fresh:
            return None
        concept = min(fresh, key=lambda x: x[:2])[2].path[-1]
        return UserOutput(message=f"What more do the sources say about \"{concept}\" in {inp.topic}?", about=concept)

    @staticmethod
    def _on_passage(inp: UserInput, nlp: TextToolkit) -> UserOutput | None:
        said = " ".join(inp.asked).lower()
        for source in inp.cited:
            where = clean_heading(source.section.split(" > ")[-1]) if source.section else source.title
            if where.lower() in said:
                continue
            words = [w for w in nlp.keywords(source.text, k=6, background=inp.discussion)
                     if w.lower() not in inp.topic.lower() and w.lower() not in where.lower()][:3]
            if not words:
                continue
            return UserOutput(message=f"An expert cited \"{where}\": what does it say about {', '.join(words)}?",
                              about=where)
        return None
