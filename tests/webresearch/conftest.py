"""Fixtures of the web research tests.

- `site` — the local web site (tests/webresearch/local_site.py) on 127.0.0.1, one per module.
- `site_process` — the same site in a process of its own, for the politeness measurements.
- `delayed_site` — a site process on 127.0.0.2 (a domain no other test uses, in any gate) whose
  robots.txt asks for `Crawl-delay: CRAWL_DELAY_S`; one for the session.
- `ray_session` — a local Ray for the session (the same as tests/multihop's: reused when one runs).
"""

from __future__ import annotations

import pytest

from tests.webresearch.local_site import DELAYED_ROBOTS, Server, SiteProcess


@pytest.fixture(scope="module")
def site():
    server = Server()
    yield server.site
    server.close()


@pytest.fixture(scope="module")
def site_process():
    server = SiteProcess()
    yield server
    server.close()


@pytest.fixture(scope="session")
def delayed_site():
    server = SiteProcess(host="127.0.0.2", robots=DELAYED_ROBOTS)
    yield server
    server.close()


@pytest.fixture(scope="session")
def ray_session():
    import ray

    from cluster.runtime import connect

    started = not ray.is_initialized()
    connect(address="local")  # a Ray of our own, never another process's cluster on this machine
    yield
    if started and ray.is_initialized():
        ray.shutdown()
