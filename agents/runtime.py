"""Where a report's work runs: the `Runtime` protocol, and `LocalRuntime` (this process).

A report's flow (`agents.storm.flow.run_topic`) is written once against a
runtime. A runtime does four things:

- `stage(fn, args)`: run a stage function (`agents.stage`: one pydantic arguments
  model and the `StageContext` the runtime supplies).
- `converse(topic, persona, spec)`: one writer↔expert conversation.
- `table(name)`: the information table a topic's run fills and reads.
- `usage(topic)`: the model calls made for that topic.
- `report_section(args)`: one section by the ReACT report agent (`--writer react`).

`LocalRuntime` calls everything directly in this process; the Ray runtime
(`cluster.ray_runtime.RayRuntime`) sends the same calls to actors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, Field

from agents.lm.steps import LanguageModel
from agents.lm.usage import UsageLedger
from agents.stage import A, StageArgs, StageContext, StageFn, T, TableStore
from agents.storm.records import Conversation, Persona
from retrieval.query import Retriever

if TYPE_CHECKING:
    from agents.report.records import ReactSection
    from agents.report.stage import ReactArgs

__all__ = ["ConversationSpec", "LocalRuntime", "Runtime", "StageArgs", "StageContext", "StageFn", "TableFactory",
           "TableStore"]


class ConversationSpec(BaseModel):
    """How one persona's conversation is held."""

    turns: int = Field(ge=1, description="questions the writer asks")
    search_k: int = Field(ge=1, description="passages per expert search query")
    exclude_urls: list[str] = Field(default_factory=list)


class Runtime(Protocol):
    """Runs a report's stages and conversations; see the module docstring."""

    async def stage(self, stage: str, fn: StageFn[A, T], args: A, *, table: str | None = None) -> T: ...

    async def converse(self, topic: str, persona: Persona, spec: ConversationSpec,
                       note: Callable[[str], None]) -> Conversation: ...

    def table(self, name: str) -> TableStore: ...

    def release_table(self, name: str) -> None: ...

    async def usage(self, topic: str) -> UsageLedger: ...

    async def corpus_version(self) -> str: ...

    async def report_section(self, args: "ReactArgs") -> "ReactSection": ...


TableFactory = Callable[[str], TableStore]


class LocalRuntime:
    """Everything in this process: stage functions awaited directly, conversations as local agents.

    `tables(name)` opens the run's information table (e.g. an `AsyncInformationTable`
    in the same store as the corpus). `version()` says which corpus the stages read
    (its passages' ids; see `retrieval.search.Corpus.version`), for the checkpoints.
    """

    def __init__(self, models: LanguageModel, retriever: Retriever, tables: TableFactory,
                 version: Callable[[], Awaitable[str]] | None = None):
        self.models = models
        self.retriever = retriever
        self._tables = tables
        self._version = version
        self._open: dict[str, TableStore] = {}

    async def stage(self, stage: str, fn: StageFn[A, T], args: A, *, table: str | None = None) -> T:
        """`fn(args, ctx)` here (`stage` names the call in a distributed runtime's errors)."""
        return await fn(args, StageContext(self.models, self.retriever, self._open[table] if table else None))

    async def converse(self, topic: str, persona: Persona, spec: ConversationSpec,
                       note: Callable[[str], None]) -> Conversation:
        """The conversation in this process (`note` hears of restarts; here nothing restarts it)."""
        from agents.storm.conversation import run_conversation

        return await run_conversation(topic, persona, self.models, self.retriever, max_turns=spec.turns,
                                      search_k=spec.search_k, exclude_urls=spec.exclude_urls)

    def table(self, name: str) -> TableStore:
        if name not in self._open:
            self._open[name] = self._tables(name)
        return self._open[name]

    async def usage(self, topic: str) -> UsageLedger:
        ledger: UsageLedger | None = getattr(self.models, "ledger", None)
        return ledger.of_topic(topic) if ledger is not None else UsageLedger()

    async def corpus_version(self) -> str:
        return await self._version() if self._version else ""

    async def report_section(self, args: "ReactArgs") -> "ReactSection":
        from agents.report.stage import react_section

        return await self.stage("article", react_section, args)

    def release_table(self, name: str) -> None:
        table = self._open.pop(name, None)
        if table is not None and hasattr(table, "close"):
            table.close()
