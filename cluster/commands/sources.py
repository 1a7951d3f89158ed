"""`--source corpus|web|hybrid` and the web search options, shared by `report`, `ask`, `roundtable`,
`web` and `mcp`; and the retriever each choice opens.

    raystorm report "TOPIC" --source web --search-engine tavily          # TAVILY_API_KEY in the environment
    raystorm report "TOPIC" -c mine --source hybrid --search-engine searxng --search-url http://127.0.0.1:8888
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from cluster.commands.common import collection_name, count, info

SOURCES = ("corpus", "web", "hybrid")
ENGINES = ("searxng", "tavily", "brave", "serper", "bing", "you")
# the environment variable each engine's key is read from, in the order an engine is picked when none is named
ENGINE_KEYS = {"tavily": "TAVILY_API_KEY", "brave": "BRAVE_API_KEY", "serper": "SERPER_API_KEY",
               "bing": "BING_SEARCH_API_KEY", "you": "YDC_API_KEY"}
WEB_COLLECTION = "web"
MAX_RESULTS = 20


def add_source_arguments(parser: argparse.ArgumentParser, server: bool = False) -> None:
    """`server`: a face (`web`, `mcp`) whose requests each name their source; its command line only
    names the engine that lets them ask for web or hybrid."""
    about = ("each page kept is fetched (robots.txt honoured, a few requests per site at a time), saved as a "
             "snapshot in the data dir and cited at its lines")
    group = parser.add_argument_group("web research", (
        "with --search-engine (or --search-url), requests may set source to web or hybrid; " if server else
        "--source web searches the web instead of a collection, --source hybrid searches both and fuses them; ")
        + about)
    if not server:
        group.add_argument("--source", choices=SOURCES, default=None,
                           help="corpus (default with -c/--corpus), web, or hybrid")
    group.add_argument("--search-engine", choices=ENGINES, default=None,
                       help="the web search engine (default: searxng when --search-url is given, else the first "
                            "of tavily, brave, serper, bing, you whose key is set: " +
                            ", ".join(ENGINE_KEYS.values()) + ")")
    group.add_argument("--search-url", metavar="URL",
                       help="the engine's base URL: a self-hosted SearXNG (required for searxng; also "
                            "$SEARXNG_URL), or another engine's API behind a proxy")
    group.add_argument("--search-results", type=count(1, MAX_RESULTS), default=8, metavar="N",
                       help=f"engine results fetched per query (default 8, at most {MAX_RESULTS})")
    group.add_argument("--web-collection", type=collection_name, default=WEB_COLLECTION, metavar="NAME",
                       help=f"the collection fetched pages go into (default '{WEB_COLLECTION}'); pages fetched "
                            "by an earlier run are reused while fresh")
    group.add_argument("--allow-private-hosts", action="store_true",
                       help="let pages on loopback, private and link-local addresses be fetched (an intranet; "
                            "refused by default, after DNS and at every redirect)")
    group.add_argument("--fetch-timeout", type=float, default=15.0, metavar="S",
                       help="seconds one page may take (default 15)")
    group.add_argument("--max-page-mb", type=float, default=5.0, metavar="MB",
                       help="a larger page is skipped, unread (default 5)")
    group.add_argument("--per-site", type=count(1, 16), default=2, metavar="N",
                       help="requests in flight to one site at most (default 2)")
    group.add_argument("--site-interval", type=float, default=1.0, metavar="S",
                       help="seconds between two requests to one site at least (default 1.0)")


def source_of(args: argparse.Namespace, has_collection: bool) -> str:
    """The source the options ask for: as given, else corpus with a collection and web without."""
    from retrieval.errors import UsageError

    source = args.source or ("corpus" if has_collection else "web")
    if source in ("corpus", "hybrid") and not has_collection:
        raise UsageError(f"--source {source} needs a collection: -c NAME or --corpus PATH "
                         "(or --source web to research the web alone)")
    web_options = args.search_engine or args.search_url or args.allow_private_hosts
    if source == "corpus" and web_options:
        raise UsageError("--search-engine, --search-url and --allow-private-hosts are for --source web or hybrid")
    return source


def web_source(args: argparse.Namespace):
    """The web research settings the options ask for (`agents.web.research.WebSource`), refused in one
    line when no engine can be used."""
    from agents.web.fetch import FetchSettings
    from agents.web.politeness import DomainLimits
    from agents.web.providers import SearchEngineSettings
    from agents.web.research import WebSource
    from retrieval.errors import UsageError

    url = args.search_url or os.environ.get("SEARXNG_URL") or None
    engine = args.search_engine or ("searxng" if url else next((e for e, k in ENGINE_KEYS.items() if os.environ.get(k)),
                                                                 None))
    if engine is None:
        raise UsageError("web research needs a search engine: --search-engine searxng --search-url URL (self-hosted, "
                         "no key), or set one of " + ", ".join(f"{k} ({e})" for e, k in ENGINE_KEYS.items()))
    if engine == "searxng" and not url:
        raise UsageError("--search-engine searxng needs --search-url URL (or $SEARXNG_URL): the SearXNG instance")
    if engine in ENGINE_KEYS and not os.environ.get(ENGINE_KEYS[engine]):
        raise UsageError(f"--search-engine {engine} needs an API key in ${ENGINE_KEYS[engine]}")
    if not 0 < args.fetch_timeout <= 300:
        raise UsageError(f"--fetch-timeout {args.fetch_timeout}: give seconds from 0 to 300")
    if not 0 < args.max_page_mb <= 1024:
        raise UsageError(f"--max-page-mb {args.max_page_mb}: give megabytes from 0 to 1024")
    if not 0 <= args.site_interval <= 60:
        raise UsageError(f"--site-interval {args.site_interval}: give seconds from 0 to 60")
    fetch = FetchSettings(timeout_s=args.fetch_timeout, max_bytes=int(args.max_page_mb * 1024 * 1024),
                          allow_private_hosts=args.allow_private_hosts,
                          limits=DomainLimits(max_in_flight=args.per_site, min_interval_s=args.site_interval))
    return WebSource(engine=SearchEngineSettings(engine=engine, url=url if engine == "searxng" or args.search_url
                                                 else None),
                     fetch=fetch, results_per_query=args.search_results, collection=args.web_collection)


def research_retriever(source: str, web, corpus, ingestor, home: Path, quiet: bool = False):
    """What a run searches in this process: the collection, the web, or both fused; and the web part,
    whose queries the run records (None for `corpus`). Each web query is said on stderr unless `quiet`."""
    from retrieval.search import AsyncCorpus

    if source == "corpus":
        return AsyncCorpus(corpus), None
    from agents.web.hybrid import HybridRetriever
    from agents.web.research import local_web_retriever

    web_retriever = local_web_retriever(web, ingestor, home, observe=None if quiet else lambda q: info(q.line()))
    if source == "web":
        return web_retriever, web_retriever
    return HybridRetriever(AsyncCorpus(corpus), web_retriever), web_retriever
