"""A `ToolStep` on a chat model: the model answers with a native function call.

    messages = step.render_messages(inp)            # task, then each call and its tool's result
    reply    = client.create(messages, tools=...)   # the API's function calling
    output   = step.from_call(first valid call)     # a known tool, arguments valid for it

A reply that calls no tool (text only: perhaps a "tool result" the model wrote itself)
or calls one with invalid arguments gets one repair turn; still unusable, the step's
extractive implementation runs instead (or `ModelOutputError`, as for any step). What
the model writes beside a call is its thought, nothing more. Replies are cached like
any completion (the calls as JSON), and the call lands in the ledger as one run of the step.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Protocol

from autogen_core.models import AssistantMessage, FunctionExecutionResultMessage, LLMMessage, UserMessage
from autogen_core.tools import ToolSchema
from pydantic import BaseModel, ValidationError

from agents.lm.cache import CachedCompletion, CompletionCache, request_key
from agents.lm.call_stats import CallStats, FormatRefused, PromptTooLong
from agents.lm.errors import ModelOutputError
from agents.lm.steps import Step, ToolStep

_log = logging.getLogger("agents.lm.chat")  # one logger for the chat model's warnings, whichever path
NO_CALL = "the reply called no tool; a tool's result only ever comes from running the tool"


class ToolCallingModel(Protocol):
    """What the function-calling path uses of a chat model (`agents.lm.chat.ChatModel` is one)."""

    name: str
    endpoint: str
    cache: CompletionCache | None
    tool_calls: bool  # set False here when the server refuses `tools`

    def args_for(self, role: str) -> dict[str, Any]: ...

    async def _send(self, messages: list[LLMMessage], fmt: dict | None, stats: CallStats,
                    tools: list | None = None, create_args: Mapping[str, Any] | None = None) -> Any: ...

    async def _fall_back(self, step: type[Step], inp: Any, error: ModelOutputError) -> Any: ...

    def _record(self, step: type[Step], stats: CallStats, started_at: datetime, started: float,
                error: str | None) -> None: ...


class _Call(BaseModel):
    id: str
    name: str
    arguments: str


class _ToolReply(BaseModel):
    text: str = ""
    calls: list[_Call] = []
    prompt_tokens: int = 0
    completion_tokens: int = 0


def tool_schemas(tools: dict[str, tuple[str, type[BaseModel]]]) -> list[ToolSchema]:
    out = []
    for name, (description, args) in tools.items():
        schema = args.model_json_schema()
        out.append(ToolSchema(name=name, description=description, parameters={
            "type": "object", "properties": schema.get("properties", {}), "required": schema.get("required", []),
            "additionalProperties": False}))
    return out


def _message_json(m: LLMMessage) -> dict:
    return m.model_dump(mode="json", exclude={"source"})


async def run_tool_step(model: ToolCallingModel, step: type[ToolStep], inp: BaseModel) -> BaseModel | None:
    """`step`'s output from a native function call, or None when the server refuses tools
    (then `model.tool_calls` is off and the caller runs the step as JSON)."""
    started_at, started = datetime.now(timezone.utc), time.monotonic()
    stats = CallStats()
    stats.mode = "tools"
    offered = step.tools(inp)
    schemas = tool_schemas(offered)
    messages: list[LLMMessage] = list(step.render_messages(inp))
    problem = NO_CALL
    try:
        for attempt in range(2):
            try:
                reply = await _complete(model, messages, schemas, stats, model.args_for(step.role))
            except FormatRefused as refused:
                model.tool_calls = False
                _log.warning("%s refused function calling for model '%s' (%s); asking for JSON from now on",
                             model.endpoint, model.name, refused.failure.reason)
                return None
            output, problem = _read(step, inp, offered, reply)
            if output is not None:
                model._record(step, stats, started_at, started, error=None)
                return output
            stats.repaired = True
            messages += [AssistantMessage(content=reply.text.strip() or "(no tool call)", source="assistant"),
                         UserMessage(content=f"That reply cannot be used: {problem}. Call exactly one of the "
                                             f"tools ({', '.join(offered)}) with valid arguments.", source="user")]
        if problem == NO_CALL:  # twice no call at all: this model does not do function calling
            model.tool_calls = False
            _log.warning("model '%s' at %s answered a tool step twice without calling a tool; asking for JSON "
                         "from now on", model.name, model.endpoint)
        error = ModelOutputError(step.name, step.role, model.name, problem, reply.text)
        output = await model._fall_back(step, inp, error)
        stats.fallback_reason = problem
    except PromptTooLong:
        raise  # recorded by `ChatModel.run`, with its fallback
    except Exception as exc:
        model._record(step, stats, started_at, started, error=str(exc) or type(exc).__name__)
        raise
    model._record(step, stats, started_at, started, error=None)
    return output


def _read(step: type[ToolStep], inp: BaseModel, offered: dict, reply: _ToolReply) -> tuple[BaseModel | None, str]:
    """The first call of a known tool with valid arguments, as the step's output; else the problem."""
    problem = NO_CALL
    for call in reply.calls:
        if call.name not in offered:
            problem = f"there is no tool named {call.name!r}"
            continue
        try:
            args = offered[call.name][1].model_validate_json(call.arguments or "{}")
        except ValidationError as exc:
            problem = f"the arguments of {call.name} are invalid: {exc.errors()[0]['msg']}"
            continue
        return step.from_call(inp, call.name, args.model_dump(mode="json"), call.id, reply.text.strip()), ""
    return None, problem


async def _complete(model: ToolCallingModel, messages: list[LLMMessage], schemas: list[ToolSchema],
                    stats, create_args: dict) -> _ToolReply:
    """One function-calling completion, replayed from the cache when the same request was made."""
    request = {"model": model.name, "messages": [_message_json(m) for m in messages],
               "tools": schemas, "create_args": create_args}
    key = request_key(request)
    stats.first_key = stats.first_key or key
    if model.cache is not None:
        hit = await asyncio.to_thread(model.cache.get, key)
        if hit is not None:
            stats.attempts += 1
            stats.replayed += 1
            return _ToolReply.model_validate_json(hit.text)
    result = await model._send(messages, None, stats, tools=schemas, create_args=create_args)
    calls = [_Call(id=c.id, name=c.name, arguments=c.arguments)
             for c in (result.content if isinstance(result.content, list) else [])]
    text = result.content if isinstance(result.content, str) else (result.thought or "")
    reply = _ToolReply(text=text, calls=calls, prompt_tokens=result.usage.prompt_tokens,
                       completion_tokens=result.usage.completion_tokens)
    stats.prompt_tokens += reply.prompt_tokens
    stats.completion_tokens += reply.completion_tokens
    if model.cache is not None and calls:
        await asyncio.to_thread(model.cache.put, CachedCompletion(
            key=key, model=model.name, text=reply.model_dump_json(), finish_reason="tool_calls",
            prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens, request=request))
    return reply


def history(calls: list[tuple[str, str, dict, str]]) -> list[LLMMessage]:
    """Earlier (call id, tool, arguments, result) as the messages of a function-calling conversation."""
    from autogen_core import FunctionCall
    from autogen_core.models import FunctionExecutionResult
    out: list[LLMMessage] = []
    for call_id, tool, arguments, result in calls:
        out.append(AssistantMessage(content=[FunctionCall(id=call_id, name=tool, arguments=json.dumps(arguments))],
                                    source="assistant"))
        out.append(FunctionExecutionResultMessage(content=[FunctionExecutionResult(
            call_id=call_id, name=tool, content=result, is_error=False)]))
    return out
