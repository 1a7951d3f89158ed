"""Fetcher actors on a real local Ray: the per-domain limits hold across actors, measured by the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agents.web.fetch import FetchSettings
from agents.web.politeness import DomainLimits
from agents.web.snapshots import SnapshotStore
from tests.webresearch.local_site import CRAWL_DELAY_S
from tests.webresearch.politeness_log import JITTER_S, assert_polite, start_gaps

POLITE = FetchSettings(allow_private_hosts=True, timeout_s=10.0,
                       limits=DomainLimits(max_in_flight=2, min_interval_s=0.1))


@pytest.fixture(scope="module")
def pool(ray_session, tmp_path_factory):
    from actors.fetcher import FetcherPool

    fetchers = FetcherPool.create(POLITE, tmp_path_factory.mktemp("web"), actors=3, slots_per_actor=4)
    yield fetchers
    fetchers.kill()


def test_three_fetcher_actors_share_one_domains_limits(pool, site_process):
    site_process.clear()
    urls = [site_process.url(f"/polite/{n}") for n in range(12)]
    outcomes = asyncio.run(pool.fetch_many(urls))
    assert [o.status for o in outcomes] == ["fetched"] * 12, [o.reason for o in outcomes]
    requests = site_process.requests()
    assert sorted(r.path for r in requests if r.path != "/robots.txt") == sorted(f"/polite/{n}" for n in range(12))
    assert_polite(requests, max_in_flight=2, min_interval_s=0.1)
    assert [r.path for r in requests].count("/robots.txt") == 1  # read once for the pool, not per actor
    # the snapshots are written in this process, where the store is
    store = SnapshotStore(pool.store.root)
    for outcome in outcomes:
        assert Path(outcome.snapshot.path).exists() and store.get(outcome.url) == outcome.snapshot
    assert "Politeness page number 7" in store.read_text(outcomes[7].snapshot)


def test_a_fresh_copy_never_reaches_an_actor(pool, site_process):
    site_process.clear()
    outcomes = asyncio.run(pool.fetch_many([site_process.url("/polite/3"), site_process.url("/missing")]))
    assert [(o.status, o.reason) for o in outcomes] == [("cached", ""), ("failed", "HTTP 404")]
    assert [r.path for r in site_process.requests() if r.path != "/robots.txt"] == ["/missing"]


def test_a_sites_robots_txt_is_read_once_for_the_pool_and_its_crawl_delay_kept_by_all_actors(pool, delayed_site):
    delayed_site.clear()
    paths = ["/a.html", "/b.html", "/index.html", "/plain.txt", "/latin1.html", "/private/secret.html"]
    outcomes = asyncio.run(pool.fetch_many([delayed_site.url(p) for p in paths]))
    assert [o.status for o in outcomes] == ["fetched"] * 5 + ["skipped"], [o.reason for o in outcomes]
    requests = delayed_site.requests()
    assert sorted(r.path for r in requests) == sorted(["/robots.txt", *paths[:5]])
    gaps = start_gaps(requests)  # the pool's limits ask for 0.1 s, the site's robots.txt for 0.3 s
    assert min(gaps) >= CRAWL_DELAY_S - JITTER_S, [round(g, 3) for g in gaps]
