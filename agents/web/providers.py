"""Web search: one small adapter per search engine, over its documented HTTP API.

Engines: SearXNG (self-hosted, no key), Tavily, Brave, Serper (Google results), Bing and
You.com. A key is read from the environment when a request is made (`TAVILY_API_KEY`,
`BRAVE_API_KEY`, `SERPER_API_KEY`, `BING_SEARCH_API_KEY`, `YDC_API_KEY`), never held in the
settings, so settings can be printed and written to a run's config. `url` overrides the
engine's base URL (a self-hosted SearXNG, a test server); the endpoint's path is appended
unless the URL already ends with it. SearXNG answers with its first page of results (often ~10),
the others with up to `k` (at most 20, Bing 50).

A failure (401, 429, 5xx, a body that is not the engine's JSON, a timeout) is retried by the
project's one `RetryPolicy` when another try can help, then raised as `SearchEngineError`
with a `kind` and one line naming the engine.

    settings = SearchEngineSettings(engine="searxng", url="http://localhost:8888")
    results = await search_web(settings, "storm surge barriers", k=8)
    for r in results:
        print(r.rank, r.url, r.title)
"""

from __future__ import annotations

import asyncio
import html
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Literal

import httpx
from pydantic import BaseModel, Field

from agents.lm.backoff import classify
from agents.retry import RetryPolicy
from retrieval.errors import RaystormError

Engine = Literal["searxng", "tavily", "brave", "serper", "bing", "you"]
ENGINES: tuple[str, ...] = ("searxng", "tavily", "brave", "serper", "bing", "you")
ErrorKind = Literal["auth", "rate_limited", "server", "junk", "timeout", "config"]

KEY_ENV: dict[str, str] = {"tavily": "TAVILY_API_KEY", "brave": "BRAVE_API_KEY", "serper": "SERPER_API_KEY",
                           "bing": "BING_SEARCH_API_KEY", "you": "YDC_API_KEY"}

# a search request is small: a few tries a second or so apart, then the error
SEARCH_RETRY = RetryPolicy(max_retries=3, base_delay_s=1.0, max_delay_s=20.0, timeout_s=45.0)


class WebResult(BaseModel):
    url: str
    title: str
    snippet: str = ""
    engine: str
    rank: int = Field(ge=1, description="1 = the engine's first result")


class SearchEngineSettings(BaseModel):
    """Which engine and where; never a key (keys come from the environment, see `KEY_ENV`)."""

    engine: Engine
    url: str | None = Field(None, description="base URL override: a self-hosted SearXNG, a test server")
    timeout_s: float = Field(20.0, gt=0, description="connect/read limit of one request")
    retry: RetryPolicy = SEARCH_RETRY


class SearchEngineError(RaystormError):
    """A search that failed after its retries; `kind` says how, the message names the engine."""

    def __init__(self, engine: str, kind: ErrorKind, reason: str, status: int | None = None):
        super().__init__(f"search engine {engine}: {reason}")
        self.engine = engine
        self.kind = kind
        self.reason = reason
        self.status = status
        self.retry_after: float | None = None  # what a 429/503 asked for

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limited", "server", "junk", "timeout")


@dataclass(frozen=True)
class _Request:
    method: Literal["GET", "POST"]
    params: dict[str, Any] | None = None
    json: dict[str, Any] | None = None
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class _Adapter:
    base: str | None  # None: no public instance (SearXNG is self-hosted)
    path: str
    build: Callable[[str, int, str | None], _Request]  # (query, k, key) -> request
    rows: Callable[[Any], list[tuple[str, str, str]]]  # JSON -> (url, title, snippet); KeyError/TypeError: junk


def _list(value: Any) -> list:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _text(value: Any) -> str:
    """A title or snippet as plain text: engines mark matches with <strong>/<b> and escape entities."""
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return " ".join(html.unescape(re.sub(r"<[^>]{0,200}>", "", str(value or ""))).split())


