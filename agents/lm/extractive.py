"""`ExtractiveModel`: runs each step's own deterministic `extract` with a `TextToolkit`.

No network and no tokens: every run is still recorded in the `UsageLedger` (model
"extractive", 0 tokens), so reports account for extractive and LLM calls alike.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import cast

from agents.lm.nlp import TextToolkit
from agents.lm.steps import I, O, Step
from agents.lm.usage import EXTRACTIVE_MODEL, UsageLedger, UsageRecord

EXTRACTIVE = EXTRACTIVE_MODEL

NO_LLM_NOTICE = (
    "no LLM configured: using the extractive model (offline, every sentence copied from a "
    "retrieved passage); pass --llm to use a language model"
)


class ExtractiveModel:
    """A `LanguageModel` whose output is `step.extract(inp, nlp)`.

    - `nlp`: the toolkit handed to every step (a lexical-only one if not given).
    - `ledger`: where runs are recorded (a fresh one if not given; see `.ledger`).
    """

    name = EXTRACTIVE

    def __init__(self, nlp: TextToolkit | None = None, ledger: UsageLedger | None = None):
        self.nlp = nlp if nlp is not None else TextToolkit()
        self.ledger = ledger if ledger is not None else UsageLedger()

    async def run(self, step: type[Step[I, O]], inp: I) -> O:
        if not isinstance(inp, step.Input):
            raise TypeError(f"step {step.name} takes {step.Input.__name__}, got {type(inp).__name__}")
        started_at, started = datetime.now(timezone.utc), time.monotonic()
        error: str | None = None
        try:
            # A thread keeps the event loop free while the step embeds or scans long texts.
            output = await asyncio.to_thread(step.extract, inp, self.nlp)
            if not isinstance(output, step.Output):
                raise TypeError(
                    f"step {step.name}.extract returned {type(output).__name__}, not {step.Output.__name__}"
                )
        except BaseException as exc:  # cancellation too: the ledger says the run did not finish
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.ledger.record(UsageRecord(
                started_at=started_at, step=step.name, role=step.role, model=self.name,
                latency_s=time.monotonic() - started, attempts=1, ok=error is None, error=error,
            ))
        return cast(O, output)

    async def close(self) -> None:
        """Nothing to release; here so every model can be closed alike."""
