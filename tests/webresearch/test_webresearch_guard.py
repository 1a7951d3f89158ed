"""Which addresses a fetch refuses, and the per-domain gate's own bookkeeping (no network)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agents.web.guard import BlockedURL, check_url, resolve_checked
from agents.web.politeness import MAX_CRAWL_DELAY_S, DomainLimits, GateBusy, LocalDomainGate


@pytest.mark.parametrize("url, words", [
    ("http://127.0.0.1:8080/admin", "127.0.0.1 is a loopback address"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
    ("http://[fd00:ec2::254]/latest/", "fd00:ec2::254 is a cloud metadata address"),
    ("http://10.1.2.3/", "10.1.2.3 is a private address"),
    ("http://192.168.0.1/", "a private address"),
    ("http://169.254.3.4/", "a link-local address"),
    ("http://[::1]/", "::1 is a loopback address"),
    ("http://[::ffff:127.0.0.1]/", "a loopback address"),  # IPv4 inside IPv6
    ("http://224.0.0.1/", "a multicast address"),
    ("http://0.0.0.0/", "an unspecified address"),
    ("http://100.64.0.1/", "not a public address"),
    ("http://localhost:9/", "localhost resolves to"),
])
def test_private_addresses_are_refused_with_the_reason(url, words):
    with pytest.raises(BlockedURL) as err:
        asyncio.run(check_url(url, allow_private=False))
    assert words in err.value.reason and err.value.reason.startswith("refused: ")
    assert err.value.reason.endswith("--allow-private-hosts allows it")


@pytest.mark.parametrize("url", ["ftp://example.org/x", "file:///etc/passwd", "javascript:alert(1)",
                                 "http://user:pw@example.org/"])
def test_only_plain_http_and_https_urls_are_requested(url):
    with pytest.raises(BlockedURL) as err:
        asyncio.run(check_url(url, allow_private=True))
    assert err.value.reason.startswith("refused: ")


def test_allowing_private_hosts_lifts_the_address_check():
    assert asyncio.run(resolve_checked("http://127.0.0.1:8080/admin", allow_private=True)) == ["127.0.0.1"]
    assert asyncio.run(resolve_checked("http://93.184.215.14/", allow_private=False)) == ["93.184.215.14"]


def test_a_gate_slot_frees_on_release_and_a_full_domain_says_so():
    async def run() -> None:
        gate = LocalDomainGate(DomainLimits(max_in_flight=1, min_interval_s=0))
        await gate.acquire("a.example")
        with pytest.raises(GateBusy):
            await gate.acquire("a.example", wait_s=0.05)
        await gate.acquire("b.example", wait_s=0.05)  # another domain has its own slots
        await gate.release("a.example")
        await gate.acquire("a.example", wait_s=0.05)

    asyncio.run(run())


def test_a_slot_whose_holder_vanished_expires_with_its_lease():
    async def run() -> None:
        gate = LocalDomainGate(DomainLimits(max_in_flight=1, min_interval_s=0), lease_s=0.1)
        await gate.acquire("a.example")  # never released
        await gate.acquire("a.example", wait_s=2.0)

    asyncio.run(run())


def test_a_crawl_delay_raises_a_domains_interval_never_lowers_it_and_is_capped():
    async def run() -> None:
        gate = LocalDomainGate(DomainLimits(max_in_flight=2, min_interval_s=0.5))
        await gate.set_crawl_delay("a.example", 0.1)
        assert gate.interval("a.example") == 0.5  # the limits' own interval stays the floor
        await gate.set_crawl_delay("a.example", 2.0)
        assert gate.interval("a.example") == 2.0 and gate.interval("b.example") == 0.5
        await gate.set_crawl_delay("a.example", 86_400)
        assert gate.interval("a.example") == MAX_CRAWL_DELAY_S
        await gate.set_crawl_delay("a.example", 0)  # the latest robots.txt read asks for none
        assert gate.interval("a.example") == 0.5
        gate.set_limits(DomainLimits(max_in_flight=2, min_interval_s=0))
        await gate.set_crawl_delay("c.example", 0.2)
        first = await gate.reserve("c.example")
        second = await gate.reserve("c.example")
        assert second - first >= 0.2  # the turns given are spaced by it

    asyncio.run(run())


def test_a_deferred_domain_gives_no_turn_that_starts_sooner():
    async def run() -> None:
        gate = LocalDomainGate(DomainLimits(max_in_flight=4, min_interval_s=0))
        given = await gate.reserve("a.example")  # given before: keeps its time
        await gate.defer("a.example", 0.3)
        asked = time.time()
        assert given < asked and await gate.reserve("a.example") >= asked + 0.3 - 0.01
        assert await gate.reserve("b.example") <= time.time()  # another domain is not held
        await gate.defer("c.example", 86_400)
        assert await gate.reserve("c.example") <= time.time() + MAX_CRAWL_DELAY_S

    asyncio.run(run())