def _searxng_rows(data: Any) -> list[tuple[str, str, str]]:
    return [(r["url"], r.get("title", ""), r.get("content", "")) for r in _list(data["results"])]


def _tavily_rows(data: Any) -> list[tuple[str, str, str]]:
    return [(r["url"], r.get("title", ""), r.get("content", "")) for r in _list(data["results"])]


def _brave_rows(data: Any) -> list[tuple[str, str, str]]:
    web = data.get("web") or {"results": []}  # no `web` section: nothing found
    return [(r["url"], r.get("title", ""), r.get("description", "")) for r in _list(web["results"])]


def _serper_rows(data: Any) -> list[tuple[str, str, str]]:
    return [(r["link"], r.get("title", ""), r.get("snippet", "")) for r in _list(data.get("organic", []))]


def _bing_rows(data: Any) -> list[tuple[str, str, str]]:
    if data.get("_type") == "ErrorResponse" or "_type" not in data:
        raise KeyError("not a Bing SearchResponse")
    pages = data.get("webPages") or {"value": []}  # no `webPages`: nothing found
    return [(r["url"], r.get("name", ""), r.get("snippet", "")) for r in _list(pages["value"])]


def _you_rows(data: Any) -> list[tuple[str, str, str]]:
    return [(r["url"], r.get("title", ""), r.get("snippets") or r.get("description", ""))
            for r in _list(data["hits"])]


ADAPTERS: dict[str, _Adapter] = {
    "searxng": _Adapter(None, "/search", lambda q, k, key: _Request("GET", params={"q": q, "format": "json"}),
                        _searxng_rows),
    "tavily": _Adapter("https://api.tavily.com", "/search",
                       lambda q, k, key: _Request("POST", json={"query": q, "max_results": min(k, 20)},
                                                  headers={"Authorization": f"Bearer {key}"}),
                       _tavily_rows),
    "brave": _Adapter("https://api.search.brave.com", "/res/v1/web/search",
                      lambda q, k, key: _Request("GET", params={"q": q, "count": min(k, 20)},
                                                 headers={"X-Subscription-Token": key or "",
                                                          "Accept": "application/json"}),
                      _brave_rows),
    "serper": _Adapter("https://google.serper.dev", "/search",
                       lambda q, k, key: _Request("POST", json={"q": q, "num": k}, headers={"X-API-KEY": key or ""}),
                       _serper_rows),
    "bing": _Adapter("https://api.bing.microsoft.com", "/v7.0/search",
                     lambda q, k, key: _Request("GET", params={"q": q, "count": min(k, 50), "responseFilter": "Webpages"},
                                                headers={"Ocp-Apim-Subscription-Key": key or ""}),
                     _bing_rows),
    "you": _Adapter("https://api.ydc-index.io", "/search",
                    lambda q, k, key: _Request("GET", params={"query": q, "num_web_results": min(k, 20)},
                                               headers={"X-API-Key": key or ""}),
                    _you_rows),
}


def endpoint(settings: SearchEngineSettings) -> str:
    """The URL a search goes to: the override (with the engine's path appended) or the public API."""
    adapter = ADAPTERS[settings.engine]
    base = settings.url or adapter.base
    if not base:
        raise SearchEngineError(settings.engine, "config",
                                "no URL: SearXNG is self-hosted, pass its address with --search-url")
    if not base.lower().startswith(("http://", "https://")):
        raise SearchEngineError(settings.engine, "config", f"--search-url {base!r} must start with http:// or https://")
    base = base.rstrip("/")
    return base if base.endswith(adapter.path) else base + adapter.path


def api_key(engine: str) -> str | None:
    """The engine's key from the environment; a `config` error naming the variable when it is unset."""
    var = KEY_ENV.get(engine)
    if var is None:
        return None
    key = os.environ.get(var, "").strip()
    if not key:
        raise SearchEngineError(engine, "config", f"no API key: set {var}")
    return key


