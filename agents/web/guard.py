"""Which URLs a fetch may request: http(s) only, and by default only public addresses.

A search result or a redirect can point anywhere, including this machine's admin ports, the
LAN, or a cloud's metadata service. Every address a host name resolves to is checked (after
DNS, and again on every redirect hop, by the fetcher); loopback, private, link-local,
multicast, reserved, unspecified and metadata addresses are refused unless
`allow_private=True` (intranets, tests). `resolve_checked` returns the addresses it checked,
so the fetcher connects to one of those and a second DNS answer cannot swap in another.

    await check_url("https://example.org/page", allow_private=False)  # None, or raises BlockedURL
    try:
        await check_url("http://127.0.0.1:8080/admin", allow_private=False)
    except BlockedURL as exc:
        print(exc.reason)  # refused: 127.0.0.1 is a loopback address; --allow-private-hosts allows it
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from retrieval.errors import RaystormError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# cloud metadata services: AWS/GCP/Azure/OpenStack, AWS over IPv6, Alibaba
METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"),
            ipaddress.ip_address("100.100.100.200")}
ALLOW_HINT = "--allow-private-hosts allows it"


class BlockedURL(RaystormError):
    """A URL this fetch will not request; `reason` is the one line shown for the page."""

    def __init__(self, url: str, reason: str):
        super().__init__(reason)
        self.url = url
        self.reason = reason


def address_kind(ip: IPAddress) -> str | None:
    """What makes `ip` off limits ("a loopback address", ...), or None for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            return address_kind(embedded)
    if ip in METADATA:
        return "a cloud metadata address"
    for test, kind in (("is_loopback", "a loopback address"), ("is_link_local", "a link-local address"),
                       ("is_multicast", "a multicast address"), ("is_unspecified", "an unspecified address"),
                       ("is_private", "a private address"), ("is_reserved", "a reserved address")):
        if getattr(ip, test):
            return kind
    if not ip.is_global:  # e.g. 100.64.0.0/10, carrier-grade NAT
        return "not a public address"
    return None


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


async def resolve_checked(url: str, allow_private: bool) -> list[str]:
    """The addresses `url`'s host resolves to, all of them allowed; raises `BlockedURL` otherwise.

    A host that does not resolve raises `socket.gaierror` (a failure, not a refusal)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise BlockedURL(url, f"refused: scheme '{parts.scheme or '(none)'}' is not http or https")
    host = parts.hostname
    if not host:
        raise BlockedURL(url, "refused: the URL has no host")
    if parts.username or parts.password:
        raise BlockedURL(url, "refused: the URL carries a user name or password")
    literal = _literal(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        if not addresses:
            raise socket.gaierror(f"{host} has no address")
    if not allow_private:
        for address in addresses:
            kind = address_kind(ipaddress.ip_address(address.split("%")[0]))
            if kind:
                what = address if literal is not None else f"{host} resolves to {address}, which"
                raise BlockedURL(url, f"refused: {what} is {kind}; {ALLOW_HINT}")
    return addresses


async def check_url(url: str, allow_private: bool) -> None:
    """Raise `BlockedURL` (with the reason) unless `url` may be requested."""
    await resolve_checked(url, allow_private)
