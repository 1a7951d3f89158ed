"""`raystorm report "TOPIC" (--corpus PATH | --collection NAME)`: a cited STORM report per topic."""

from __future__ import annotations

import argparse
import gc
import hashlib
import re
import sys
from pathlib import Path

from agents.storm.outline_params import load_outline_params
from cluster.commands.common import (add_store_arguments, collection_name, count, info, relative_source, run_async,
                                     store_settings)

# Beyond these a run gets no better, only longer (STORM's own defaults are 3 and 3): refused, not capped silently.
MAX_PERSONAS, MAX_TURNS, MAX_SEARCH_K, MAX_SURVEY_K = 20, 20, 100, 500


def register(sub: argparse._SubParsersAction) -> None:
    from agents.lm.arguments import add_llm_arguments
    from agents.storm.options import SURVEY_PASSAGES
    from cluster.commands.sources import add_source_arguments
    from cluster.distributed_args import add_cluster_arguments

    p = sub.add_parser(
        "report", help="research a topic and write a cited report (STORM)",
        description="Research each topic from several perspectives through simulated writer-expert "
                    "conversations over the corpus, then write a Wikipedia-style report with numbered "
                    "citations to exact source lines. Writes STORM's files and report.md into "
                    "OUT/<topic_slug>/; a finished stage is reused on the next run, so a failed run resumes.")
    p.add_argument("topic", nargs="?", help="the topic (or use --topics FILE)")
    p.add_argument("--topics", metavar="FILE", help="a file with one topic a line ('#' starts a comment)")
    src = p.add_argument_group("corpus")
    src.add_argument("--corpus", metavar="PATH", action="append", default=[],
                     help="files or folders to research (repeatable); ingested first, which is cheap "
                          "when nothing changed, into --collection or a collection named after PATH")
    src.add_argument("--collection", "-c", type=collection_name, help="an ingested collection to research")
    out = p.add_argument_group("research and writing")
    out.add_argument("--out", metavar="DIR", help="where reports go (default: $RAYSTORM_HOME/runs)")
    out.add_argument("--personas", type=count(0, MAX_PERSONAS), default=3, metavar="N",
                     help=f"personas besides the basic fact writer (default 3, at most {MAX_PERSONAS})")
    out.add_argument("--turns", type=count(1, MAX_TURNS), default=3, metavar="N",
                     help=f"questions per conversation (default 3, at most {MAX_TURNS})")
    out.add_argument("--search-k", type=count(1, MAX_SEARCH_K), default=8, metavar="K",
                     help=f"passages per search query (default 8, at most {MAX_SEARCH_K})")
    out.add_argument("--survey-k", type=count(0, MAX_SURVEY_K), default=SURVEY_PASSAGES, metavar="K",
                     help=f"after the conversations, one search for the topic itself adds this many passages "
                          f"to the research table: the outline reads more of the corpus than the personas asked "
                          f"about (default {SURVEY_PASSAGES}, 0: none, at most {MAX_SURVEY_K})")
    out.add_argument("--exclude-url", action="append", default=[], metavar="URL",
                     help="never retrieve this URL (repeatable; e.g. the ground truth in an evaluation)")
    out.add_argument("--no-polish", action="store_true", help="keep sentences that repeat earlier ones")
    out.add_argument("--force", action="store_true", help="redo every stage, even those already done")
    out.add_argument("--writer", choices=("storm", "react"), default="storm",
                     help="storm (default): sections written from the research table; react: a report agent "
                          "writes each section in a think/tool/observe loop (quick search, insight forge, "
                          "panorama of current and superseded facts, interviews of the run's personas), "
                          "logging every step to agent_log.jsonl")
    out.add_argument("--react-min-calls", type=int, default=2, metavar="N", help="react: tool calls per section, "
                     "at least (default 2)")
    out.add_argument("--react-max-calls", type=int, default=5, metavar="N", help="react: tool calls per section, "
                     "at most (default 5)")
    out.add_argument("--outline-params", metavar="FILE",
                     help="a JSON object of the extractive outline's knobs (`OutlineParams` in "
                          "agents/storm/outline_params.py; fields left out keep their defaults, which "
                          "scripts/calibrate/cv_outline.py chose), e.g. {\"max_headings\": 8}; a chat model's outline "
                          "step reads only max_headings. `scripts/calibrate/cv_outline.py --export` writes one per "
                          "article: the knobs chosen without it")
    add_source_arguments(p)
    add_llm_arguments(p)
    add_cluster_arguments(p)
    add_store_arguments(p)
    p.set_defaults(func=run)