def _failure(engine: str, exc: BaseException) -> SearchEngineError:
    """An httpx failure as a typed error, classified as the LM client's are (`agents.lm.backoff`)."""
    found = classify(exc, structured=False)
    if found is None:  # e.g. a body that does not decode as its Content-Encoding says
        detail = " ".join(str(exc).split())[:160]
        return SearchEngineError(engine, "junk", f"unreadable reply ({type(exc).__name__}: {detail})")
    if found.kind == "rate_limited":
        error = SearchEngineError(engine, "rate_limited", found.reason, found.status)
    elif found.kind == "server_error":
        error = SearchEngineError(engine, "server", found.reason, found.status)
    elif found.kind == "timeout":
        error = SearchEngineError(engine, "timeout", found.reason)
    elif found.kind == "connection":
        error = SearchEngineError(engine, "server", found.reason)
    elif found.status in (401, 403):
        error = SearchEngineError(engine, "auth", f"{found.reason}; check {KEY_ENV.get(engine, 'the key')}",
                                  found.status)
    else:  # 400, 404, 422: the request or the URL is wrong
        error = SearchEngineError(engine, "config", f"{found.reason}; check --search-url and the engine name",
                                  found.status)
    error.retry_after = found.retry_after
    return error


def _results(engine: str, data: Any, k: int) -> list[WebResult]:
    try:
        rows = ADAPTERS[engine].rows(data)
    except (KeyError, TypeError, AttributeError) as exc:
        raise SearchEngineError(engine, "junk", f"the reply is not {engine}'s search JSON ({type(exc).__name__}: "
                                                f"{' '.join(str(exc).split())[:120]})") from None
    results: list[WebResult] = []
    seen: set[str] = set()
    for url, title, snippet in rows:
        url = str(url or "").strip()
        if not url.lower().startswith(("http://", "https://")) or url in seen:
            continue
        seen.add(url)
        results.append(WebResult(url=url, title=_text(title) or url, snippet=_text(snippet), engine=engine,
                                 rank=len(results) + 1))
        if len(results) == k:
            break
    return results


async def _search_once(settings: SearchEngineSettings, query: str, k: int, client: httpx.AsyncClient
                       ) -> list[WebResult]:
    engine = settings.engine
    request = ADAPTERS[engine].build(query, k, api_key(engine))
    try:
        response = await client.request(request.method, endpoint(settings), params=request.params,
                                         json=request.json, headers=request.headers, timeout=settings.timeout_s)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise _failure(engine, exc) from None
    try:
        data = response.json()
    except ValueError:
        kind = response.headers.get("content-type", "no content type")
        raise SearchEngineError(engine, "junk", f"the reply is not JSON ({kind}, {len(response.content)} bytes)"
                                ) from None
    if not isinstance(data, dict):
        raise SearchEngineError(engine, "junk", f"the reply is a JSON {type(data).__name__}, not an object")
    return _results(engine, data, k)


async def search_web(settings: SearchEngineSettings, query: str, k: int,
                     client: httpx.AsyncClient | None = None) -> list[WebResult]:
    """Up to `k` results for `query`, ranked as the engine ranks them (duplicates and non-web URLs dropped).

    Raises `SearchEngineError` (never an httpx error) once the retries are spent."""
    if k < 1:
        return []
    own = client is None
    client = client or httpx.AsyncClient(follow_redirects=True)
    policy = settings.retry
    try:
        for retry in range(policy.max_retries + 1):
            try:
                return await asyncio.wait_for(_search_once(settings, query, k, client), policy.timeout_s)
            except asyncio.TimeoutError:
                error = SearchEngineError(settings.engine, "timeout", f"no answer within {policy.timeout_s:g} s")
            except SearchEngineError as exc:
                error = exc
            if not error.retryable or retry == policy.max_retries:
                if retry:
                    error.args = (f"{error.args[0]} (after {retry + 1} tries)",)
                raise error
            await policy.wait(retry, error.retry_after)
        raise AssertionError("unreachable")
    finally:
        if own:
            await client.aclose()
