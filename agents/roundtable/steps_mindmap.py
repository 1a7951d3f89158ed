"""The mind-map organiser's steps (role "mindmap"): where a cited snippet belongs, and how an overfull concept
splits into sub-concepts. Their extractive twins compare by embedding similarity and name by keywords."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.storm.headings import clean_heading
from agents.storm.steps_research import NumberedSource, render_sources

FITS_NODE = 0.5  # a snippet this close to a concept (its name and its snippets) goes under it
NAME_WORDS = 3


class NodeView(BaseModel):
    """A concept as the organiser sees it: its place in the tree and what it holds."""

    id: str
    path: list[str] = Field(description="the concept and those above it, outermost first")
    snippets: list[str] = Field(default_factory=list, description="the texts already under it")
    has_children: bool = False


class PlaceInput(BaseModel):
    topic: str
    nodes: list[NodeView] = Field(description="every concept of the mind map, in the tree's order")
    snippet: NumberedSource


class PlaceOutput(BaseModel):
    node_id: str = Field("", description="the id of the concept the snippet belongs under, or '' for a new one")
    new_concept: str = Field("", description="a new concept's name (a few words), when none fits",
                             json_schema_extra={"maxLength": 80})
    parent_id: str = Field("", description="where the new concept goes ('' for the top level)")


class PlaceSnippet(Step[PlaceInput, PlaceOutput]):
    name = "roundtable.mindmap.place"
    role = "mindmap"
    Input = PlaceInput
    Output = PlaceOutput
    instructions = """\
You organise a roundtable discussion's mind map: a tree of concepts, each holding the cited snippets about it.
Put the new snippet under the concept it belongs to (give its `node_id`; prefer the most specific concept).
If no concept fits, name a new one in a few words (`new_concept`) and say under which concept it goes
(`parent_id`, '' for the top level)."""

    @classmethod
    def render_input(cls, inp: PlaceInput) -> str:
        tree = "\n".join(f"{'  ' * (len(n.path) - 1)}- [{n.id}] {n.path[-1]} ({len(n.snippets)} snippets)"
                         + "".join(f"\n{'  ' * len(n.path)}  · {t[:160]}" for t in n.snippets[:2])
                         for n in inp.nodes)
        return (f"Topic: {inp.topic}\n\nMind map:\n{tree or '(empty)'}\n\nNew snippet:\n"
                f"{render_sources([inp.snippet])}")

    @classmethod
    def check(cls, inp: PlaceInput, out: PlaceOutput) -> str | None:
        ids = {n.id for n in inp.nodes}
        if out.node_id and out.node_id not in ids:
            return f"node_id {out.node_id!r} is not a concept of the mind map; use one of {sorted(ids)} or ''"
        if not out.node_id and not out.new_concept.strip():
            return "give either node_id or new_concept"
        if out.parent_id and out.parent_id not in ids:
            return f"parent_id {out.parent_id!r} is not a concept of the mind map"
        return None

    @classmethod
    def extract(cls, inp: PlaceInput, nlp: TextToolkit) -> PlaceOutput:
        text = inp.snippet.text
        if inp.nodes:
            scores = [node_fit(text, n, nlp) for n in inp.nodes]
            best = int(np.argmax(scores))
            if scores[best] >= FITS_NODE:
                return PlaceOutput(node_id=inp.nodes[best].id)
        return PlaceOutput(new_concept=concept_name(inp.topic, inp.snippet, [n.path[-1] for n in inp.nodes], nlp))


def node_fit(text: str, node: NodeView, nlp: TextToolkit) -> float:
    """How well `text` fits a concept: half its name, half its closest snippet."""
    sims = nlp.similarities(text, [node.path[-1], *node.snippets])
    return round(0.5 * sims[0] + 0.5 * (max(sims[1:]) if len(sims) > 1 else sims[0]), 6)


def concept_name(topic: str, snippet: NumberedSource, taken: list[str], nlp: TextToolkit) -> str:
    """A new concept's name: the snippet's own heading when it has one not taken yet, else its keywords."""
    for heading in reversed(snippet.section.split(" > ") if snippet.section else []):
        name = clean_heading(heading)
        if name and name.lower() not in {t.lower() for t in taken} and name.lower() != topic.lower():
            return name
    words = [w for w in nlp.keywords(snippet.text, k=6) if w.lower() not in topic.lower()][:NAME_WORDS]
    name = " ".join(words).capitalize() or snippet.title
    return name if name.lower() not in {t.lower() for t in taken} else f"{name} ({snippet.title})"


class SplitInput(BaseModel):
    topic: str
    path: list[str] = Field(description="the concept to split and those above it, outermost first")
    snippets: list[NumberedSource]


class SubConcept(BaseModel):
    name: str = Field(json_schema_extra={"maxLength": 80})
    snippets: list[int] = Field(description="the [n] of the snippets that go under it")


class SplitOutput(BaseModel):
    subconcepts: list[SubConcept] = Field(json_schema_extra={"maxItems": 4})


class SplitConcept(Step[SplitInput, SplitOutput]):
    name = "roundtable.mindmap.split"
    role = "mindmap"
    Input = SplitInput
    Output = SplitOutput
    instructions = """\
A concept of a discussion's mind map holds too many snippets. Split it into two to four sub-concepts, each
named in a few words, and put every snippet under exactly one of them (by its number)."""

    @classmethod
    def render_input(cls, inp: SplitInput) -> str:
        return (f"Topic: {inp.topic}\nConcept: {' > '.join(inp.path)}\n\nSnippets:\n"
                f"{render_sources(inp.snippets)}")

    @classmethod
    def check(cls, inp: SplitInput, out: SplitOutput) -> str | None:
        given = sorted(n for c in out.subconcepts for n in c.snippets)
        if given != sorted(s.n for s in inp.snippets):
            return "put every snippet number under exactly one sub-concept"
        if sum(1 for c in out.subconcepts if c.snippets) < 2:
            return "give at least two sub-concepts with snippets"
        return None

    @classmethod
    def extract(cls, inp: SplitInput, nlp: TextToolkit) -> SplitOutput:
        texts = [s.text for s in inp.snippets]
        groups = [g for g in nlp.cluster(texts, 2) if g]
        if len(groups) < 2:  # all alike: halves in order, so the concept still gets smaller
            half = (len(texts) + 1) // 2
            groups = [list(range(half)), list(range(half, len(texts)))]
        names: list[str] = []
        for g in groups:
            others = [texts[i] for i in range(len(texts)) if i not in g]
            words = [w for w in nlp.keywords([texts[i] for i in g], k=8, background=others)
                     if w.lower() not in (inp.topic + " " + inp.path[-1]).lower()][:NAME_WORDS]
            name = " ".join(words).capitalize() or f"{inp.path[-1]} {len(names) + 1}"
            names.append(name if name not in names else f"{name} {len(names) + 1}")
        return SplitOutput(subconcepts=[SubConcept(name=n, snippets=[inp.snippets[i].n for i in g])
                                        for n, g in zip(names, groups)])
