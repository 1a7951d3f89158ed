"""Ray fixtures of the cluster tests: one session-wide cluster of three nodes on this machine.

`ray_cluster` is a `ray.cluster_utils.Cluster` (head + 2 worker nodes), started
once for the whole session (Ray takes seconds to start) and joined by the test
process; the fault test removes a worker mid-run and adds a new one after.
`corpus_settings` ingests the bundled example corpus once into a temp data dir.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

EXAMPLE_COLLECTION = "example"
NODE_CPUS = 2  # logical CPUs per node; actors ask for 0, so this only caps tasks
NODE = {"num_cpus": NODE_CPUS, "object_store_memory": 150 * 1024 * 1024}
WORKER = {**NODE, "resources": {"worker": 100}}  # a plan asking for it keeps its actors off the head


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    import cluster_agents
    import ray
    from ray import cloudpickle
    from ray.cluster_utils import Cluster

    from cluster.runtime import NAMESPACE

    cloudpickle.register_pickle_by_value(cluster_agents)  # test-only classes: workers cannot import tests/

    if ray.is_initialized():  # another test module's local Ray: this session's cluster replaces it
        ray.shutdown()
    # a lost node is noticed in ~2 s instead of ~15 s, so the fault test waits less
    fast_failure = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False,
                                                            "_system_config": fast_failure})
    for _ in range(2):
        cluster.add_node(**WORKER)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, namespace=NAMESPACE, logging_level="WARNING",
             log_to_driver=os.environ.get("RAYSTORM_RAY_LOGS") == "1")
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture(scope="session")
def corpus_settings(tmp_path_factory):
    """Store settings of a temp data dir holding the bundled corpus as collection 'example'."""
    import retrieval.config
    from retrieval.config import StoreSettings
    from retrieval.ingest import Ingestor

    data_dir = tmp_path_factory.mktemp("raystorm-home")
    settings = StoreSettings.resolve(str(data_dir))
    ingestor = Ingestor(settings)
    try:
        ingestor.ingest_paths([Path(retrieval.config.__file__).parent / "example_corpus"], EXAMPLE_COLLECTION)
    finally:
        ingestor.store.close()
    return settings


@pytest.fixture(scope="session")
def reference(corpus_settings, tmp_path_factory) -> dict[str, str]:
    """The in-process pipeline's artifacts for `storm_runs.TOPICS`, one topic after another."""
    from storm_runs import artifacts, copy_home, in_process

    base = tmp_path_factory.mktemp("in-process")
    in_process(copy_home(corpus_settings, base / "home"), EXAMPLE_COLLECTION, base / "out")
    return artifacts(base / "out")
