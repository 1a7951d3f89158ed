"""Per-question usage: questions answered at once on one set of models never mix their tokens."""

from __future__ import annotations

import asyncio
import json

from agents.multihop.accounting import QuestionLedger, tokens
from agents.multihop.router import Router
from agents.multihop.strategies import descriptions
from tests.support.multihop_helpers import FakeLLM, chat_model


def test_concurrent_questions_keep_their_own_records():
    server = FakeLLM({"multihop_route": [json.dumps({"strategy": "chain"})]})
    model = chat_model(server)
    ledger = QuestionLedger()
    model.ledger = ledger  # what a Hopper does: one ledger for its models, bucketed per question

    async def question(n_calls: int):
        with ledger.question() as records:
            router = Router(model, descriptions(), default="chain")
            await asyncio.gather(*(router.route(f"who {i}?") for i in range(n_calls)))
        return records

    async def both():
        return await asyncio.gather(question(1), question(3))

    one, three = asyncio.run(both())

    assert (len(one), len(three)) == (1, 3)
    assert tokens(one) == 55 and tokens(three) == 3 * 55
    assert len(ledger.records) == 4  # and the ledger itself holds them all
