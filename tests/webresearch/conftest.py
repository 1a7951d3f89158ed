"""Fixtures of the web research tests.

- `site` — the local web site (tests/webresearch/local_site.py) on 127.0.0.1, one per module.
- `site_process` — the same site in a process of its own, for the politeness measurements.
- `ray_session` — a local Ray for the session (the same as tests/multihop's: reused when one runs).
"""

from __future__ import annotations

import pytest

from tests.webresearch.local_site import Server, SiteProcess


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
def ray_session():
    import ray

    from cluster.runtime import connect

    started = not ray.is_initialized()
    connect(address="local")  # a Ray of our own, never another process's cluster on this machine
    yield
    if started and ray.is_initialized():
        ray.shutdown()
