"""Searches asked together go to the corpus actor in one call and find what one call each finds."""

from __future__ import annotations

import asyncio

from conftest import EXAMPLE_COLLECTION
from storm_runs import copy_home

from actors.corpus import CorpusPool
from actors.table import RemoteTable
from agents.storm.article import search_groups
from retrieval.query import SearchAsk, SearchFilter, search_each
from retrieval.snippets import Snippet


def _ids(hits) -> list[str]:
    return [h.passage.passage_id for h in hits]


def test_asks_with_their_own_k_and_filter_find_what_single_searches_find(ray_cluster, corpus_settings, tmp_path):
    pool = CorpusPool(copy_home(corpus_settings, tmp_path / "home"), EXAMPLE_COLLECTION)
    pool.wait_ready()
    retriever = pool.retriever()
    table = RemoteTable(pool.pool, "infotable-batch-test", encoder=retriever.encoder)
    try:
        async def scenario():
            first = await retriever.search("flood coverage", k=5)
            doc = first[0].passage.doc_id
            asks = [SearchAsk("flood coverage", 12), SearchAsk("flood coverage", 3, SearchFilter(doc_ids=[doc])),
                    SearchAsk("renters belongings", 4), SearchAsk("flood coverage", 3)]
            together = await search_each(retriever, asks)
            alone = [await retriever.search(a.query, k=a.k, flt=a.flt) for a in asks]

            await table.add([Snippet.from_passage(h.passage) for hits in alone for h in hits])
            groups = [(["flood coverage", "waiting period"], 5), (["renters belongings"], 2), ([" "], 3)]
            grouped = await search_groups(table, groups)
            single = [await table.search(queries, k) for queries, k in groups]
            return doc, together, alone, grouped, single

        doc, together, alone, grouped, single = asyncio.run(scenario())
        assert [_ids(h) for h in together] == [_ids(h) for h in alone]
        assert [len(h) for h in together] == [12, 3, 4, 3]
        assert {h.passage.doc_id for h in together[1]} == {doc}  # each ask kept its own filter
        assert [[s.point_id for s in g] for g in grouped] == [[s.point_id for s in g] for g in single]
        assert len(grouped[0]) == 5 and len(grouped[1]) == 2 and grouped[2] == []
    finally:
        asyncio.run(table.drop())
        pool.kill()
