"""`DirectChatClient`: autogen's `ChatCompletionClient` as one POST to `/chat/completions`.

    client = DirectChatClient(model="m", base_url="http://host:8000/v1", api_key="x", model_info=info)
    result = await client.create(messages, extra_create_args={"response_format": ..., "max_tokens": 512})

The request body is the messages plus `extra_create_args` as given, serialised once with
`json.dumps`; the reply's JSON is read into a `CreateResult`. That is all an OpenAI-compatible
chat completion needs, and it skips what autogen's OpenAI client and the openai SDK do around it
(re-validating the request as typed dicts, walking the JSON schema, building typed response
objects). Requests go through an aiohttp session (`HttpSession`, shared by every client of an
actor) unless an httpx client is given (tests, proxies): on this machine a post costs 0.24 ms of
CPU with aiohttp and 1.3 ms with httpx, and a whole chat step 0.73 ms with this client against 2.6
through autogen's client and the SDK (`scripts/bench_call_floor.py`).

Failures are the exceptions `agents.lm.backoff.classify` reads: `httpx.HTTPStatusError` for a
status of 400 or more (its body kept for the classification), httpx's timeout and transport
errors (aiohttp's are raised as their httpx equivalents), and `ValueError`, `KeyError`,
`TypeError` or `IndexError` for a reply that is not a chat completion (HTML, `{"choices": []}`, no
`message`, an error object with status 200, a body cut short). No retries here: `ChatModel` retries.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
import httpx
from autogen_core import FunctionCall
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    CreateResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    ModelInfo,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel
from yarl import URL

# what OpenAI's SDK gives its own client: no connection limit worth hitting, redirects followed
_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
_FINISH = {"stop": "stop", "length": "length", "tool_calls": "function_calls", "function_call": "function_calls",
           "content_filter": "content_filter"}


def default_http_client(timeout_s: float = 600.0) -> httpx.AsyncClient:
    """An httpx client with the limits the openai SDK gives its own (for autogen's client)."""
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=5.0), limits=_LIMITS, follow_redirects=True)


def env_proxy(url: str) -> tuple[str | None, aiohttp.BasicAuth | None]:
    """The proxy the environment names for `url` (`HTTP_PROXY`/`HTTPS_PROXY`, `NO_PROXY`; its credentials
    from the URL or `~/.netrc`) and its auth, as aiohttp's `trust_env` finds it; (None, None) for none."""
    try:
        proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:  # no proxy for this URL's scheme, or NO_PROXY names its host
        return None, None
    return str(proxy), auth


class HttpSession:
    """One aiohttp session for the `DirectChatClient`s of a process (their connections and TLS context
    shared), made on first use in the event loop that uses it; a new loop gets a new one.

    The environment's proxy for an endpoint is read once (`env_proxy`), not by aiohttp's `trust_env` on
    every request: that costs two thread hops and a look for `~/.netrc` per request (0.5–0.7 ms of CPU
    on this machine, where the post itself costs 0.3: `scripts/bench_call_floor.py`), and a netrc login
    for the endpoint's host would clash with the bearer token (aiohttp refuses such a request)."""

    def __init__(self):
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proxies: dict[str, tuple[str | None, dict | None]] = {}  # url -> its proxy and proxy headers

    def _current(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000))
            self._loop = loop
        return self._session

    async def post(self, url: str, body: bytes, headers: Mapping[str, str],
                   timeout_s: float) -> tuple[int, list, bytes]:
        """(status, headers, body) of a POST; aiohttp's failures raised as httpx's (`classify` reads those)."""
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=5.0, sock_read=timeout_s)
        if url not in self._proxies:
            proxy, auth = env_proxy(url)
            self._proxies[url] = proxy, {"Proxy-Authorization": auth.encode()} if auth else None
        proxy, proxy_headers = self._proxies[url]
        try:
            async with self._current().post(url, data=body, headers=headers, timeout=timeout, proxy=proxy,
                                            proxy_headers=proxy_headers) as reply:
                return reply.status, list(reply.headers.items()), await reply.read()
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {url} timed out") from exc
        except aiohttp.ServerTimeoutError as exc:
            raise httpx.ReadTimeout(f"no reply from {url} within {timeout_s:.0f} s") from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc)) from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise httpx.ReadError(f"{type(exc).__name__}: {exc}") from exc
        except aiohttp.ClientError as exc:  # too many redirects, an invalid URL, ...: the request did not go through
            raise httpx.RemoteProtocolError(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()


class DirectChatClient(ChatCompletionClient):
    """An OpenAI-compatible chat endpoint, each request one POST (aiohttp, or the httpx client given).

    - `model`, `base_url` (ends before `/chat/completions`), `api_key` (sent as a bearer token).
    - `model_info`: what the model can do (function calling, JSON output), as autogen describes it.
    - `http_client`: an `HttpSession` shared with other clients of the process, or an httpx client
      (tests, proxies); one of its own if not given (closed by `close`; one given is not).
    - `timeout_s`: the read timeout of a request (`ChatModel` also bounds each attempt).
    """

    def __init__(self, *, model: str, base_url: str, api_key: str, model_info: ModelInfo,
                 http_client: HttpSession | httpx.AsyncClient | None = None, timeout_s: float = 600.0):
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"authorization": f"Bearer {api_key}", "content-type": "application/json",
                         "accept": "application/json"}
        self._model_info = model_info
        self._owns_http = http_client is None
        self._http = HttpSession() if http_client is None else http_client
        self._timeout_s = timeout_s
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
        self._last = RequestUsage(prompt_tokens=0, completion_tokens=0)

    async def create(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = (),
                     tool_choice: Any = "auto", json_output: bool | type[BaseModel] | None = None,
                     extra_create_args: Mapping[str, Any] = {}, cancellation_token: Any = None) -> CreateResult:
        body: dict[str, Any] = {"model": self.model, "messages": messages_json(messages)}
        if tools:
            body["tools"] = [tool_json(t) for t in tools]
            if tool_choice != "auto":
                body["tool_choice"] = (tool_choice if isinstance(tool_choice, str) else
                                       {"type": "function", "function": {"name": tool_choice.name}})
        if isinstance(json_output, type) and issubclass(json_output, BaseModel):
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": json_output.__name__, "schema": json_output.model_json_schema(), "strict": False}}
        elif json_output:
            body["response_format"] = {"type": "json_object"}
        body.update(extra_create_args)
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        if isinstance(self._http, HttpSession):
            status, headers, content = await self._http.post(self._url, payload, self._headers, self._timeout_s)
        else:
            reply = await self._http.post(self._url, content=payload, headers=self._headers,
                                          timeout=httpx.Timeout(self._timeout_s, connect=5.0))
            status, headers, content = reply.status_code, reply.headers, reply.content
        if status >= 400:
            request = httpx.Request("POST", self._url)
            raise httpx.HTTPStatusError(f"HTTP {status} from {self._url}", request=request,
                                        response=httpx.Response(status, headers=headers, content=content,
                                                                request=request))
        result = read_completion(json.loads(content))
        self._last = result.usage
        self._usage = RequestUsage(prompt_tokens=self._usage.prompt_tokens + result.usage.prompt_tokens,
                                   completion_tokens=self._usage.completion_tokens + result.usage.completion_tokens)
        return result

    async def create_stream(self, messages: Sequence[LLMMessage], **kwargs: Any) -> AsyncGenerator[CreateResult, None]:
        """The whole reply as a stream of one item (raystorm reads whole replies; no chunks are asked for)."""
        yield await self.create(messages, **kwargs)

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    def actual_usage(self) -> RequestUsage:
        return self._last

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        """A rough count (four characters a token): raystorm sizes prompts by words, not by this."""
        text = json.dumps(messages_json(messages)) + json.dumps([tool_json(t) for t in tools])
        return len(text) // 4

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return max(0, int(self._model_info.get("context_window", 128_000)) - self.count_tokens(messages, tools=tools))

    @property
    def capabilities(self):  # autogen's older name for model_info
        return self._model_info

    @property
    def model_info(self) -> ModelInfo:
        return self._model_info


