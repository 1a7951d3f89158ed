"""Search providers against fake engines speaking each documented format over real HTTP."""

from __future__ import annotations

import asyncio

import pytest

from agents.retry import RetryPolicy
from agents.web.providers import ENGINES, KEY_ENV, SearchEngineError, SearchEngineSettings, endpoint, search_web
from tests.webresearch.search_servers import HITS, Answer, SearchServer

FAST = RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.05, timeout_s=5.0)
KEY_HEADER = {"tavily": "authorization", "brave": "x-subscription-token", "serper": "x-api-key",
              "bing": "ocp-apim-subscription-key", "you": "x-api-key"}


@pytest.fixture(scope="module")
def engines():
    server = SearchServer()
    yield server
    server.close()


@pytest.fixture
def fake(engines, monkeypatch):
    engines.reset()
    for engine, var in KEY_ENV.items():
        monkeypatch.setenv(var, f"key-of-{engine}")
    return engines


def settings(server: SearchServer, engine: str, **extra) -> SearchEngineSettings:
    return SearchEngineSettings(engine=engine, url=server.url(engine), retry=extra.pop("retry", FAST), **extra)


@pytest.mark.parametrize("engine", ENGINES)
def test_each_engine_parses_its_documented_reply(fake, engine):
    results = asyncio.run(search_web(settings(fake, engine), "storm surge", k=2))
    assert [r.url for r in results] == [u for u, _, _ in HITS[:2]]
    assert [r.rank for r in results] == [1, 2]
    assert results[0].title == "Storm surge explained"  # <strong> dropped
    assert results[1].title == "Barriers & gates"  # entity decoded
    assert results[0].snippet == "A storm surge is a rise of the sea."
    assert {r.engine for r in results} == {engine}
    [request] = fake.requests(engine)
    asked = (request.query.get("q") or request.query.get("query") or [None])[0] \
        or (request.json or {}).get("query") or (request.json or {}).get("q")
    assert asked == "storm surge"
    if engine in KEY_HEADER:
        assert f"key-of-{engine}" in request.headers[KEY_HEADER[engine]]
    else:
        assert request.query["format"] == ["json"]


def test_an_endpoint_url_is_taken_whole_and_public_apis_are_the_default():
    assert endpoint(SearchEngineSettings(engine="bing")) == "https://api.bing.microsoft.com/v7.0/search"
    assert endpoint(SearchEngineSettings(engine="brave", url="http://h:1/res/v1/web/search/")) == \
        "http://h:1/res/v1/web/search"
    with pytest.raises(SearchEngineError) as err:
        endpoint(SearchEngineSettings(engine="searxng"))
    assert err.value.kind == "config" and "--search-url" in str(err.value)
    with pytest.raises(SearchEngineError) as err:
        endpoint(SearchEngineSettings(engine="searxng", url="localhost:8888"))
    assert err.value.kind == "config" and "must start with http://" in str(err.value)


def test_a_missing_key_names_its_variable_and_sends_nothing(fake, monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY")
    with pytest.raises(SearchEngineError) as err:
        asyncio.run(search_web(settings(fake, "brave"), "q", k=3))
    assert err.value.kind == "config" and "BRAVE_API_KEY" in str(err.value)
    assert fake.requests("brave") == []


def test_401_is_an_auth_failure_without_retries(fake):
    fake.script("serper", Answer(401, b'{"message": "Unauthorized."}'))
    with pytest.raises(SearchEngineError) as err:
        asyncio.run(search_web(settings(fake, "serper"), "q", k=3))
    assert err.value.kind == "auth" and "SERPER_API_KEY" in str(err.value)
    assert str(err.value).startswith("search engine serper:") and "\n" not in str(err.value)
    assert "key-of-serper" not in str(err.value)
    assert len(fake.requests("serper")) == 1


def test_429_then_200_is_retried_and_succeeds(fake):
    fake.script("tavily", Answer(429, b'{"detail": "slow down"}', headers={"Retry-After": "0.01"}), Answer())
    results = asyncio.run(search_web(settings(fake, "tavily"), "q", k=3))
    assert len(results) == 3 and len(fake.requests("tavily")) == 2


def test_500s_are_a_server_failure_after_the_retries(fake):
    fake.script("you", *[Answer(500, b"oops")] * 3)
    with pytest.raises(SearchEngineError) as err:
        asyncio.run(search_web(settings(fake, "you"), "q", k=3))
    assert err.value.kind == "server" and "after 3 tries" in str(err.value)
    assert len(fake.requests("you")) == 3


def test_a_reply_that_is_not_the_engines_json_is_junk(fake):
    fake.script("bing", *[Answer(200, b"<html>captive portal</html>", headers={"Content-Type": "text/html"})] * 3)
    with pytest.raises(SearchEngineError) as err:
        asyncio.run(search_web(settings(fake, "bing"), "q", k=3))
    assert err.value.kind == "junk" and "not JSON" in str(err.value)
    fake.script("searxng", Answer(200, b'{"unexpected": true}'), Answer(200, b"[]"), Answer(200, b"{}"))
    with pytest.raises(SearchEngineError) as err:
        asyncio.run(search_web(settings(fake, "searxng"), "q", k=3))
    assert err.value.kind == "junk"


def test_a_slow_engine_is_a_timeout(fake):
    fake.script("brave", Answer(delay_s=1.0), Answer(delay_s=1.0))
    with pytest.raises(SearchEngineError) as err:
        asyncio.run(search_web(settings(fake, "brave", timeout_s=0.2,
                                        retry=FAST.model_copy(update={"max_retries": 1})), "q", k=3))
    assert err.value.kind == "timeout"
