"""One open collection for a long-lived face (the MCP server; a web app): the store, the models, the
evidence graph and the reports started from it, shared by every request.

An embedded store opens in one process only, so a face owns it and every request goes through here. Each
method returns what the CLI's `--json` prints, built by the same functions the CLI uses; nothing here
decides anything a command does not. Paths a caller names (a run, a wiki folder) must lie inside the
folders the session was opened with.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from pydantic import BaseModel, Field

from retrieval.errors import RaystormError, UsageError

_log = logging.getLogger(__name__)


class ReportJob(BaseModel):
    """A report started by a face: its progress events as they come, then its result or its error."""

    run_id: str
    topic: str
    state: str = "running"  # running | done | failed
    events: list[str] = Field(default_factory=list)
    error: str | None = None
    directory: str | None = None


class Session:
    """`open` it once; every call then shares one store, one set of models and one graph."""

    def __init__(self, settings, collection: str, runs: Path, wikis: list[Path], llm_args, web=None):
        """`settings`: the StoreSettings; `llm_args`: the parsed --llm options (`add_llm_arguments`); `web`:
        the search engine and fetch settings (`agents.web.records.WebSource`) that let a request ask for
        `source` web or hybrid (None: the collection only)."""
        self.settings, self.collection, self.llm_args, self.web = settings, collection, llm_args, web
        self.web_retriever = None
        self.runs, self.wikis = runs.resolve(), [w.resolve() for w in wikis]
        self.jobs: dict[str, ReportJob] = {}
        self._tasks: set[asyncio.Task] = set()

    def open(self) -> "Session":
        from agents.lm.arguments import role_models_from_args
        from agents.lm.nlp import TextToolkit
        from retrieval.config import data_home
        from retrieval.ingest import Ingestor
        from retrieval.search import AsyncCorpus, Corpus

        ingestor = Ingestor(self.settings)
        self.store = ingestor.store
        try:
            self.corpus = Corpus(self.settings, self.collection, store=self.store, dense=ingestor.dense,
                                 sparse=ingestor.sparse)
            self.corpus.check()
            self.models = role_models_from_args(self.llm_args, cache_dir=data_home(self.settings.data_dir) / "cache"
                                                / "llm", nlp=TextToolkit(embed=self.corpus.dense.embed))
        except BaseException:
            self.store.close()
            raise
        self.retriever = AsyncCorpus(self.corpus)
        if self.web is not None:
            from agents.web.research import local_web_retriever

            self.web_retriever = local_web_retriever(self.web, ingestor, data_home(self.settings.data_dir))
        return self

    def retriever_for(self, source: str = "corpus"):
        """What a request searches: the collection, the web or both (`--source` of the CLI)."""
        if source == "corpus":
            return self.retriever
        if source not in ("web", "hybrid"):
            raise UsageError(f"source '{source}': say corpus, web or hybrid")
        if self.web_retriever is None:
            raise UsageError(f"source '{source}': this server was started without a search engine; start it "
                             "with --search-engine NAME (and --search-url URL for SearXNG) to research the web")
        if source == "web":
            return self.web_retriever
        from agents.web.hybrid import HybridRetriever

        return HybridRetriever(self.retriever, self.web_retriever)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.models.close()
        self.retriever.close()
        if self.web_retriever is not None:
            await self.web_retriever.aclose()

    # --- search, ask, graph ----------------------------------------------------------------------

    def graph(self):
        from retrieval.graph.store import GraphStore

        graphs = GraphStore(self.store)
        return graphs.load(self.collection) if graphs.exists(self.collection) else None

    async def search(self, query: str, k: int = 5, mode: str | None = None, sources: list[str] | None = None,
                     tags: list[str] | None = None, source: str = "corpus") -> list[dict]:
        from cluster.commands.search import hit_json
        from retrieval.query import SearchFilter

        if not query.strip():
            raise UsageError("the query is empty")
        flt = SearchFilter(sources=sources or [], tags=tags or [])
        if source != "corpus":
            hits = await self.retriever_for(source).search(query, k, flt)
        else:
            hits = await asyncio.to_thread(self.corpus.search, query, k, mode, flt)
        return [hit_json(h) for h in hits]

    async def ask_events(self, question: str, strategy: str = "auto", history: list[dict] | None = None,
                         source: str = "corpus"):
        """The same answer as `ask`, as events while it is made: each search and each model step (hops,
        intermediate answers) as it happens, then {"event": "answer", ...the ask --json object}."""
        queue: asyncio.Queue = asyncio.Queue()
        task = asyncio.ensure_future(self.ask(question, strategy, history, observe=queue.put_nowait, source=source))
        try:
            while not (task.done() and queue.empty()):
                waiter = asyncio.ensure_future(queue.get())
                await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
                if waiter.done():
                    yield waiter.result()
                else:
                    waiter.cancel()
            try:
                yield {"event": "answer", **task.result()}
            except RaystormError as exc:
                yield {"event": "error", "error": str(exc)}
        finally:
            task.cancel()

    async def ask(self, question: str, strategy: str = "auto", history: list[dict] | None = None,
                  observe=None, source: str = "corpus") -> dict:
        """The `ask --json` object; `history`: earlier turns of the dialogue (as this returns them in
        "turn"), so a follow-up is rewritten from them first; `observe(event)`: told of each search and
        model step as it happens."""
        from agents.answer.followup import RewriteFollowUp, RewriteInput, Turn
        from agents.multihop.strategies import MultihopSettings, ask
        from cluster.commands.ask import answer_json
        from cluster.commands.graph import statuses_in
        from cluster.observed import ObservedModel, ObservedRetriever

        if not question.strip():
            raise UsageError("the question is empty")
        turns = [Turn.model_validate(t) for t in history or []]
        asked = question
        if turns:
            asked = (await self.models.run(RewriteFollowUp, RewriteInput(question=question, turns=turns))).standalone
        models, retriever = self.models, self.retriever_for(source)
        if observe is not None:
            models, retriever = ObservedModel(models, observe), ObservedRetriever(retriever, observe)
        answer = await ask(asked, strategy, models, retriever, MultihopSettings())
        payload = answer_json(answer, question, None, statuses_in(self.graph(), answer.citations))
        payload["turn"] = Turn(question=question, standalone=asked, short_answer=answer.short_answer,
                               guess=answer.guess, answer_type=answer.answer_type).model_dump(mode="json")
        return payload

    def graph_locate(self, terms: str, k: int = 10) -> list[dict]:
        from retrieval.graph.navigate import locate

        return [f.model_dump(mode="json") for f in locate(self._graph(), terms, k)]

    def graph_expand(self, node: str, edges: list[str] | None = None, hops: int = 1) -> dict:
        from retrieval.graph.navigate import expand

        return expand(self._graph(), node, edges or None, hops).model_dump(mode="json")

    def _graph(self):
        graph = self.graph()
        if graph is None:
            raise RaystormError(f"collection '{self.collection}' has no evidence graph yet: run "
                                f"`raystorm ingest PATH --collection {self.collection}` again to build it")
        return graph

    # --- wiki and claims -------------------------------------------------------------------------

    def inside(self, path: str, what: str) -> Path:
        """`path` (relative to the runs folder, or absolute), links followed, if it lies inside the runs
        folder or a wiki folder of this session; else a `UsageError` (nothing outside is ever read)."""
        given = Path(path).expanduser()
        real = (given if given.is_absolute() else self.runs / given).resolve()
        for root in [self.runs, *self.wikis]:
            if real == root or root in real.parents:
                if not real.exists():
                    raise UsageError(f"{what} {path}: no such file or folder")
                return real
        raise UsageError(f"{what} {path}: outside the runs and wiki folders this server serves")

    def wiki_page(self, page: str) -> dict:
        """A wiki page (its name, e.g. 'flood-rider', or a .md / .claims.json path) and its claims."""
        from agents.wiki.claims import ClaimSet, sidecar_path
        from retrieval.saved import load_json

        name = Path(page).name.removesuffix(".claims.json").removesuffix(".md") + ".md"
        for folder in self.wikis:
            if (folder / name).is_file():
                md = self.inside(str(folder / name), "wiki page")
                claims = load_json(sidecar_path(md), ClaimSet, "rebuild the wiki with `raystorm wiki build`")
                return {"page": str(md), "markdown": md.read_text(encoding="utf-8"),
                        "claims": claims.model_dump(mode="json")}
        raise UsageError(f"no wiki page '{page}' in {', '.join(map(str, self.wikis)) or '(no --wiki folder)'}")

    def claims_check(self, folder: str) -> dict:
        from agents.wiki.check import check_folder

        return check_folder(self.inside(folder, "claims folder"), write=False).model_dump(mode="json")

    # --- reports and interviews ------------------------------------------------------------------

    def report_start(self, topic: str, writer: str = "storm", personas: int = 3, source: str = "corpus") -> str:
        from agents.storm.artifacts import topic_slug

        if not topic.strip():
            raise UsageError("the topic is empty")
        run_id = topic_slug(topic)
        if run_id in self.jobs and self.jobs[run_id].state == "running":
            return run_id
        retriever = self.retriever_for(source)  # refused here, before a job exists
        self.jobs[run_id] = ReportJob(run_id=run_id, topic=topic)
        task = asyncio.get_running_loop().create_task(self._report(self.jobs[run_id], writer, personas, retriever,
                                                                   source))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run_id

    async def _report(self, job: ReportJob, writer: str, personas: int, retriever, source: str) -> None:
        from agents.runtime import LocalRuntime
        from agents.storm.flow import run_topic
        from agents.storm.options import ReportOptions
        from cluster.commands.diff import after_run, before_rerun
        from retrieval.infotable import AsyncInformationTable, InformationTable

        runtime = LocalRuntime(self.models, retriever, version=retriever.version,
                               tables=lambda name: AsyncInformationTable(InformationTable(
                                   self.store, name, self.corpus.dense, self.corpus.sparse, source=self.collection)))
        try:
            where = {"corpus": f"collection '{self.collection}'", "web": "the web",
                     "hybrid": f"collection '{self.collection}' and the web"}[source]
            options = ReportOptions(writer=writer, personas=personas, where=where)
            before_rerun(self.runs / job.run_id)  # as `raystorm report` does: the page shows what changed
            summary = await run_topic(job.topic, runtime, str(self.runs), options,
                                      progress=lambda event: job.events.append(event.line()))
            after_run(self.runs / job.run_id, self.graph())  # reads files and the graph: ms
            job.state, job.directory = "done", summary.directory
        except asyncio.CancelledError:
            job.state, job.error = "failed", "cancelled: the server stopped; start it again to resume"
            raise
        except RaystormError as exc:
            job.state, job.error = "failed", str(exc)
        except Exception as exc:  # a bug of ours: still the job's end, said where it is polled, and logged whole
            job.state, job.error = "failed", f"{type(exc).__name__}: {exc}"
            _log.exception("report '%s' failed", job.run_id)

    def report_status(self, run_id: str, since: int = 0) -> dict:
        job = self.jobs.get(run_id)
        if job is None:
            done = self.runs / run_id / "report.md"
            if done.is_file():
                return {"run_id": run_id, "state": "done", "events": [], "next": 0}
            raise UsageError(f"no report '{run_id}' was started here, and {self.runs} holds none by that id")
        return {"run_id": run_id, "state": job.state, "error": job.error, "events": job.events[since:],
                "next": len(job.events)}

    def report_result(self, run_id: str) -> dict:
        from agents.storm.artifacts import ReferenceFile
        from retrieval.saved import load_json

        folder = self.inside(run_id, "run")
        report = folder / "report.md"
        if not report.is_file():
            state = self.jobs[run_id].state if run_id in self.jobs else "not started"
            raise UsageError(f"report '{run_id}' is not finished ({state}): poll report_status")
        refs = load_json(folder / "url_to_info.json", ReferenceFile, "rerun the report")
        return {"run_id": run_id, "report": report.read_text(encoding="utf-8"),
                "references": [c.model_dump(mode="json") for c in refs.citations]}

    def personas(self, run: str) -> list[dict]:
        from agents.report.memory import load_memories

        return [{"name": m.persona.name, "description": m.persona.description}
                for m in load_memories(self.inside(run, "run"))]

    def runs_list(self) -> list[dict]:
        """Every run folder: finished (report.md) or not, and the live state of those started here."""
        out = []
        for folder in sorted(p for p in self.runs.iterdir() if p.is_dir()) if self.runs.is_dir() else []:
            job = self.jobs.get(folder.name)
            state = job.state if job else ("done" if (folder / "report.md").is_file() else "unfinished")
            out.append({"run_id": folder.name, "state": state, "topic": job.topic if job else _topic_of(folder)})
        out += [{"run_id": j.run_id, "state": j.state, "topic": j.topic} for j in self.jobs.values()
                if not (self.runs / j.run_id).is_dir()]
        return out

    def documents(self) -> list[dict]:
        """The collection's files, each with its title and URL (from the evidence graph when built)."""
        graph = self.graph()
        if graph is not None:
            docs = {r.path: {"path": r.path, "title": r.title, "url": r.url, "node": r.node_id,
                             "state": graph.status(r.node_id).state} for r in graph.records}
            return sorted(docs.values(), key=lambda d: d["title"].lower())
        return [{"path": p, "title": Path(p).name, "url": None} for p in sorted(self._files())]

    def _files(self) -> set[str]:
        paths, _ = self.store.scan(self.collection)
        return set(paths)

    def _snapshots(self) -> set[str]:
        """The snapshot files of the web pages this server's web research fetched."""
        if self.web is None or not self.store.exists(self.web.collection):
            return set()
        paths, _ = self.store.scan(self.web.collection)
        return set(paths)

    def source(self, run: str, n: int, context: int = 4) -> dict:
        """Citation [n] of a report: the cited lines in their surrounding lines, read again from the
        file (only a file of the collection), with its current/superseded status and whether the lines
        still read as cited (ok) or changed since (stale)."""
        from agents.storm.artifacts import ReferenceFile
        from agents.wiki.claims import read_lines
        from retrieval.documents import sha256_text
        from retrieval.saved import load_json

        folder = self.inside(run, "run")
        refs = load_json(folder / "url_to_info.json", ReferenceFile, "rerun the report").citations
        cited = next((c for c in refs if c.index == n), None)
        if cited is None or not cited.snippets:
            raise UsageError(f"report '{run}' has no citation [{n}]")
        graph, out = self.graph(), []
        served = self._files() | self._snapshots()
        for snip in cited.snippets:
            if snip.path not in served:  # never a file outside the collection (or its web pages' snapshots)
                raise UsageError(f"[{n}] cites {snip.path}, which is not a file of collection '{self.collection}'")
            lines = read_lines(snip.path, snip.part) or []
            first, last = max(1, snip.line_start - context), min(len(lines), snip.line_end + context)
            now = "\n".join(lines[snip.line_start - 1: snip.line_end])
            status = graph.status_at(snip.path, snip.line_start) if graph is not None else None
            out.append({"path": snip.path, "title": snip.title, "url": snip.url, "part": snip.part.label()
                        if snip.part else None, "line_start": snip.line_start, "line_end": snip.line_end,
                        "first": first, "lines": lines[first - 1: last],
                        "check": "ok" if snip.text in now or sha256_text(now) == sha256_text(snip.text) else "stale",
                        "status": {"state": status.state, "summary": status.line()} if status else None})
        return {"n": n, "title": cited.title, "url": cited.url, "snippets": out}

    async def interview(self, run: str, question: str, persona: str | None = None) -> list[dict]:
        from agents.report.memory import interview, load_memories
        from cluster.commands.interview import interview_record, panel_of

        folder = self.inside(run, "run")
        memories = load_memories(folder)
        topic = _topic_of(folder)
        out = []
        for memory in panel_of(memories, None if persona in (None, "all") else persona, persona == "all"):
            answer = await interview(memory, topic, question, self.models, [])
            out.append(interview_record(memory.persona.name, question, answer))
        return out


def session_of(args, wikis: list[Path] | None = None) -> Session:
    """The session a long-lived face (`raystorm web`, `raystorm mcp`) describes on its command line (`args`):
    its store, collection, runs folder (`--runs`, else DATA_DIR/runs; made) and wiki folders."""
    from cluster.commands.common import store_settings
    from retrieval.config import data_home

    settings = store_settings(args)
    runs = Path(args.runs).expanduser() if args.runs else data_home(settings.data_dir) / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    return Session(settings, args.collection, runs, list(wikis or []), args, web=web_of(args))


def web_of(args):
    """The web research a face's command line allows (`--search-engine`, `--search-url`, or a key's
    environment variable with --source web/hybrid), else None."""
    if not (getattr(args, "search_engine", None) or getattr(args, "search_url", None)
            or getattr(args, "source", None) in ("web", "hybrid")):
        return None
    from cluster.commands.sources import web_source

    return web_source(args)


def _topic_of(folder: Path) -> str:
    """A run's topic as its run_config.json says, else its folder's name."""
    from cluster.commands.interview import RunTopic
    from retrieval.saved import DamagedFile, load_json

    try:
        return load_json(folder / "run_config.json", RunTopic, "").topic
    except DamagedFile:
        return folder.name