def messages_json(messages: Sequence[LLMMessage]) -> list[dict]:
    """autogen's messages as the chat completions API takes them (a tool result message per result)."""
    out: list[dict] = []
    for m in messages:
        if isinstance(m, FunctionExecutionResultMessage):
            out += [{"role": "tool", "tool_call_id": r.call_id, "content": r.content} for r in m.content]
        else:
            out.append(message_json(m))
    return out


def message_json(message: LLMMessage) -> dict:
    """One autogen message as the chat completions API takes it."""
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        if not isinstance(message.content, str):
            raise TypeError("DirectChatClient sends text only; this user message holds images")
        return {"role": "user", "content": message.content}
    if isinstance(message, AssistantMessage):
        if isinstance(message.content, str):
            return {"role": "assistant", "content": message.content}
        out: dict[str, Any] = {"role": "assistant", "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.content]}
        if message.thought:
            out["content"] = message.thought
        return out
    raise TypeError(f"cannot send a {type(message).__name__}")


def tool_json(tool: Tool | ToolSchema) -> dict:
    schema = tool.schema if isinstance(tool, Tool) else tool
    function: dict[str, Any] = {"name": schema["name"], "parameters": schema.get("parameters", {"type": "object"})}
    if schema.get("description"):
        function["description"] = schema["description"]
    return {"type": "function", "function": function}


def read_completion(data: Any) -> CreateResult:
    """The first choice of a chat completion's JSON; a reply of another shape raises (see the module)."""
    choice = data["choices"][0]
    message = choice["message"]
    content = message.get("content")
    calls = message.get("tool_calls") or []
    usage = data.get("usage") or {}
    finish = _FINISH.get(choice.get("finish_reason") or "stop", "unknown")
    thought = message.get("reasoning_content") if isinstance(message.get("reasoning_content"), str) else None
    if calls:
        result_content: str | list[FunctionCall] = [
            FunctionCall(id=str(c.get("id") or i), name=c["function"]["name"],
                         arguments=c["function"].get("arguments") or "{}") for i, c in enumerate(calls)]
        thought = content if isinstance(content, str) and content.strip() else thought
        finish = "function_calls"
    elif content is None:
        result_content = ""  # `content: null` is an empty reply, not the text "None"
    elif isinstance(content, str):
        result_content = content
    else:
        raise TypeError(f"the message content is a {type(content).__name__}, not text")
    return CreateResult(finish_reason=finish, content=result_content, thought=thought, cached=False,
                        usage=RequestUsage(prompt_tokens=int(usage.get("prompt_tokens") or 0),
                                           completion_tokens=int(usage.get("completion_tokens") or 0)))
