"""One GET on the wire for the downloader: sent to an address already checked, no cookies, and
the body read only when it is wanted and only up to a size cap.

`agents.web.download.Downloader` decides what to request and when (guard, robots.txt, the
domain's gate, redirects, retries); this module is how one request goes out and comes back.

    client = open_client("raystorm/0.1", ["text/html"], timeout_s=15.0, ca_file=None)
    target, host, extensions = pinned("https://example.org/a", "93.184.215.14")
    request = client.build_request("GET", target, headers=host, extensions=extensions)
    reply = await read_reply(await first_connected(client, [request]), ["text/html"], 5_000_000)
"""

from __future__ import annotations

import http.cookiejar
import ssl
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

import httpx

from agents.web.extract import media_type

MAX_ADDRESSES = 4  # of a host's addresses, tried in the resolver's order until one connects


class Reply(NamedTuple):
    status: int
    headers: httpx.Headers
    body: bytes | None  # None: not read (a redirect, an error status, 304)
    skipped: str = ""  # why the body was not taken (type, size)


def open_client(user_agent: str, content_types: list[str], timeout_s: float, ca_file: str | None) -> httpx.AsyncClient:
    """No redirects (the downloader checks each hop), no proxies from the environment (the guard
    checks where a request goes), no cookies kept; `ca_file`: the CAs to trust instead of the public ones."""
    verify = ssl.create_default_context(cafile=ca_file) if ca_file else True
    return httpx.AsyncClient(follow_redirects=False, trust_env=False, cookies=_no_cookies(), verify=verify,
                             timeout=timeout_s,
                             headers={"User-Agent": user_agent, "Accept": ", ".join(content_types)})


def _no_cookies() -> http.cookiejar.CookieJar:
    return http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))


def pinned(url: str, address: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """`url` sent to `address` (checked already) with its own Host and, for https, its TLS name."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    literal = f"[{address}]" if ":" in address else address
    netloc = f"{literal}:{parts.port}" if parts.port else literal
    target = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    host_header = parts.netloc.rsplit("@", 1)[-1]
    extensions = {"sni_hostname": host} if parts.scheme.lower() == "https" else {}
    return target, {"Host": host_header}, extensions


async def first_connected(client: httpx.AsyncClient, requests: list[httpx.Request]) -> httpx.Response:
    """The response of the first address that takes the connection (a host's IPv6 address may be
    unreachable from here while its IPv4 one answers); nothing was sent to the ones that refused."""
    for request in requests[:-1]:
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError:
            continue
    return await client.send(requests[-1], stream=True)


async def read_reply(response: httpx.Response, types: list[str], max_bytes: int) -> Reply:
    """The body of a 2xx of an allowed type (`types`; empty: any), up to `max_bytes`; otherwise why not."""
    if not 200 <= response.status_code < 300:
        return Reply(response.status_code, response.headers, None)
    kind = media_type(response.headers.get("content-type", ""))
    if types and kind not in types:
        return Reply(response.status_code, response.headers, None,
                     f"content type {kind or '(none)'} is not fetched (allowed: {', '.join(types)})")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        return Reply(response.status_code, response.headers, None,
                     f"{_size(int(declared))} is over the {_size(max_bytes)} cap (Content-Length)")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body.extend(chunk)
        if len(body) > max_bytes:  # stop here: the rest is never read
            return Reply(response.status_code, response.headers, None,
                         f"over the {_size(max_bytes)} cap (stopped reading at {_size(len(body))})")
    return Reply(response.status_code, response.headers, bytes(body))


def network_reason(exc: BaseException) -> str:
    detail = " ".join(str(exc).split())[:160]
    return f"could not fetch ({type(exc).__name__}{': ' + detail if detail else ''})"


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 100_000 else f"{n} bytes"
