"""The embedded store on Qdrant Edge: an old (local-mode) data dir is refused, then migrated once with its
points as they were; several commands on one data dir take turns; a long-lived owner is named at once."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

from qdrant_client import QdrantClient, models

import retrieval.ingest
from retrieval.config import StoreSettings
from retrieval.documents import Passage
from retrieval.embeddings import DenseEmbedder, SparseEmbedder
from retrieval.store import SPARSE_VECTOR

RAYSTORM = str(Path(sys.executable).with_name("raystorm"))
EXAMPLE = Path(retrieval.ingest.__file__).parent / "example_corpus"


def run(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAYSTORM_HOME": str(home)}
    return subprocess.run([RAYSTORM, *args], env=env, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_a_local_mode_store_is_refused_then_migrated_with_its_points(tmp_path):
    """A data dir as raystorm wrote it before Edge (qdrant-client local mode, same collection layout)."""
    home = tmp_path / "home"
    settings = StoreSettings.resolve(str(home))
    dense, sparse = DenseEmbedder(settings.dense_model, settings.models_dir), SparseEmbedder(settings.models_dir)
    texts = ["The flood rider waiting period is 14 days.", "Hail damage is covered under form HM-3.",
             "The cyber add-on pays extortion demands up to $25,000."]
    passages = [Passage(passage_id=Passage.make_id(f"/c/{i}.md", None, 1, 1, str(i)), doc_id=f"d{i}",
                        path=f"/c/{i}.md", title=f"Doc {i}", line_start=1, line_end=1, text=t, sha256=str(i))
                for i, t in enumerate(texts)]
    old = QdrantClient(path=str(settings.qdrant_path))
    old.create_collection("ex", vectors_config={dense.vector_name: models.VectorParams(
        size=dense.dimension, distance=models.Distance.COSINE)},
        sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        metadata={"dense_model": dense.model_name, "schema": "raystorm.passages/1"})
    old.upsert("ex", points=[models.PointStruct(id=p.passage_id, payload=p.model_dump(mode="json"), vector={
        dense.vector_name: d, SPARSE_VECTOR: models.SparseVector(indices=s[0], values=s[1])})
        for p, d, s in zip(passages, dense.embed(texts), sparse.embed(texts))])
    old.close()

    refused = run(home, "search", "waiting period", "-c", "ex")
    assert refused.returncode == 1 and "raystorm collections migrate" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr

    migrated = run(home, "collections", "migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert "migrated 1 collections (3 points)" in migrated.stdout
    assert (home / "qdrant.migrated-to-edge").is_dir() and not settings.qdrant_path.exists()

    found = run(home, "search", "how long is the flood waiting period", "-c", "ex", "-k", "3", "--json")
    hits = json.loads(found.stdout)
    assert hits[0]["text"] == texts[0]
    assert {h["passage_id"] for h in hits} == {p.passage_id for p in passages}  # the same ids, not re-made


def test_five_searches_at_once_on_one_data_dir_all_answer(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(EXAMPLE, tmp_path / "corpus")
    assert run(home, "ingest", str(tmp_path / "corpus"), "-c", "ex", "-q").returncode == 0
    env = {**os.environ, "RAYSTORM_HOME": str(home)}
    procs = [subprocess.Popen([RAYSTORM, "search", f"flood waiting period {i}", "-c", "ex", "-k", "1", "--json"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(5)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 5, [err[-500:] for _, err in outs]
    assert all(json.loads(out)[0]["title"].startswith("Bulletin 2022-11") for out, _ in outs)


def test_a_server_holding_the_store_is_named_at_once(tmp_path):
    home = tmp_path / "home"
    (home / "edge").mkdir(parents=True)
    with open(home / "edge" / ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write(json.dumps({"pid": 4242, "command": "web"}))
        lock.flush()
        done = run(home, "search", "anything", "-c", "ex")
    assert done.returncode == 1 and "held by `raystorm web` (pid 4242)" in done.stderr, done.stderr


def test_a_query_runs_on_one_search_thread_in_new_and_earlier_shards(tmp_path):
    """Edge's pool of search threads per query costs twice the CPU of a small search: a new collection
    is made with `SEARCH_THREADS`, and one an earlier version saved without it gets it when loaded,
    its points and their answers unchanged."""
    from retrieval.edge import SEARCH_THREADS, EdgeClient

    def saved_threads(root: Path, name: str):
        return json.loads((root / name / "edge_config.json").read_text()).get("max_search_threads")

    root = tmp_path / "edge"
    client = EdgeClient(root)
    client.create_collection("c", vectors_config={"d": models.VectorParams(size=3, distance=models.Distance.COSINE)},
                             sparse_vectors_config={"s": models.SparseVectorParams(modifier=models.Modifier.IDF)})
    client.create_collection("payload_only")
    assert saved_threads(root, "c") == SEARCH_THREADS == 1
    assert saved_threads(root, "payload_only") == SEARCH_THREADS
    client.upsert("c", points=[models.PointStruct(id=str(uuid.UUID(int=i)), vector={"d": [1.0, float(i), 0.5], "s": models.SparseVector(
        indices=[i, 7], values=[1.0, 1.0])}, payload={"n": i}) for i in range(1, 6)])

    def nearest(c: EdgeClient) -> list[str]:
        return [p.id for p in c.query_points("c", query=[1.0, 2.0, 0.5], using="d", limit=3).points]

    before = nearest(client)
    client.close()
    config = json.loads((root / "c" / "edge_config.json").read_text())
    del config["max_search_threads"]  # as an earlier version wrote it
    (root / "c" / "edge_config.json").write_text(json.dumps(config))
    client = EdgeClient(root)
    assert client.count("c").count == 5 and nearest(client) == before
    assert saved_threads(root, "c") == SEARCH_THREADS
    client.close()
