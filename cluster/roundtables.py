"""The roundtable's service side, shared by its faces (CLI, web app, MCP): open what a roundtable searches and
where its turns run, then start, step, resume and report sessions.

`local_turns` opens what the experts search as `raystorm report` does (`--source corpus|web|hybrid`, through
`cluster.commands.sources.research_retriever`).
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


@dataclass
class LocalTurns:
    """A roundtable's runtime in this process, and what closes it."""

    runtime: object
    models: object
    retriever: object
    store: object

    @property
    def notice(self) -> str | None:
        return getattr(self.models, "notice", None)

    async def close(self) -> None:
        from agents.web.hybrid import close_retriever

        try:
            await self.models.close()
            await close_retriever(self.retriever)  # its worker thread(s) and connections
        finally:
            self.store.close()


def local_turns(settings: StoreSettings, collection: str, llm: LLMSettings, *, source: str = "corpus",
                web=None) -> LocalTurns:
    """Turns run here: the models of `llm` (their cache in the data dir) over what `source` names — the
    collection, the web (`web`: `agents.web.research.WebSource`) or both — opened as `raystorm report` opens it."""
    from agents.lm.models import RoleModels
    from agents.lm.nlp import TextToolkit
    from agents.runtime import LocalRuntime
    from cluster.commands.sources import research_retriever
    from retrieval.ingest import Ingestor
    from retrieval.search import Corpus

    check_roundtable_roles(llm)
    ingestor = Ingestor(settings)
    try:
        corpus = Corpus(settings, collection, store=ingestor.store, dense=ingestor.dense, sparse=ingestor.sparse)
        if source != "web":
            corpus.check()
        retriever, _ = research_retriever(source, web, corpus, ingestor, data_home(settings.data_dir))
        models = RoleModels.from_settings(llm, cache_dir=data_home(settings.data_dir) / "cache" / "llm",
                                          nlp=TextToolkit(embed=corpus.dense.embed))
    except BaseException:
        ingestor.store.close()
        raise
    return LocalTurns(LocalRuntime(models, retriever, tables=no_table), models, retriever, ingestor.store)


def no_table(name: str):
    raise ValueError("a roundtable keeps no information table: its mind map holds what it found")


def check_roundtable_roles(llm: LLMSettings) -> None:
    from agents.lm.models import check_roles
    from agents.lm.settings import ROUNDTABLE_ROLES

    check_roles(llm.roles, ROUNDTABLE_ROLES)


@asynccontextmanager
async def turns_here(settings: StoreSettings, collection: str, llm: LLMSettings, *, source: str = "corpus",
                     web=None) -> AsyncIterator[LocalTurns]:
    turns = local_turns(settings, collection, llm, source=source, web=web)
    try:
        yield turns
    finally:
        await turns.close()


@asynccontextmanager
async def turns_on(args, settings: StoreSettings, collection: str, llm: LLMSettings, source: str = "corpus",
                   web=None):
    """Where the command's turns run: the cluster's actors with --address/--distributed, else this process."""
    from cluster.distributed_args import wants_distributed

    if wants_distributed(args):
        from cluster.roundtable_cluster import cluster_turns
        from retrieval.search import check_collection

        check_roundtable_roles(llm)
        if source != "web":  # a missing one fails here, in one line; the Corpus actor opens it
            check_collection(settings, collection)
        async with cluster_turns(args, settings, collection, llm, source, web) as turns:
            yield turns
    else:
        async with turns_here(settings, collection, llm, source=source, web=web) as turns:
            yield turns


async def start_roundtable(topic: str, collection: str, runtime, files: SessionFiles,
                           options: RoundtableOptions | None = None, listener: Listener | None = None,
                           source: str = "corpus") -> Roundtable:
    return await Roundtable.start(topic, collection, runtime, options=options, files=files, listener=listener,
                                  source=source)


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
