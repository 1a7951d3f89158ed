"""Smoke test: the real OpenAI-compatible llama server starts and answers one chat completion."""

import httpx
import pytest

try:
    from llm_server import llama_server_available, start_llama_server
except ImportError:  # tests/ became a package
    from tests.llm_server import llama_server_available, start_llama_server


def test_llama_server_chat_completion():
    ok, reason = llama_server_available()
    if not ok:
        pytest.skip(f"llama server unavailable: {reason}")
    with start_llama_server(timeout_s=180) as srv:
        timeout = httpx.Timeout(120.0, connect=5.0)
        with httpx.Client(timeout=timeout, trust_env=False) as client:
            r = client.post(
                f"{srv.base_url}/chat/completions",
                json={
                    "model": srv.model,
                    "messages": [{"role": "user", "content": "Say hello."}],
                    "max_tokens": 8,
                    "temperature": 0,
                },
            )
        assert r.status_code == 200, r.text[:500]
        body = r.json()
        assert isinstance(body.get("choices"), list) and body["choices"], body
        assert "message" in body["choices"][0], body
