"""The router: picks a strategy for a question from the strategies' own descriptions.

A reply that cannot be used (invalid output after the model's repair retry, or a
name that is not one of the strategies) falls back to the stated default and
says so in the route note; it never raises.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, Field

from agents.lm.errors import ModelOutputError
from agents.lm.nlp import TextToolkit
from agents.lm.steps import LanguageModel, Step

# Wording of broad, report-like requests (as opposed to one concrete fact).
_BROAD = re.compile(
    r"^\s*(explain|describe|summari[sz]e|discuss|compare|contrast|analy[sz]e|outline|overview|write|tell me about|"
    r"give an overview)\b|\b(overview|pros and cons|advantages and disadvantages|differences? between|impact of|"
    r"history of|how does .+ work|what are the (main|key|different)|why (is|are|do|does|did))\b", re.I)


class StrategyCard(BaseModel):
    name: str
    description: str


class RouteInput(BaseModel):
    question: str
    strategies: list[StrategyCard]


class RouteOutput(BaseModel):
    strategy: str = Field(description="the name of the one strategy that fits the question best")


class RouteStep(Step[RouteInput, RouteOutput]):
    name: ClassVar[str] = "multihop.route"
    role: ClassVar[str] = "route"
    Input = RouteInput
    Output = RouteOutput
    instructions: ClassVar[str] = (
        "Each strategy below answers questions of a certain kind, as its description says. Pick the one "
        "strategy that best fits the question and reply with its name."
    )

    @classmethod
    def render_input(cls, inp: RouteInput) -> str:
        cards = "\n".join(f"- {c.name}: {c.description}" for c in inp.strategies)
        return f"## Strategies\n{cards}\n\n## Question\n{inp.question}"

    @classmethod
    def extract(cls, inp: RouteInput, nlp: TextToolkit) -> RouteOutput:
        # a broad request, or one naming no entity at all, wants the strategy described as "broad";
        # anything else the one described as "concrete"
        broad = bool(_BROAD.search(inp.question)) or not nlp.entities(inp.question, ("name", "reference", "code"))
        wanted = "broad" if broad else "concrete"
        for card in inp.strategies:
            if wanted in card.description.lower():
                return RouteOutput(strategy=card.name)
        return RouteOutput(strategy=inp.strategies[0].name if inp.strategies else "")


class Route(BaseModel):
    strategy: str
    note: str  # how it was chosen, or why the default was used


class Router:
    """Chooses among `strategies` (name → description); `default` when the reply is unusable."""

    def __init__(self, lm: LanguageModel, strategies: dict[str, str], default: str):
        if default not in strategies:
            raise ValueError(f"the router's default '{default}' is not one of {sorted(strategies)}")
        self.lm = lm
        self.strategies = strategies
        self.default = default

    async def route(self, question: str) -> Route:
        cards = [StrategyCard(name=n, description=d) for n, d in self.strategies.items()]
        try:
            reply = await self.lm.run(RouteStep, RouteInput(question=question, strategies=cards))
        except ModelOutputError as exc:
            return Route(strategy=self.default, note=f"router reply unusable ({exc.problem}); "
                                                     f"fell back to the default '{self.default}'")
        choice = reply.strategy.strip().lower()
        if choice not in self.strategies:
            return Route(strategy=self.default, note=f"router answered '{reply.strategy}', not a strategy; "
                                                     f"fell back to the default '{self.default}'")
        return Route(strategy=choice, note=f"router ({getattr(self.lm, 'name', 'model')}) chose '{choice}'")
