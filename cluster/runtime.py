"""Starting or joining Ray: one call, the same for a laptop and a cluster.

No address: a local Ray sized for this machine. `auto`, `HOST:PORT` or
`ray://HOST:10001`: join that cluster; nothing else changes.
"""

from __future__ import annotations

import logging
import os

NAMESPACE = "raystorm"


def connect(address: str | None = None, num_cpus: int | None = None) -> None:
    """Idempotent `ray.init`. Actors ask for 0 or fractional CPUs, so small machines don't starve."""
    import ray

    if ray.is_initialized():
        return
    address = address or os.environ.get("RAYSTORM_RAY_ADDRESS") or None
    common = dict(namespace=NAMESPACE, ignore_reinit_error=True, logging_level=logging.WARNING,
                  log_to_driver=os.environ.get("RAYSTORM_RAY_LOGS") == "1")
    if address:
        ray.init(address=address, **common)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count() or 2, include_dashboard=False, **common)


def shutdown() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()
