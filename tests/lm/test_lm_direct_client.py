"""`DirectChatClient` through its aiohttp session against a real loopback server (the httpx path and
autogen's client are tested with a faked transport in test_lm_chat_openai.py)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from agents.lm.backoff import RetryPolicy
from agents.lm.chat import ChatModel
from agents.lm.direct_client import DirectChatClient, HttpSession, env_proxy
from agents.lm.errors import EndpointUnavailableError
from agents.lm.models import generic_model_info
from agents.lm.settings import LLMSettings
from agents.lm.usage import UsageLedger
from tests.support.llm_endpoint import start_endpoint


def chat(url: str, sleeps, *, http=None, retries: int = 2, timeout_s: float = 5.0) -> ChatModel:
    client = DirectChatClient(model="standin", base_url=url, api_key="sk-local",
                              model_info=generic_model_info(LLMSettings()), http_client=http, timeout_s=timeout_s)
    return ChatModel(client, model="standin", endpoint=url, ledger=UsageLedger(), sleep=sleeps,
                     retry=RetryPolicy(max_retries=retries, base_delay_s=0.01, timeout_s=timeout_s))


async def run_and_close(model: ChatModel, step, inp):
    try:
        return await model.run(step, inp)
    finally:
        await model.close()


def test_a_step_through_the_session_reaches_the_server_and_reads_its_reply(step, question, sleeps):
    with start_endpoint() as endpoint:
        model = chat(endpoint.url, sleeps)
        out = asyncio.run(run_and_close(model, step, question))
        (logged,) = endpoint.requests()
    assert isinstance(out, step.Output) and out.answer
    assert logged["status"] == 200 and logged["outcome"] == "ok"
    (record,) = model.ledger.records
    assert record.ok and record.attempts == 1 and record.prompt_tokens > 0 and record.output_mode == "json_schema"


def test_429_and_500_from_the_server_are_retried_as_through_httpx(step, question, sleeps):
    with start_endpoint(fail_rate=1.0, fail_mix="429=1,500=1") as endpoint:
        model = chat(endpoint.url, sleeps, retries=3)
        with pytest.raises(EndpointUnavailableError) as err:
            asyncio.run(run_and_close(model, step, question))
        statuses = {r["status"] for r in endpoint.requests()}
    assert len(endpoint.requests()) == 4 and statuses <= {429, 500} and len(sleeps.waits) == 3
    assert "HTTP 429" in str(err.value) or "HTTP 500" in str(err.value)


def test_a_closed_port_is_a_connection_failure_naming_the_endpoint(step, question, sleeps):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens here once the socket is closed
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(EndpointUnavailableError) as err:
        asyncio.run(run_and_close(chat(url, sleeps, retries=1), step, question))
    assert url in str(err.value) and "could not connect" in str(err.value)


def test_a_stalled_server_times_out_per_attempt(step, question, sleeps):
    with start_endpoint(fail_rate=1.0, fail_mix="timeout=1", stall_s=3.0) as endpoint:
        model = chat(endpoint.url, sleeps, retries=1, timeout_s=0.3)
        with pytest.raises(EndpointUnavailableError, match="timed out"):
            asyncio.run(run_and_close(model, step, question))


def test_one_session_serves_several_clients_and_is_closed_by_its_owner(step, question, sleeps):
    shared = HttpSession()

    async def two_models(url: str):
        first, second = chat(url, sleeps, http=shared), chat(url, sleeps, http=shared)
        await first.run(step, question)
        await second.run(step, question)
        await first.close()  # a client does not close a session it was given
        await second.run(step, question)
        session = shared._current()
        await shared.aclose()
        return session

    with start_endpoint() as endpoint:
        session = asyncio.run(two_models(endpoint.url))
        assert len(endpoint.requests()) == 3
    assert session.closed


def test_the_stream_is_the_whole_reply_as_one_item(step, question, sleeps):
    from autogen_core.models import CreateResult, UserMessage

    async def stream(url: str) -> list:
        client = DirectChatClient(model="standin", base_url=url, api_key="sk-local",
                                  model_info=generic_model_info(LLMSettings()))
        try:
            return [item async for item in client.create_stream([UserMessage(content="Who led the trial?",
                                                                             source="user")])]
        finally:
            await client.close()

    with start_endpoint() as endpoint:
        (item,) = asyncio.run(stream(endpoint.url))
    assert isinstance(item, CreateResult) and isinstance(item.content, str) and item.content


def test_a_redirect_loop_is_a_failed_request_not_a_traceback(step, question, sleeps):
    import http.server
    import threading

    class Loop(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(307)
            self.send_header("location", self.path)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Loop)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        with pytest.raises(EndpointUnavailableError, match="TooManyRedirects"):
            asyncio.run(run_and_close(chat(url, sleeps, retries=1), step, question))
    finally:
        server.shutdown()
        server.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_netrc_login_for_the_endpoint_host_does_not_clash_with_the_api_key(step, question, sleeps, tmp_path,
                                                                              monkeypatch):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1\nlogin someone\npassword secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))  # (aiohttp's trust_env read it per request, and refused to send)
    with start_endpoint() as endpoint:
        out = asyncio.run(run_and_close(chat(endpoint.url, sleeps), step, question))
        (logged,) = endpoint.requests()
    assert isinstance(out, step.Output) and logged["status"] == 200


def test_the_environment_s_proxy_is_used_unless_no_proxy_names_the_host(step, question, sleeps, monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://someone:secret@127.0.0.1:{_closed_port()}")
    with start_endpoint() as endpoint:
        with pytest.raises(EndpointUnavailableError, match="could not connect"):  # through the (absent) proxy
            asyncio.run(run_and_close(chat(endpoint.url, sleeps, retries=0), step, question))
        assert endpoint.requests() == []
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        out = asyncio.run(run_and_close(chat(endpoint.url, sleeps), step, question))
        assert isinstance(out, step.Output) and len(endpoint.requests()) == 1


def test_the_environment_s_proxy_is_read_with_its_credentials(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert env_proxy("http://llm.internal:8000/v1/chat/completions") == (None, None)
    monkeypatch.setenv("HTTP_PROXY", "http://someone:secret@proxy.internal:3128")
    proxy, auth = env_proxy("http://llm.internal:8000/v1/chat/completions")
    assert proxy == "http://proxy.internal:3128" and (auth.login, auth.password) == ("someone", "secret")
    monkeypatch.setenv("NO_PROXY", "llm.internal")
    assert env_proxy("http://llm.internal:8000/v1/chat/completions") == (None, None)
