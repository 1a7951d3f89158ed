"""`ChatModel`: runs a step on any autogen `ChatCompletionClient`.

One `run` is: system message (instructions + output schema) and user message (the
rendered input) → a completion in the strongest output mode the server accepts →
lenient parse, strict pydantic validation and the step's own check → at most one
repair turn → the typed output. When the reply is still unusable, the step's
extractive implementation runs instead (`on_bad_output="extractive"`, recorded as
a fallback with its reason), or `ModelOutputError` is raised (`"fail"`). A
failing endpoint is never papered over: it raises. Each request retries transient failures with
backoff, may be replayed from a `CompletionCache`, and every run lands in the
`UsageLedger`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, cast

from autogen_core.models import AssistantMessage, ChatCompletionClient, LLMMessage, SystemMessage, UserMessage

from agents.lm.backoff import Failure, RetryPolicy, classify, malformed_reply, rejection_hint
from agents.lm.call_stats import CallStats, FormatRefused, PromptTooLong
from agents.lm.cache import CachedCompletion, CompletionCache, request_key
from agents.lm.errors import EndpointUnavailableError, ModelOutputError, RequestRejectedError
from agents.lm.output import (
    ON_BAD_OUTPUT,
    OUTPUT_MODES,
    OnBadOutput,
    OutputInvalid,
    OutputMode,
    parse_output,
    repair_prompt,
    response_format,
    system_prompt,
    weaker_mode,
)
from agents.lm.nlp import TextToolkit
from agents.lm.steps import I, NoOfflineImplementation, O, Step, ToolStep
from agents.lm.tool_calls import run_tool_step  # the native function-calling path
from agents.lm.usage import KNOWN_PRICES, ModelPrice, UsageLedger, UsageRecord, cost_usd

_log = logging.getLogger(__name__)
WAIT_NOTICE_S = 10.0  # a request still unanswered after this long says what it waits for


@dataclass
class _Reply:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    key: str
    request: dict
    cached: bool


class ChatModel:
    """A `LanguageModel` over an autogen chat client.

    - `model`: the model's name, for the cache key, the ledger, prices and errors.
    - `endpoint`: where requests go (base URL), for error messages; not in the cache key.
    - `output_mode`: the strongest structured-output mode to try; a server that refuses
      it is asked in the next weaker one, and this model then stays there.
    - `create_args`: sent with every request (temperature, max_tokens, seed, ...) and
      part of the cache key; `role_args`: per step role, what that role's requests send
      instead (its own sampling, `LLMSettings.sampling`).
    - `concurrency`: requests in flight at once from this model.
    - `cache`: replay identical requests from disk; `None` sends every request.
    - `ledger`: where runs are recorded (a fresh one if not given; see `.ledger`).
    - `prices`: USD per 1M tokens by model name; `None` uses `KNOWN_PRICES`.
    - `on_bad_output`: when a reply is unusable even after the repair turn, run the step's
      extractive implementation instead (`"extractive"`) or raise `ModelOutputError` (`"fail"`).
    - `nlp`: the toolkit of that extractive fallback (a lexical-only one if not given).
    - `sleep`: how backoff waits (tests pass a recorder).
    """

    def __init__(
        self,
        client: ChatCompletionClient,
        *,
        model: str,
        endpoint: str | None = None,
        output_mode: OutputMode = "json_schema",
        create_args: Mapping[str, Any] | None = None,
        role_args: Mapping[str, Mapping[str, Any]] | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 8,
        cache: CompletionCache | None = None,
        ledger: UsageLedger | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
        on_bad_output: OnBadOutput = "extractive",
        nlp: TextToolkit | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if on_bad_output not in ON_BAD_OUTPUT:
            raise ValueError(f"on_bad_output must be one of {', '.join(ON_BAD_OUTPUT)}, got {on_bad_output!r}")
        self.name = model
        self.endpoint = endpoint or f"(the {type(client).__name__} for '{model}')"
        self.client = client
        self.create_args = dict(create_args or {})
        self.role_args = {role: dict(args) for role, args in (role_args or {}).items()}
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.prices = KNOWN_PRICES if prices is None else prices
        self._mode = _supported_mode(output_mode, client)
        self._semaphore = asyncio.Semaphore(concurrency)
        self._sleep = sleep
        self.on_bad_output = on_bad_output
        self._nlp = nlp
        # native function calling for `ToolStep`s; off once the server refuses it, or when the
        # client says the model cannot (then those steps ask for JSON like any other)
        self.tool_calls = bool(client.model_info.get("function_calling", True))

    @property
    def output_mode(self) -> OutputMode:
        """The mode requests use now (weaker than asked once a server refused a mode)."""
        return self._mode

    async def run(self, step: type[Step[I, O]], inp: I) -> O:
        if not isinstance(inp, step.Input):
            raise TypeError(f"step {step.name} takes {step.Input.__name__}, got {type(inp).__name__}")
        try:
            return await self._run(step, inp)
        except PromptTooLong as too_long:  # a smaller model's window: the step's extractive output instead
            reason = too_long.failure.reason
            output = await self._fall_back(step, inp, ModelOutputError(step.name, step.role, self.name, reason, ""))
            now = datetime.now(timezone.utc)
            self._record(step, CallStats(attempts=1, fallback_reason=reason), now, time.monotonic(), error=None)
            return output

    async def _run(self, step: type[Step[I, O]], inp: I) -> O:
        if issubclass(step, ToolStep) and self.tool_calls:
            output = await run_tool_step(self, step, inp)
            if output is not None:
                return output  # None: the server refused tools; the step runs as any other below
        started_at, started = datetime.now(timezone.utc), time.monotonic()
        stats = CallStats()
        user = step.render_input(inp)
        messages: list[LLMMessage] = [
            SystemMessage(content=system_prompt(step)),
            UserMessage(content=user, source="user"),
        ]
        replies: list[_Reply] = []
        try:
            replies.append(await self._complete(step, messages, stats))
            try:
                output = parse_output(step, replies[0].text, replies[0].finish_reason, inp)
            except OutputInvalid as first:
                stats.repaired = True
                messages += [
                    AssistantMessage(content=replies[0].text.strip() or "(an empty reply)", source="assistant"),
                    UserMessage(content=repair_prompt(first.problem), source="user"),
                ]
                replies.append(await self._complete(step, messages, stats))
                try:
                    output = parse_output(step, replies[1].text, replies[1].finish_reason, inp)
                    _refuse_echo(output, first.problem)
                except OutputInvalid as second:
                    error = ModelOutputError(step.name, step.role, self.name, second.problem, replies[1].text)
                    output = await self._fall_back(step, inp, error)
                    stats.fallback_reason = second.problem
        except PromptTooLong:
            raise  # recorded by `run`, with its fallback
        except Exception as exc:
            self._record(step, stats, started_at, started, error=str(exc) or type(exc).__name__)
            raise
        if stats.fallback_reason is None:  # only a chain that ended in valid output is worth replaying
            await self._store([r for r in replies if not r.cached])
        self._record(step, stats, started_at, started, error=None)
        return cast(O, output)

    async def _fall_back(self, step: type[Step[I, O]], inp: I, error: ModelOutputError) -> O:
        """The step's extractive output in place of an unusable reply, or `error` when the
        user asked to fail or the step has no offline implementation."""
        if self.on_bad_output == "fail":
            raise error
        if self._nlp is None:
            self._nlp = TextToolkit()
        try:
            output = await asyncio.to_thread(step.extract, inp, self._nlp)
        except NoOfflineImplementation:
            raise error from None
        if not isinstance(output, step.Output):
            raise TypeError(f"step {step.name}.extract returned {type(output).__name__}, not {step.Output.__name__}")
        _log.info("step '%s': model '%s' gave unusable output twice (%s); used the extractive model",
                  step.name, self.name, error.problem)
        return cast(O, output)

    async def close(self) -> None:
        await self.client.close()

    async def _complete(self, step: type[Step], messages: list[LLMMessage], stats: CallStats) -> _Reply:
        """One completion in the current output mode, weakening it while the server refuses it."""
        while True:
            mode = self._mode
            fmt = response_format(step, mode)
            request = {
                "model": self.name,
                "messages": [{"role": _role(m), "content": m.content} for m in messages],
                "response_format": fmt,
                "create_args": self.args_for(step.role),
            }
            key = request_key(request)
            stats.first_key = stats.first_key or key
            stats.mode = mode
            if self.cache is not None:
                hit = await asyncio.to_thread(self.cache.get, key)
                if hit is not None:
                    stats.attempts += 1
                    stats.replayed += 1
                    return _Reply(hit.text, hit.finish_reason, hit.prompt_tokens, hit.completion_tokens,
                                  key, request, cached=True)
            try:
                result = await self._send(messages, fmt, stats, create_args=request["create_args"])
            except FormatRefused as refused:
                weaker = weaker_mode(mode)  # never None: text mode sends no format to refuse
                if OUTPUT_MODES.index(weaker) > OUTPUT_MODES.index(self._mode):
                    self._mode = weaker  # remembered: later calls skip the refused mode
                    _log.warning("%s refused output mode %s for model '%s' (%s); using %s from now on",
                                 self.endpoint, mode, self.name, refused.failure.reason, weaker)
                continue
            # `content: null` reads as an empty reply (repaired, else fallen back), not as the text "None"
            text = result.content if isinstance(result.content, str) else str(result.content or "")
            usage = result.usage
            stats.prompt_tokens += usage.prompt_tokens
            stats.completion_tokens += usage.completion_tokens
            return _Reply(text, result.finish_reason, usage.prompt_tokens, usage.completion_tokens,
                          key, request, cached=False)

    def args_for(self, role: str) -> dict[str, Any]:
        """What a request of a step of `role` sends: its role's own arguments, else `create_args`."""
        return dict(self.role_args.get(role, self.create_args))

    async def _send(self, messages: list[LLMMessage], fmt: dict | None, stats: CallStats,
                    tools: list | None = None, create_args: Mapping[str, Any] | None = None):
        """One completion, retried through transient failures; `tools`: native function calling;
        `create_args`: the step role's (None: `self.create_args`)."""
        args = dict(self.create_args if create_args is None else create_args)
        if fmt is not None:
            args["response_format"] = fmt
        last: Failure | None = None
        for retry in range(self.retry.max_retries + 1):
            stats.attempts += 1
            try:
                async with self._semaphore:
                    notice = asyncio.get_running_loop().call_later(WAIT_NOTICE_S, self._still_waiting, retry)
                    try:
                        return await asyncio.wait_for(
                            self.client.create(messages, tools=tools or [], extra_create_args=args),
                            self.retry.timeout_s)
                    finally:
                        notice.cancel()
            except Exception as exc:  # classified below; anything unknown is a bug and propagates
                failure = classify(exc, structured=fmt is not None or bool(tools)) or malformed_reply(exc)
                if failure is None:
                    raise
                if failure.kind == "format_refused":
                    raise FormatRefused(failure) from exc
                if failure.kind == "context_exceeded":
                    raise PromptTooLong(failure) from exc
                if not failure.retryable:
                    raise RequestRejectedError(endpoint=self.endpoint, model=self.name, reason=failure.reason,
                                               hint=rejection_hint(failure.status)) from exc
                last = failure
            if retry < self.retry.max_retries:
                await self._sleep(self.retry.delay(retry, last.retry_after))
        raise EndpointUnavailableError(endpoint=self.endpoint, model=self.name, reason=last.reason,
                                       attempts=self.retry.max_retries + 1)

    def _still_waiting(self, retry: int) -> None:
        _log.warning("waiting for LLM endpoint %s (model '%s'): no reply after %.0f s; this attempt (%d of %d) "
                     "gives up after %.0f s (--llm-timeout)", self.endpoint, self.name, WAIT_NOTICE_S, retry + 1,
                     self.retry.max_retries + 1, self.retry.timeout_s)

    async def _store(self, replies: list[_Reply]) -> None:
        if self.cache is None:
            return
        for r in replies:
            entry = CachedCompletion(key=r.key, model=self.name, text=r.text, finish_reason=r.finish_reason,
                                     prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens,
                                     request=r.request)
            await asyncio.to_thread(self.cache.put, entry)

    def _record(self, step: type[Step], stats: CallStats, started_at: datetime, started: float,
                error: str | None) -> None:
        self.ledger.record(UsageRecord(
            started_at=started_at,
            step=step.name,
            role=step.role,
            model=self.name,
            prompt_tokens=stats.prompt_tokens,
            completion_tokens=stats.completion_tokens,
            cost_usd=cost_usd(self.name, stats.prompt_tokens, stats.completion_tokens, self.prices),
            latency_s=time.monotonic() - started,
            cached=stats.attempts > 0 and stats.replayed == stats.attempts,
            attempts=stats.attempts,
            repaired=stats.repaired,
            fallback="extractive" if stats.fallback_reason is not None else None,
            fallback_reason=stats.fallback_reason,
            ok=error is None,
            error=error,
            output_mode=stats.mode,
            request_key=stats.first_key,
        ))


def _refuse_echo(output, problem: str) -> None:
    """A small model may answer the repair turn by copying the complaint into its output."""
    said = output.model_dump_json().lower()
    if len(problem) >= 24 and problem[:40].lower() in said:
        raise OutputInvalid("the reply repeats the complaint about the last reply instead of fixing it")


def _role(message: LLMMessage) -> str:
    return {SystemMessage: "system", UserMessage: "user", AssistantMessage: "assistant"}[type(message)]


def _supported_mode(wanted: OutputMode, client: ChatCompletionClient) -> OutputMode:
    """`wanted`, weakened to what the client's model_info says the model can do."""
    info = client.model_info
    if not info.get("json_output", True):
        return "text"
    if wanted == "json_schema" and not info.get("structured_output", False):
        return "json_object"
    return wanted
