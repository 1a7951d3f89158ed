"""What a stage function is: its arguments (`StageArgs`) and what the runtime gives it (`StageContext`).

A stage function is a module-level `async def fn(args: SomeArgs, ctx: StageContext) -> Output`: its
arguments are one pydantic model (a renamed field fails validation in one process, not only on a
cluster) and `StageContext` carries what the runtime supplies — the models, the retriever and, when
named, the run's information table. The stages (`agents.storm.stages`, `agents.report.stage`) and the
runtimes that run them (`agents.runtime`, `cluster.ray_runtime`, the `Expert` actor) all read this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from agents.lm.steps import LanguageModel
from retrieval.query import Retriever
from retrieval.snippets import InfoEntry, Snippet

if TYPE_CHECKING:
    from agents.report.tools import AskMany

A = TypeVar("A", bound="StageArgs")
T = TypeVar("T")


class StageArgs(BaseModel):
    """The arguments of one stage call: a value that crosses to an actor as it is. Unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")

    topic: str


class TableStore(Protocol):
    """A run's information table as the flow and the stages use it (local, or an actor proxy)."""

    async def add(self, snippets: Sequence[Snippet]) -> int: ...

    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]: ...

    async def url_to_info(self) -> dict[str, InfoEntry]: ...

    async def drop(self) -> None: ...


@dataclass(frozen=True)
class StageContext:
    """What a stage function gets from the runtime besides its arguments."""

    models: LanguageModel
    retriever: Retriever
    table: TableStore | None = None
    ask_many: AskMany | None = None  # Chain-of-RAG on many questions elsewhere (Hopper actors); None: here

    def need_table(self, stage: str) -> TableStore:
        if self.table is None:
            raise ValueError(f"stage {stage} reads the information table, but the runtime was given no table")
        return self.table


StageFn = Callable[[A, StageContext], Awaitable[T]]
