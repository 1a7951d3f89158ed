"""Shared by the distributed-run tests: the topics, an in-process reference run, artifact snapshots."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from agents.lm.models import StageModels
from agents.lm.nlp import TextToolkit
from agents.lm.settings import LLMSettings
from agents.storm.artifacts import CALL_HISTORY, RUN_CONFIG
from agents.storm.pipeline import ReportOptions, run_report
from cluster.distributed import run_table_name
from retrieval.config import StoreSettings
from retrieval.infotable import InformationTable
from retrieval.search import AsyncCorpus, Corpus

TOPICS = ["Flood rider waiting period", "Small business policy revisions", "Cyber add-on coverage"]
OPTIONS = ReportOptions(personas=2, turns=2)
TIMING_FILES = {CALL_HISTORY, RUN_CONFIG}  # call ids and times differ from run to run


class LocalTable:
    """The pipeline's async table over an `InformationTable` on the corpus's one thread."""

    def __init__(self, corpus: AsyncCorpus, name: str):
        c = corpus.corpus
        self._table = InformationTable(c.store, name, c.dense, c.sparse)
        self._corpus = corpus

    async def _run(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._corpus._pool, fn, *args)

    async def add(self, snippets):
        return await self._run(self._table.add, list(snippets))

    async def search(self, queries, k):
        return await self._run(self._table.search, list(queries), k)

    async def url_to_info(self):
        return await self._run(self._table.url_to_info)


def copy_home(settings: StoreSettings, target: Path) -> StoreSettings:
    """A private copy of the ingested data dir: the embedded store has one owner at a time."""
    shutil.copytree(settings.data_dir, target, symlinks=True)
    return StoreSettings.resolve(str(target))


def in_process(settings: StoreSettings, collection: str, out_dir: Path, topics=TOPICS,
               options: ReportOptions = OPTIONS) -> None:
    async def run_all():
        corpus = AsyncCorpus(Corpus(settings, collection))
        models = StageModels.from_settings(LLMSettings(), nlp=TextToolkit())
        try:
            for topic in topics:  # one topic after another
                table = LocalTable(corpus, run_table_name(str(out_dir), topic))
                await run_report(topic, retriever=corpus, table=table, models=models, out_dir=str(out_dir),
                                 options=options, ledger=models.ledger)
        finally:
            corpus.close()

    asyncio.run(run_all())


def artifacts(out_dir: Path) -> dict[str, str]:
    """Every artifact's text by its path under `out_dir`, leaving out the files with timings."""
    return {str(p.relative_to(out_dir)): p.read_text(encoding="utf-8") for p in sorted(out_dir.rglob("*"))
            if p.is_file() and p.name not in TIMING_FILES}
