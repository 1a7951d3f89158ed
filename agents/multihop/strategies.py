"""The multi-hop strategies by name, their settings, and `ask`: route (for "auto") and answer.

`MultihopSettings` is a plain value (it ships to `Hopper` actors and goes into
benchmark configs); `ask` is the one entry point the CLI and the actors call.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agents.answer.editions import answer_change, edition_ask, view_for, with_history
from agents.answer.layer import AnswerSettings, finish
from agents.lm.steps import LanguageModel
from agents.multihop.chain import ChainOfRAG, ChainSettings
from agents.multihop.deep import DeepSearch, DeepSettings
from agents.multihop.naive import NaiveRAG, NaiveSettings
from agents.multihop.router import Router
from agents.multihop.trace import AgentAnswer, StrategyName
from retrieval.query import Retriever

StrategyChoice = Literal["auto", "chain", "deep", "naive"]
STRATEGIES: dict[str, type] = {"chain": ChainOfRAG, "deep": DeepSearch, "naive": NaiveRAG}
# The roles of multi-hop steps, for `--role-llm ROLE=SPEC`.
MULTIHOP_ROLES = ("route", "plan", "read", "filter", "reflect", "answer")


class MultihopSettings(BaseModel):
    chain: ChainSettings = Field(default_factory=ChainSettings)
    deep: DeepSettings = Field(default_factory=DeepSettings)
    naive: NaiveSettings = Field(default_factory=NaiveSettings)
    fallback: StrategyName = Field("chain", description="what the router picks when its reply is unusable")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="short answer, confidence, abstention")


def descriptions() -> dict[str, str]:
    return {name: cls.description for name, cls in STRATEGIES.items()}


def make_agent(strategy: StrategyName, lm: LanguageModel, retriever: Retriever, settings: MultihopSettings):
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy '{strategy}': use one of {', '.join(STRATEGIES)}")
    return STRATEGIES[strategy](lm, retriever, getattr(settings, strategy))


async def ask(question: str, strategy: StrategyChoice, lm: LanguageModel, retriever: Retriever,
              settings: MultihopSettings | None = None) -> AgentAnswer:
    """Answer `question` with `strategy` ("auto" asks the router first), then the answer layer."""
    settings = settings or MultihopSettings()
    note = None
    if strategy == "auto":
        route = await Router(lm, descriptions(), settings.fallback).route(question)
        strategy, note = route.strategy, route.note
    # editions (agents/answer/editions): the one in force, a named one, or each of two and the change
    editions = edition_ask(question)

    async def one(asked: str, view: Retriever, value: str | None = None) -> AgentAnswer:
        answer = await make_agent(strategy, lm, view, settings).answer(asked)
        answer.route_note = note
        # the answer layer: short answer fused from the evidence, confidence, verification, abstention
        return await finish(lm, answer, settings.answer, value=value)

    if editions.kind == "change":  # each edition asked for a value ('' any measure, unless one is known)
        return await answer_change(question, editions, retriever,
                                   lambda asked, view, measure: one(asked, view, measure or ""))
    view = view_for(editions, retriever)
    answer = await one(question, view)
    if answer.abstained and getattr(view, "unnamed", False):  # say what is missing, not only that nothing was found
        missing = (f"no passage found that '{editions.editions[0]}' replaced or amended" if editions.kind == "prior"
                   else f"no document found names '{editions.editions[0]}': is it in the collection?")
        answer = answer.model_copy(update={"abstain_reason": f"{missing} ({answer.abstain_reason})"})
    if editions.kind == "current":  # the value it replaced, shown as history
        return await with_history(answer, retriever, lambda view, measure: one(question, view, measure or ""))
    return answer
