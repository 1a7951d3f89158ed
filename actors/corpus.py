"""`Corpus` actors: hybrid search over an ingested collection, and the runs' information tables.

Embedded Qdrant is single-process, so in embedded mode the pool has exactly one
actor, pinned to the driver's node (the store folder is on that disk); it owns
the folder and hosts both the corpus search and every information table of
the run (`infotable-*` collections in the same store). With a Qdrant server
every actor opens its own client to it, the pool grows with the cluster
(one per node by default), and table calls spread over the pool (`actors.table`).

Callers embed their own queries (`actors.retriever.PoolRetriever`, one model per
process) and send the vectors, so the one store owner of embedded mode only
searches and writes: the embedding work spreads over the experts instead of
queueing here. Snippets found in the corpus reuse the corpus's vectors in the tables.

Every method is safe to repeat (searches read; table writes are idempotent by
point id), so Ray retries a call whose actor died (`max_task_retries`).
"""

from __future__ import annotations

import ray

from actors.pool import ActorOptions, ActorPool
from actors.retriever import SEARCH_TIMEOUT_S, PoolRetriever
from retrieval.config import StoreSettings
from retrieval.embeddings import embed_threads
from retrieval.errors import RaystormError
from retrieval.graph.store import GraphStore
from retrieval.graph.view import EvidenceGraph
from retrieval.infotable import InformationTable, Snippet
from retrieval.query import SearchAsk
from retrieval.search import Corpus, QueryVectors, SearchSettings
from retrieval.store import SearchFilter, SearchHit, SearchMode

CORPUS_OPTIONS = ActorOptions(max_restarts=-1, max_task_retries=3)


@ray.remote(**CORPUS_OPTIONS.ray_options())
class CorpusActor:
    """Hosts one `retrieval.search.Corpus` and, on the same Qdrant client, the runs' tables."""

    def __init__(self, settings: StoreSettings, collection: str, search: SearchSettings | None = None,
                 check: bool = True):
        """`check`: refuse a missing or empty collection (False: a web-only run, whose pages come later)."""
        embed_threads(1)
        self._corpus = Corpus(settings, collection, search=search)
        if check:
            self._corpus.check()
        self._tables: dict[str, InformationTable] = {}
        self._others: dict[str, Corpus] = {}  # other collections of the store (the web's pages), searched here

    def search(self, query: str, k: int, mode: SearchMode | None, flt: SearchFilter | None,
               mmr: bool, vectors: QueryVectors | None = None) -> list[SearchHit]:
        return self._corpus.search(query, k=k, mode=mode, flt=flt, mmr=mmr, vectors=vectors)

    def search_many(self, asks: list[SearchAsk], mode: SearchMode | None, mmr: bool,
                    vectors: list[QueryVectors | None]) -> list[list[SearchHit]]:
        """`search` for each ask, in one call."""
        return [self._corpus.search(a.query, k=a.k, mode=mode, flt=a.flt, mmr=mmr, vectors=v)
                for a, v in zip(asks, vectors, strict=True)]

    def version(self) -> str:
        """A hash of the collection's passage ids (`Corpus.version`), for a run's checkpoints."""
        return self._corpus.version()

    def warm(self) -> None:
        """Load the embedding models now, so the first search of a run does not wait for them: the query
        models, and the document model the information tables embed snippets with."""
        self._corpus.encoder.warm()
        self._corpus.dense.dimension

    def evidence_graph(self) -> EvidenceGraph:
        """The collection's evidence graph as it stands (empty without one): in embedded mode this actor
        owns the store, so a report service reads the graph here for changes.md."""
        return GraphStore(self._corpus.store).load(self._corpus.collection)

    def ready(self) -> str:
        """The node this actor runs on, once it is up."""
        return ray.get_runtime_context().get_node_id()

    def ingest_paths(self, paths: list[str], collection: str) -> int:
        """Ingest files of this node's disk (fetched pages' snapshots) into `collection` of the store this
        actor owns; the passages added. Safe to repeat: an ingested file is a no-op."""
        from retrieval.ingest import Ingestor  # (the readers load only in a run that researches the web)

        c = self._corpus
        summary = Ingestor(c.settings, store=c.store, dense=c.dense, sparse=c.sparse).ingest_paths(paths, collection)
        if summary.added or summary.removed:
            self._others.pop(collection, None)  # its evidence graph grew: read it again
        return summary.added

    def search_in(self, collection: str, query: str, k: int, flt: SearchFilter | None) -> list[SearchHit]:
        """A search of another collection of the same store (none yet: no hits)."""
        if collection not in self._others:
            c = self._corpus
            if not c.store.exists(collection):
                return []
            self._others[collection] = Corpus(c.settings, collection, store=c.store, dense=c.dense, sparse=c.sparse)
        return self._others[collection].search(query, k=k, flt=flt)

    def _table(self, name: str) -> InformationTable:
        if name not in self._tables:
            c = self._corpus
            self._tables[name] = InformationTable(c.store, name, c.dense, c.sparse, source=c.collection)
        return self._tables[name]

    def table_add(self, name: str, snippets: list[Snippet]) -> int:
        return self._table(name).add(snippets)

    def table_search(self, name: str, queries: list[str], k: int,
                     vectors: list[QueryVectors] | None = None) -> list[Snippet]:
        return self._table(name).search(queries, k, vectors)

    def table_search_many(self, name: str, groups: list[tuple[list[str], int]],
                          vectors: list[list[QueryVectors]] | None = None) -> list[list[Snippet]]:
        """`table_search` for each (queries, k) group, in one call (and one batch request to the store)."""
        return self._table(name).search_many(groups, vectors)

    def table_snippets(self, name: str) -> list[Snippet]:
        return self._table(name).snippets()

    def table_count(self, name: str) -> int:
        return len(self._table(name))

    def table_drop(self, name: str) -> None:
        self._table(name).drop()
        self._tables.pop(name, None)

    def close(self) -> None:
        """Let go of the store (in embedded mode: its folder's lock), so another process may open it."""
        self._tables.clear()
        self._corpus.close()


