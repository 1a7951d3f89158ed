"""`--source hybrid`: every search asks the collection and the web at once and fuses the two lists.

Reciprocal rank fusion (score = sum of 1 / (k + rank) over the lists a passage is in) needs no
common score scale, which a dense-and-BM25 collection score and a freshly ingested web snapshot's
score do not have. A passage keeps its own source, so a report cites the collection's files and the
web's snapshots side by side.

    retriever = HybridRetriever(AsyncCorpus(corpus), WebRetriever(...))
    hits = await retriever.search("flood rider waiting period", k=8)
"""

from __future__ import annotations

import asyncio

from retrieval.query import Retriever, SearchFilter, SearchHit

# Cormack et al.'s constant: ranks past the first few differ little, so neither list's tail outweighs
# the other list's head
RRF_K = 60


def fuse(lists: list[list[SearchHit]], k: int, rrf_k: int = RRF_K) -> list[SearchHit]:
    """The `k` best passages of several ranked lists by reciprocal rank fusion, ranked from 1; a passage
    found by several lists counts once, with its first list's hit (and status)."""
    scores: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    for hits in lists:
        for rank, hit in enumerate(hits, start=1):
            key = hit.passage.passage_id
            scores[key] = scores.get(key, 0.0) + 1.0 / (rrf_k + rank)
            first.setdefault(key, hit)
    order = sorted(scores, key=lambda key: -scores[key])[:k]
    return [first[key].model_copy(update={"rank": i, "score": scores[key]}) for i, key in enumerate(order, start=1)]


class HybridRetriever:
    """A `Retriever` over a collection and the web: both searched at once, fused by RRF."""

    def __init__(self, corpus: Retriever, web: Retriever):
        self.corpus = corpus
        self.web = web
        # the collection's query models where its retriever has them (corpus actors: the run's tables use them)
        self.encoder = getattr(corpus, "encoder", None)

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        lists = await asyncio.gather(self.corpus.search(query, k, flt), self.web.search(query, k, flt))
        return fuse(list(lists), k)

    async def version(self) -> str:
        corpus = await _version(self.corpus)
        web = await _version(self.web)
        return f"{corpus}+{web}"

    async def aclose(self) -> None:
        for part in (self.corpus, self.web):
            await close_retriever(part)


async def close_retriever(retriever) -> None:
    """Close what a retriever holds: `aclose()` where it has one (connections), else `close()`."""
    aclose = getattr(retriever, "aclose", None)
    if aclose is not None:
        await aclose()
        return
    close = getattr(retriever, "close", None)
    if close is not None:
        close()


async def _version(retriever: Retriever) -> str:
    version = getattr(retriever, "version", None)
    return await version() if version is not None else ""
