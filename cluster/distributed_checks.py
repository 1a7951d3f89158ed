"""What a distributed run checks on the cluster itself: the LLM endpoint from every node, lost nodes.

- `check_endpoints`: the actors call the LLM from their own hosts, so an endpoint the driver reaches
  (e.g. on its 127.0.0.1) may answer nobody else. Before any actor starts, a tiny task on every node
  that may host one opens a TCP connection to each endpoint; one that a node cannot reach is refused
  in one line naming the node.
- `NodeWatch`: Ray marks a node dead after its health checks fail (`RAY_health_check_period_ms` x
  `RAY_health_check_failure_threshold` on the head, about 15 s by default, plus the timeouts of the
  calls on the way); until then calls to its actors just wait. The watch polls `ray.nodes()` and says,
  the moment Ray reports the loss, which node, what raystorm was running there and what it redoes.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from retrieval.errors import RaystormError

CONNECT_TIMEOUT_S = 5.0
PROBE_TIMEOUT_S = 60.0  # the probes' own bound: a task must be scheduled on each node first
POLL_S = 1.0


class EndpointUnreachable(RaystormError):
    """An LLM endpoint some node of the cluster cannot reach."""


def _host_port(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


def tcp_connect(host: str, port: int, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """None when `host:port` accepts a TCP connection from here, else why not."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__


def _probe(endpoints: list[tuple[str, int]]) -> tuple[str, list[str | None]]:
    """On one node: its address, and each endpoint's `tcp_connect` answer."""
    import ray

    return ray.util.get_node_ip_address(), [tcp_connect(host, port) for host, port in endpoints]


def research_nodes(resources: dict[str, float]) -> list[dict]:
    """The alive nodes that may host writers and experts (those with every resource asked for)."""
    import ray

    return [n for n in ray.nodes() if n.get("Alive")
            and all(n.get("Resources", {}).get(name, 0) >= need for name, need in resources.items())]


def check_endpoints(base_urls: Iterable[str], resources: dict[str, float] | None = None) -> None:
    """Each endpoint answers a TCP connect from every node that may call it, or `EndpointUnreachable`."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    urls = sorted(set(base_urls))
    if not urls:
        return
    endpoints = [_host_port(u) for u in urls]
    nodes = research_nodes(resources or {})
    probe = ray.remote(num_cpus=0, max_retries=0)(_probe)
    refs = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False))
            .remote(endpoints) for n in nodes]
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=PROBE_TIMEOUT_S)
    if len(ready) < len(refs):
        late = [nodes[i]["NodeManagerAddress"] for i, r in enumerate(refs) if r not in ready]
        raise EndpointUnreachable(f"checking the LLM endpoint: no answer from node(s) {', '.join(late)} within "
                                  f"{PROBE_TIMEOUT_S:.0f} s (`ray status` shows whether they are up)")
    for node_ip, answers in ray.get(ready, timeout=PROBE_TIMEOUT_S):
        for url, why in zip(urls, answers):
            if why is not None:
                only = " (a loopback address means each node's own host)" if _is_loopback(url) else ""
                raise EndpointUnreachable(
                    f"the LLM endpoint {url} is not reachable from node {node_ip} ({why}){only}: the actors call "
                    "it from their own hosts; give --llm-base-url an address every node can reach")


def _is_loopback(url: str) -> bool:
    host = _host_port(url)[0]
    return host == "localhost" or host.startswith("127.") or host == "::1"


Say = Callable[[str], None]


class NodeWatch:
    """Polls Ray's node table while a run lasts; `say`s one line per node Ray reports lost."""

    def __init__(self, placement: dict[str, list[str]], say: Say, poll_s: float = POLL_S):
        self.placement, self.say, self.poll_s = placement, say, poll_s
        self.lost: list[str] = []
        self._task: asyncio.Task | None = None

    async def __aenter__(self) -> "NodeWatch":
        self._known = await asyncio.to_thread(_alive)
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:  # ends when the run does (`__aexit__` cancels it)
            await asyncio.sleep(self.poll_s)
            try:
                alive = await asyncio.to_thread(_alive)
            except Exception:  # the GCS itself is briefly unreachable: ask again at the next poll
                continue
            for node_id, ip in self._known.items():
                if node_id not in alive and node_id not in self.lost:
                    self.lost.append(node_id)
                    self.say(lost_line(node_id, ip, self.placement.get(node_id, [])))
            self._known.update(alive)


def _alive() -> dict[str, str]:
    import ray

    return {n["NodeID"]: n.get("NodeManagerAddress", "?") for n in ray.nodes() if n.get("Alive")}


def lost_line(node_id: str, ip: str, actors: list[str]) -> str:
    """What a lost node means for the run, in one line."""
    held = f"it ran {', '.join(actors)}" if actors else "it ran none of this run's actors at start"
    return (f"node {ip} ({node_id[:8]}) was lost (Ray marked it dead); {held}. raystorm waits for the calls "
            "that were there (each bounded by --call-timeout) while Ray restarts those actors elsewhere, and "
            "redoes them: a conversation whose writer was there starts again on a fresh writer, expert turns, "
            "searches and stages are reissued")
