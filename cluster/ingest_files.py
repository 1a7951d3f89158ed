"""The files of a cluster ingest: read on the driver, parsed on the cluster from their bytes.

A Ray task lands on any node, and a path only means something on the host that was given it:
the corpus may be on the driver's disk alone, or at the same path with other contents elsewhere.
So the driver (the process that was given the paths) reads every file, and a task parses the
bytes it was sent. The task writes them to a private temp folder under the file's own name (the
readers, the title from the name and the file type go by the name) and gives the documents the
driver's path back, so their ids and payloads are those of a one-process ingest.

A file the driver cannot read is a `Skipped` with `unreadable=True`: `raystorm ingest` counts
those and fails unless `--allow-skips`.
"""

from __future__ import annotations

import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from retrieval.documents import Document, Passage
from retrieval.errors import RaystormError
from retrieval.loaders import Skipped, load_file
from retrieval.splitter import split_document

PARSE_TIMEOUT_S = 600.0  # a wait for the next parse to come back (a big PDF is parsed in one task)
IN_FLIGHT_BYTES = 256 * 1024 * 1024  # file bytes sent and not yet parsed: bounds the driver's and the store's memory

class IngestFailed(RaystormError):
    """A cluster ingest stopped; the message names the stage (and the node, where one is to blame)."""


Parsed = tuple[list[Document], list[Passage], list[Skipped]]


def parse_bytes(path: str, data: bytes, max_words: int) -> bytes:
    """On a worker: the file `path` (the driver's) parsed from `data`; (documents, passages, skipped), pickled."""
    work = Path(tempfile.mkdtemp(prefix="raystorm-ingest-"))
    try:
        local = work / Path(path).name
        local.write_bytes(data)
        documents, skipped = load_file(local)
        documents = [rehome(doc, path) for doc in documents]
        skipped = [s.model_copy(update={"path": s.path.replace(str(local), path, 1)}) for s in skipped]
        passages = [p for doc in documents for p in split_document(doc, max_words)]
        return pickle.dumps((documents, passages, skipped))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def rehome(doc: Document, path: str) -> Document:
    """`doc`, read from a copy, as if read at `path`: the id derives from the path (and record)."""
    return doc.model_copy(update={"path": path, "doc_id": Document.make_id(path, doc.record)})


def read_on_driver(path: Path) -> bytes | Skipped:
    """The file's bytes, or the `Skipped` (unreadable) saying why this host cannot read it."""
    try:
        return path.read_bytes()
    except OSError as exc:
        return Skipped(path=str(path), reason=f"unreadable ({exc.strerror or exc})", unreadable=True)


def parse_on_cluster(files: Sequence[Path], max_words: int, in_flight: int,
                     on_file: Callable[[int, int], None] | None = None) -> Iterator[Parsed | Skipped]:
    """Each file's parse, in `files`' order: read here, parsed by one-CPU Ray tasks (at most `in_flight`
    files or IN_FLIGHT_BYTES at once). A file unreadable here is its `Skipped`."""
    import ray

    task = ray.remote(num_cpus=1, max_retries=2)(parse_bytes)  # a lost node's parses run again elsewhere
    pending: dict[int, tuple[object, int]] = {}  # file index -> (its parse, its size)
    results: dict[int, Parsed | Skipped] = {}
    done = next_out = 0

    def collect(wait_for_one: bool) -> None:
        nonlocal done
        if not pending:
            return
        refs = {ref: i for i, (ref, _) in pending.items()}
        ready, _ = ray.wait(list(refs), num_returns=1 if wait_for_one else len(refs),
                            timeout=PARSE_TIMEOUT_S if wait_for_one else 0)
        if wait_for_one and not ready:
            names = ", ".join(files[i].name for i in sorted(pending)[:3])
            raise IngestFailed(f"reading stage: no file was parsed within {PARSE_TIMEOUT_S:.0f} s ({names} ... "
                               "waiting): is the cluster short of CPUs (`ray status`)?")
        for ref in ready:
            i = refs[ref]
            try:
                results[i] = pickle.loads(ray.get(ref, timeout=PARSE_TIMEOUT_S))
            except Exception as exc:  # the readers skip bad files themselves: this is a task lost for good
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise IngestFailed(f"reading stage: parsing {files[i]} on the cluster failed: {first}") from exc
            del pending[i]
            done += 1
            if on_file:
                on_file(done, len(files))

    for i, path in enumerate(files):
        data = read_on_driver(path)
        if isinstance(data, Skipped):
            results[i] = data
            done += 1
        else:
            while pending and (len(pending) >= in_flight
                               or sum(size for _, size in pending.values()) + len(data) > IN_FLIGHT_BYTES):
                collect(wait_for_one=True)
            pending[i] = (task.remote(str(path), data, max_words), len(data))
        collect(wait_for_one=False)
        while next_out in results:
            yield results.pop(next_out)
            next_out += 1
    while pending:
        collect(wait_for_one=True)
    while next_out in results:
        yield results.pop(next_out)
        next_out += 1
