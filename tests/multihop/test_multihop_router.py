"""The router: strategies by their descriptions; an unusable reply falls back to the default."""

from __future__ import annotations

import json

import pytest

from agents.lm.extractive import ExtractiveModel
from agents.multihop.router import Router
from agents.multihop.strategies import ask, descriptions
from tests.support.multihop_helpers import FakeLLM, chat_model, run


@pytest.mark.parametrize("question, strategy", [
    ("In which city was the engineer who designed the Kestrel Street Bridge born?", "chain"),
    ("Which firm supplied the stone for the Abbey Mill Bridge?", "chain"),
    ("Give an overview of how the town's bridges were built and rebuilt.", "deep"),
    ("Compare the swing bridge and the arch bridges of Wrenmouth.", "deep"),
    ("why do old bridges need rebuilding?", "deep"),
])
def test_the_extractive_router_reads_the_descriptions(question, strategy):
    route = run(Router(ExtractiveModel(), descriptions(), default="chain").route(question))
    assert route.strategy == strategy
    assert "chose" in route.note


def test_an_unparseable_reply_falls_back_to_the_default():
    server = FakeLLM({"multihop_route": ["I think the chain one, probably", "still not JSON"]})
    model = chat_model(server)
    model.on_bad_output = "fail"  # with the default, the extractive router would choose instead

    route = run(Router(model, descriptions(), default="deep").route("Who designed it?"))

    assert route.strategy == "deep"
    assert "fell back to the default 'deep'" in route.note
    assert server.steps == ["multihop_route", "multihop_route"]  # the reply, then the one repair retry


def test_a_reply_naming_no_strategy_falls_back_too():
    server = FakeLLM({"multihop_route": [json.dumps({"strategy": "ReACT"})]})
    route = run(Router(chat_model(server), descriptions(), default="chain").route("Who designed it?"))
    assert route.strategy == "chain" and "'ReACT', not a strategy" in route.note


def test_a_valid_choice_is_taken():
    server = FakeLLM({"multihop_route": [json.dumps({"strategy": "Naive"})]})
    route = run(Router(chat_model(server), descriptions(), default="chain").route("Who designed it?"))
    assert route.strategy == "naive"


def test_the_default_must_be_a_strategy():
    with pytest.raises(ValueError, match="not one of"):
        Router(ExtractiveModel(), descriptions(), default="react")


def test_auto_routes_then_answers(two_hop):
    answer = run(ask("In which city was the engineer who designed the Kestrel Street Bridge born?", "auto",
                     ExtractiveModel(), two_hop.retriever))
    assert answer.strategy == "chain" and "chose 'chain'" in answer.route_note