class CorpusPool:
    """Corpus actors for one collection, as a `Retriever`; every call bounded by a timeout.

    `pin_node`: in embedded mode, the node whose disk holds the store (default: the
    driver's). `size` is ignored in embedded mode (one owner for the folder).
    """

    def __init__(self, settings: StoreSettings, collection: str, size: int = 1,
                 search: SearchSettings | None = None, mode: SearchMode | None = None, mmr: bool = False,
                 timeout_s: float = SEARCH_TIMEOUT_S, options: ActorOptions | None = None,
                 pin_node: str | None = None, check: bool = True):
        options = options or CORPUS_OPTIONS
        if not settings.qdrant_url:
            size = 1  # one owner for the embedded store folder, on the node that has it
            options = options.model_copy(update={"pin_node": pin_node or ray.get_runtime_context().get_node_id()})
        self.collection = collection
        self.timeout_s = timeout_s
        self.pool = ActorPool.create(CorpusActor, size, options, label=f"Corpus[{collection}]",
                                     args=(settings, collection, search, check))
        self.actors = self.pool.handles
        # the actors' mode, spelled out, so callers embed what those searches need
        mode = mode or (search or SearchSettings()).mode
        self._retriever = PoolRetriever(self.pool, collection, mode, mmr, timeout_s, store=settings)

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        try:
            self.pool.wait_ready(timeout_s=timeout_s)
            self.pool.broadcast("warm", stage="startup", timeout_s=timeout_s)
        except RaystormError as exc:
            raise RaystormError(f"Corpus actor for '{self.collection}' did not start: {exc}") from exc

    def retriever(self) -> PoolRetriever:
        return self._retriever

    async def evidence_graph(self) -> EvidenceGraph:
        return await self.pool.call(CorpusActor.evidence_graph, stage="changes", timeout_s=self.timeout_s,
                                    idempotent=True)

    async def search(self, query: str, k: int = 5, flt: SearchFilter | None = None) -> list[SearchHit]:
        return await self._retriever.search(query, k=k, flt=flt)

    def kill(self, timeout_s: float = 30.0) -> None:
        """Close the actors' stores (bounded), then end them: the store folder is free on return."""
        refs = [h.close.remote() for h in self.pool.handles]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
        for ref in ready:
            try:
                ray.get(ref, timeout=0)
            except ray.exceptions.RayError:  # already gone: its lock went with its process
                pass
        self.pool.kill()

