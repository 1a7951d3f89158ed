"""The `source` option on the faces: the HTTP API (and so the web app's selector) and the MCP tools search
the collection, the web or both through one `Session` that was started with a search engine; a server
started without one refuses web in one line. The SearXNG stand-in and the site run on 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import httpx
import pytest

import retrieval.ingest
from agents.lm.arguments import add_llm_arguments
from agents.web.fetch import FetchSettings
from agents.web.politeness import DomainLimits
from agents.web.providers import SearchEngineSettings
from agents.web.records import WebSource
from cluster.mcp_server import build_server
from cluster.session import Session
from cluster.web.app import create_app
from cluster.web.guard import GateSettings
from retrieval.errors import UsageError
from site_pages import site  # noqa: F401  (the fixture: the site and search stand-in)
from tests.support.store_points import ingested_settings

EXAMPLE_DIR = Path(retrieval.ingest.__file__).parent / "example_corpus"


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return ingested_settings(tmp_path_factory, EXAMPLE_DIR, "ex")


def _llm_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    return parser.parse_args([])


def _session(settings, tmp_path, web: WebSource | None) -> Session:
    return Session(settings, "ex", tmp_path / "runs", [], _llm_args(), web=web).open()


def test_the_api_and_the_mcp_tools_search_the_web_and_both(settings, site, tmp_path):
    web = WebSource(engine=SearchEngineSettings(engine="searxng", url=site.url),
                    fetch=FetchSettings(allow_private_hosts=True, limits=DomainLimits(min_interval_s=0.0)))
    session = _session(settings, tmp_path, web)
    app = create_app(lambda: session, lambda: None, lambda: GateSettings(allowed_hosts=["*"], max_body=2**20))

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as client:
            assert (await client.get("/api/health")).json()["sources"] == ["corpus", "web", "hybrid"]
            found = {}
            for source in ("corpus", "web", "hybrid"):
                reply = await client.get("/api/search", params={"q": "Greyhaven flood grant limit per home",
                                                               "k": 6, "source": source})
                assert reply.status_code == 200, reply.text
                found[source] = {h.get("url") or "" for h in reply.json()}
            assert not any(u.startswith(site.url) for u in found["corpus"])
            assert found["web"] and all(u.startswith(site.url) for u in found["web"])
            assert any(u.startswith(site.url) for u in found["hybrid"])
            assert any(not u.startswith(site.url) for u in found["hybrid"])
            page = (await client.get("/ask")).text
            assert '<select name="source"' in page and "collection + web" in page
        server = build_server(session)
        result = await server.call_tool("search", {"query": "Greyhaven grant limit", "k": 3, "source": "web"})
        assert site.url in str(result)
        await session.close()

    asyncio.run(go())


def test_a_server_without_a_search_engine_refuses_web_in_one_line(settings, tmp_path):
    session = _session(settings, tmp_path, None)

    async def go():
        with pytest.raises(UsageError, match="without a search engine.*--search-engine"):
            await session.search("flood", 3, source="web")
        with pytest.raises(UsageError, match="without a search engine"):
            session.report_start("Flood rider", source="hybrid")
        assert session.jobs == {}  # refused before a job existed
        await session.close()

    asyncio.run(go())
