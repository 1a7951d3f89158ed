"""The roundtable's service side, shared by its faces (CLI, web app, MCP): open what a roundtable searches and
where its turns run, then start, step, resume and report sessions.

`open_retriever` is the one place the source is opened: today the ingested collection (`Corpus` behind
`AsyncCorpus`, as `raystorm report` opens it); with `--source web|hybrid` (issue #51) it becomes the sources
module's retriever, and nothing else here changes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from agents.lm.settings import LLMSettings
from agents.roundtable.engine import Listener, Roundtable
from agents.roundtable.files import SessionFiles
from agents.roundtable.records import RoundtableOptions, RoundtableSession
from agents.roundtable.report import write_report
from retrieval.config import StoreSettings, data_home

ROUNDTABLES = "roundtables"


def session_files(settings: StoreSettings) -> SessionFiles:
    return SessionFiles(data_home(settings.data_dir) / ROUNDTABLES)


def open_retriever(settings: StoreSettings, collection: str, store=None):
    """(retriever, corpus) over `collection`; the corpus has the embedder the extractive model compares with.
    `store`: an open `PassageStore` to share (the web app's), else the retriever opens its own."""
    from retrieval.search import AsyncCorpus, Corpus

    corpus = Corpus(settings, collection, store=store)
    corpus.check()
    return AsyncCorpus(corpus), corpus


@dataclass
class LocalTurns:
    """A roundtable's runtime in this process, and what closes it."""

    runtime: object
    models: object
    retriever: object
    owns_store: bool

    @property
    def notice(self) -> str | None:
        return getattr(self.models, "notice", None)

    async def close(self) -> None:
        await self.models.close()
        if self.owns_store:
            self.retriever.close()


def local_turns(settings: StoreSettings, collection: str, llm: LLMSettings, *, store=None) -> LocalTurns:
    """Turns run here: the models of `llm` (their cache in the data dir) over the collection."""
    from agents.lm.models import RoleModels
    from agents.lm.nlp import TextToolkit
    from agents.runtime import LocalRuntime

    retriever, corpus = open_retriever(settings, collection, store)
    models = RoleModels.from_settings(llm, cache_dir=data_home(settings.data_dir) / "cache" / "llm",
                                      nlp=TextToolkit(embed=corpus.dense.embed))
    check_roundtable_roles(llm)
    runtime = LocalRuntime(models, retriever, tables=no_table)
    return LocalTurns(runtime, models, retriever, owns_store=store is None)


def no_table(name: str):
    raise ValueError("a roundtable keeps no information table: its mind map holds what it found")


def check_roundtable_roles(llm: LLMSettings) -> None:
    from agents.lm.models import check_roles
    from agents.lm.settings import ROUNDTABLE_ROLES

    check_roles(llm.roles, ROUNDTABLE_ROLES)


@asynccontextmanager
async def turns_here(settings: StoreSettings, collection: str, llm: LLMSettings, *, store=None
                     ) -> AsyncIterator[LocalTurns]:
    turns = local_turns(settings, collection, llm, store=store)
    try:
        yield turns
    finally:
        await turns.close()


@asynccontextmanager
async def turns_on(args, settings: StoreSettings, collection: str, llm: LLMSettings):
    """Where the command's turns run: the cluster's actors with --address/--distributed, else this process."""
    from cluster.distributed_args import wants_distributed

    if wants_distributed(args):
        from cluster.roundtable_cluster import cluster_turns

        async with cluster_turns(args, settings, collection, llm) as turns:
            yield turns
    else:
        async with turns_here(settings, collection, llm) as turns:
            yield turns


async def start_roundtable(topic: str, collection: str, runtime, files: SessionFiles,
                           options: RoundtableOptions | None = None, listener: Listener | None = None) -> Roundtable:
    return await Roundtable.start(topic, collection, runtime, options=options, files=files, listener=listener)


def resume_roundtable(ref: str, runtime, files: SessionFiles, listener: Listener | None = None) -> Roundtable:
    return Roundtable(files.load(ref), runtime, files, listener)


async def report_of(table: Roundtable) -> Path:
    """report.md (and its claims) in the session's folder."""
    folder = table.files.folder(table.session.id) if table.files else Path.cwd()
    return await write_report(table.session, table.runtime, folder)


def session_summary(session: RoundtableSession) -> dict:
    """What the faces list about a session."""
    return {"id": session.id, "topic": session.topic, "collection": session.collection, "turns": session.turns,
            "experts": [p.name for p in session.experts], "unused": len(session.unused),
            "concepts": sum(1 for _ in session.mindmap.walk()) - 1}