def read_topics(args: argparse.Namespace) -> list[str]:
    from retrieval.errors import UsageError

    topics: list[str] = []
    if args.topic is not None:
        if not args.topic.strip():
            raise UsageError("the topic is empty: give a topic, e.g. raystorm report \"flood coverage\" --corpus DIR")
        topics.append(" ".join(args.topic.split()))
    if args.topics:
        path = Path(args.topics)
        if not path.is_file():
            raise UsageError(f"--topics {args.topics}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise UsageError(f"--topics {args.topics}: cannot read it ({reason})") from None
        lines = [" ".join(line.split("#", 1)[0].split()) for line in text.splitlines()]
        found = [t for t in lines if t]
        if not found:
            raise UsageError(f"--topics {args.topics}: the file has no topics (one a line)")
        topics += found
    if not topics:
        raise UsageError("no topic: give TOPIC or --topics FILE")
    if not args.corpus and not args.collection and args.source in (None, "corpus", "hybrid"):
        raise UsageError("say what to research: --corpus PATH (files to ingest), --collection NAME, "
                         "or --source web (the web, through a search engine)")
    if not 1 <= args.react_min_calls <= args.react_max_calls:
        raise UsageError(f"--react-min-calls {args.react_min_calls} and --react-max-calls {args.react_max_calls}: "
                         "need 1 <= min <= max")
    return list(dict.fromkeys(topics))


def collection_for(paths: list[str]) -> str:
    """A collection name from the corpus path(s): the folder or file name, plus a hash when several."""
    names = [Path(p).expanduser().resolve().name or "corpus" for p in paths]
    base = re.sub(r"[^a-z0-9-]+", "-", "-".join(names).lower()).strip("-")[:48] or "corpus"
    if len(paths) > 1:
        base += "-" + hashlib.sha256("\n".join(sorted(str(Path(p).resolve()) for p in paths)).encode()).hexdigest()[:6]
    return base


def run(args: argparse.Namespace) -> int:
    import logging

    topics = read_topics(args)
    # autogen logs an agent's failure with a traceback before re-raising it; the error is reported here
    logging.getLogger("autogen_core").addHandler(logging.NullHandler())
    return run_async(_run(args, topics))


async def _run(args: argparse.Namespace, topics: list[str]) -> int:
    from agents.lm.arguments import settings_from_args
    from cluster.commands.sources import research_retriever, source_of, web_source
    from cluster.distributed_args import wants_distributed
    from cluster.runtime import resolve_address
    from retrieval.config import data_home
    from retrieval.errors import UsageError

    settings = store_settings(args)
    llm = settings_from_args(args)  # refuses bad LLM options before any work
    load_outline_params(args.outline_params)  # and a bad --outline-params file
    _refuse_cluster_options_locally(args)
    _check_credentials(llm)
    home = data_home(settings.data_dir)
    out_dir = writable_folder(Path(args.out).expanduser().resolve() if args.out else home / "runs", "--out")
    source = source_of(args, bool(args.corpus or args.collection))
    web = web_source(args) if source != "corpus" else None  # refuses a missing engine or key before any work
    collection = args.collection or (collection_for(args.corpus) if args.corpus else web.collection)
    distributed = wants_distributed(args)
    if distributed and resolve_address(args.address):
        from cluster.runtime import connect
        from cluster.service import find_service

        connect(args.address)  # joining a running cluster takes a moment: no need to overlap it
        service = find_service(collection) if web is None else None  # (a service researches its collection only)
        if service is not None:  # `raystorm serve` keeps this collection's actors up: the topics go there
            return await _run_on_service(service, args, topics, settings, collection, llm, out_dir)
    elif distributed:
        from cluster.runtime import connect_early

        connect_early(args.address)  # Ray comes up while the corpus is ingested and checked here
    # (imported here, not above: a report on the service needs none of them, and they take seconds)
    from agents.lm.arguments import role_models_from_args
    from agents.lm.extractive import NO_LLM_NOTICE
    from agents.lm.models import check_roles
    from agents.lm.nlp import TextToolkit
    from agents.lm.settings import STORM_ROLES
    from agents.runtime import LocalRuntime
    from agents.storm.artifacts import RunFiles, topic_slug
    from agents.web.hybrid import close_retriever
    from agents.storm.flow import run_topic
    from agents.storm.run_config import RunConfig
    from cluster.commands.diff import before_rerun, changed_line, collection_graph
    from retrieval.infotable import AsyncInformationTable, InformationTable
    from retrieval.ingest import Ingestor
    from retrieval.search import Corpus

    ingestor = Ingestor(settings)
    store = ingestor.store
    try:
        if args.corpus:
            summary = ingestor.ingest_paths(args.corpus, collection)
            info(f"corpus: ingested {', '.join(relative_source(str(Path(p).resolve())) for p in args.corpus)} "
                 f"into '{collection}': {summary.line()}")
            for line in summary.warnings(relative_source):
                info(line)
        corpus = Corpus(settings, collection, store=store, dense=ingestor.dense, sparse=ingestor.sparse)
        if source != "web":
            corpus.check()
        if distributed:  # the actors build the models; the driver only checks what the command line asks
            check_roles(llm.roles, STORM_ROLES)
            if not llm.uses_llm:
                info(NO_LLM_NOTICE)
        else:
            nlp = TextToolkit(embed=corpus.dense.embed)
            models = role_models_from_args(args, cache_dir=home / "cache" / "llm", nlp=nlp)
            models.validate_roles(STORM_ROLES)
            if models.notice:
                info(models.notice)
        options = report_options(args, collection)
        graph = collection_graph(store, collection)  # for changes.md after each topic
        if distributed:
            store.close()  # a Corpus actor opens the embedded store from here on
            return await _run_distributed(args, topics, settings, collection, llm, options, out_dir, home, graph,
                                          source, web)
        retriever, web_retriever = research_retriever(source, web, corpus, ingestor, home)
        runtime = LocalRuntime(models, retriever, version=retriever.version, tables=lambda name: AsyncInformationTable(
            InformationTable(store, name, corpus.dense, corpus.sparse, source=collection)))
        try:
            for topic in topics:
                run_dir = out_dir / topic_slug(topic)
                before_rerun(run_dir)  # a finished earlier run stays as previous/: changes.md compares them
                config = RunConfig(topic=topic, collection=collection, corpus=[str(Path(p).resolve()) for p in args.corpus],
                                   store=settings, llm=llm, options=options, source=source, web=web)
                try:
                    summary = await run_topic(topic, runtime, str(out_dir), options, progress=_progress,
                                              config=config, llm=llm)
                finally:
                    if web_retriever is not None:  # every query sent, kept with the run even when it failed
                        config.web_queries = web_retriever.take_queries()
                        RunFiles(out_dir, topic).write_config(config)
                changed = changed_line(run_dir, graph)
                _print_summary(summary)
                if changed:
                    info(changed)
        finally:
            await models.close()
            await close_retriever(retriever)  # its worker thread(s) and connections; the store is closed below
    finally:
        store.close()
    return 0


async def _run_distributed(args, topics, settings, collection, llm, options, out_dir, home, graph, source="corpus",
                           web=None) -> int:
    """Every topic and persona at once on Ray: --address, $RAY_ADDRESS (inside a job) or --distributed."""
    from agents.storm.artifacts import topic_slug
    from agents.storm.run_config import RunConfig
    from cluster.commands.diff import before_rerun, changed_line
    from cluster.distributed import TopicsFailed, reports_distributed
    from cluster.distributed_args import plan_from_args

    corpus_paths = [str(Path(p).resolve()) for p in args.corpus]

    def config_for(topic: str) -> RunConfig:
        return RunConfig(topic=topic, collection=collection, corpus=corpus_paths, store=settings, llm=llm,
                         options=options, source=source, web=web)

    # The driver holds every topic in flight, and each finished conversation leaves its autogen team as
    # cyclic garbage for the collector's full passes. Freezing what start-up made (imports, Ray's client)
    # keeps those passes to what the topics made: the driver's CPU at 64 topics fell from 25.5 to 17.9 s.
    gc.collect()
    gc.freeze()
    for topic in topics:
        before_rerun(out_dir / topic_slug(topic))
    try:
        summaries = await reports_distributed(
            topics, store=settings, collection=collection, out_dir=str(out_dir), llm=llm, options=options,
            progress=_progress, config_for=config_for, plan=plan_from_args(args), address=args.address,
            cache_dir=str(home / "cache" / "llm"), web=web, source=source, home=str(home))
    except TopicsFailed as exc:
        for summary in exc.summaries:
            _print_summary(summary)
        raise
    for summary in summaries:
        changed = changed_line(Path(summary.directory), graph)
        _print_summary(summary)
        if changed:
            info(changed)
    return 0


def where_of(args: argparse.Namespace, collection: str) -> str:
    """What a run searched, as a message names it ("... found in collection 'x'")."""
    source = getattr(args, "source", None)
    if source == "web":
        return "the web"
    return f"collection '{collection}' and the web" if source == "hybrid" else f"collection '{collection}'"


def report_options(args: argparse.Namespace, collection: str):
    from agents.storm.options import ReportOptions

    return ReportOptions(personas=args.personas, turns=args.turns, search_k=args.search_k, survey_k=args.survey_k,
                         exclude_urls=args.exclude_url, polish=not args.no_polish, force=args.force,
                         writer=args.writer, react_min_calls=args.react_min_calls,
                         react_max_calls=args.react_max_calls, where=where_of(args, collection),
                         outline=load_outline_params(args.outline_params))


async def _run_on_service(service, args, topics, settings, collection, llm, out_dir) -> int:
    """The topics on the report service that `raystorm serve` keeps up for this collection."""
    import ray

    from agents.storm.run_config import RunConfig
    from cluster.service import check_spec, report_via_service, service_name, spec_of
    from retrieval.errors import RaystormError, UsageError

    if args.corpus:
        raise UsageError(f"--corpus: the report service '{service_name(collection)}' holds this collection's store; "
                         f"give -c {collection} (the collection as ingested), or stop the service (`raystorm serve "
                         f"-c {collection} --address ... --stop`) to ingest again")
    given = plan_flags_given(args)
    if given:
        raise UsageError(f"{', '.join(given)}: the report service for '{collection}' runs with the plan it was "
                         "started with; give these to `raystorm serve`")
    found = check_spec(service, spec_of(settings, collection, llm))
    if args.writer == "react" and not found.report_agents:
        raise UsageError(f"--writer react: the report service for '{collection}' has no report agents; start it "
                         "with --report-agents N (one per topic in flight is plenty)")
    info(f"using the report service: {found.line()}")
    if found.node != ray.get_runtime_context().get_node_id():
        info(f"the reports are written to {out_dir} on node {found.node[:8]}, where the service runs")
    options = report_options(args, collection)
    configs = {topic: RunConfig(topic=topic, collection=collection, corpus=[], store=settings, llm=llm,
                                options=options) for topic in topics}
    run = await report_via_service(service, topics, str(out_dir), options, configs,
                                   say=lambda line: print(line, file=sys.stderr, flush=True))
    for summary in run.summaries:
        _print_summary(summary)
        if summary.topic in run.changed:
            info(run.changed[summary.topic])
    if run.failures:
        lines = "; ".join(f"'{t}': {e}" for t, e in run.failures.items())
        raise RaystormError(f"{len(run.failures)} of {len(topics)} topics failed: {lines}")
    return 0


def writable_folder(folder: Path, flag: str) -> Path:
    """`folder`, created if missing, once a file could be written in it; else a one-line error, before any work."""
    import tempfile

    from retrieval.errors import RaystormError, UsageError

    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{flag} {folder}: is a file, not a folder; give a folder (created if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise RaystormError(f"{flag} {folder}: cannot write there ({exc.strerror or exc}); "
                            f"give a folder you can write to") from None
    return folder


def _check_credentials(llm) -> None:
    """A missing API key is said before the ingest, not after it."""
    from agents.lm.settings import api_key

    for spec in llm.specs:
        api_key(spec)


def _refuse_cluster_options_locally(args: argparse.Namespace) -> None:
    """Cluster options only mean something on Ray: refused, not ignored, in a local run."""
    from cluster.distributed_args import wants_distributed
    from retrieval.errors import UsageError

    if wants_distributed(args):
        return
    given = plan_flags_given(args)
    if given:
        raise UsageError(f"{', '.join(given)} only apply on Ray: add --distributed or --address ADDR")


def plan_flags_given(args: argparse.Namespace) -> list[str]:
    """The cluster options the command line gave (they size a run's actors)."""
    return [flag for flag, value in (("--writers", args.writers), ("--experts", args.experts),
                                     ("--topics-in-flight", args.topics_in_flight),
                                     ("--llm-requests-per-minute", args.llm_requests_per_minute),
                                     ("--actor-resource", args.actor_resource),
                                     ("--call-timeout", args.call_timeout)) if value is not None]


def _print_summary(summary) -> None:
    print(summary.report)
    print(f"[{summary.topic}] {summary.line()}" + (f" (reused: {', '.join(summary.reused)})" if summary.reused else ""))
    if summary.fell_back:  # the same line in one process and on the cluster: the flow counts it per topic
        print(f"[{summary.topic}] LLM calls: {summary.fell_back}")


def _progress(event) -> None:
    print(event.line(), file=sys.stderr, flush=True)
