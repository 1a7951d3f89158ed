"""Building the run's language models from `LLMSettings`: `RoleModels`.

`RoleModels` is itself a `LanguageModel`: `run(step, inp)` goes to the model of
`step.role`. Roles naming the same model share one `ChatModel`, so they share
its concurrency limit and what it learned about the server's output modes; each
role's requests carry that role's sampling (`LLMSettings.sampling`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from autogen_core.models import ModelFamily, ModelInfo

from agents.lm.cache import CompletionCache
from agents.lm.chat import ChatModel
from agents.lm.direct_client import DirectChatClient, HttpSession
from agents.lm.errors import LLMConfigError
from agents.lm.extractive import NO_LLM_NOTICE, ExtractiveModel
from agents.lm.nlp import TextToolkit
from agents.lm.settings import LLMSettings, ModelSpec, Sampling, api_key, endpoint_of  # noqa: F401 (re-exported)
from agents.lm.steps import I, LanguageModel, O, Step
from agents.lm.usage import KNOWN_PRICES, UsageLedger

if TYPE_CHECKING:
    from autogen_ext.models.openai import OpenAIChatCompletionClient

# OpenAI reasoning models take max_completion_tokens and only the default temperature.
_REASONING = re.compile(r"^(o\d|gpt-5)")


def check_roles(roles: Iterable[str], known: Iterable[str]) -> None:
    """Refuse overrides (`--role-llm`) for roles the command about to run does not have."""
    known = set(known)
    unknown = sorted(set(roles) - known)
    if unknown:
        raise LLMConfigError(
            f"--role-llm names role(s) {', '.join(unknown)} that this command does not run; "
            f"its roles are: {', '.join(sorted(known))}"
        )


class RoleModels:
    """Role name → `LanguageModel`, with a default for every other role.

    `notice`: a line for the CLI to print (set when no LLM is configured at all).
    """

    def __init__(self, default: LanguageModel, roles: Mapping[str, LanguageModel] | None = None, *,
                 notice: str | None = None):
        self.default = default
        self.roles = dict(roles or {})
        self.notice = notice

    @property
    def ledger(self) -> UsageLedger:
        """The models' ledger (built by `from_settings`, they share one; else a merged copy)."""
        ledgers = {id(m.ledger): m.ledger for m in self._models() if hasattr(m, "ledger")}
        if len(ledgers) == 1:
            return next(iter(ledgers.values()))
        return UsageLedger.merged(ledgers.values())

    def _models(self) -> list[LanguageModel]:
        return list({id(m): m for m in [self.default, *self.roles.values()]}.values())

    @property
    def name(self) -> str:
        return "; ".join(self.describe())

    def for_role(self, role: str) -> LanguageModel:
        return self.roles.get(role, self.default)

    async def run(self, step: type[Step[I, O]], inp: I) -> O:
        return await self.for_role(step.role).run(step, inp)

    def describe(self) -> list[str]:
        """One line per override, then the default: "outline: gpt-4o at https://api.openai.com/v1"."""
        def text(model: LanguageModel) -> str:
            endpoint = getattr(model, "endpoint", None)
            return f"{model.name} at {endpoint}" if endpoint else model.name
        return [f"{s}: {text(m)}" for s, m in sorted(self.roles.items())] + [f"default: {text(self.default)}"]

    def validate_roles(self, known: Iterable[str]) -> None:
        """Refuse overrides for roles the command about to run does not have."""
        check_roles(self.roles, known)

    async def close(self) -> None:
        for model in self._models():
            if hasattr(model, "close"):
                await model.close()

    @classmethod
    def from_settings(cls, settings: LLMSettings, *, cache_dir: str | os.PathLike | None = None,
                      ledger: UsageLedger | None = None, nlp: TextToolkit | None = None,
                      http_client: httpx.AsyncClient | None = None) -> RoleModels:
        """Build every configured model. `cache_dir`: where completions are cached
        (used when `settings.cache`); `nlp`: the toolkit of the extractive model;
        `http_client`: the HTTP client for OpenAI-compatible requests (proxies, tests)."""
        ledger = ledger if ledger is not None else UsageLedger()
        cache = CompletionCache(Path(cache_dir)) if settings.cache and cache_dir is not None else None
        built: dict[ModelSpec, LanguageModel] = {}

        def model_for(spec: ModelSpec) -> LanguageModel:
            if spec not in built:
                built[spec] = (ExtractiveModel(nlp, ledger) if spec.provider == "extractive" else
                               chat_model(spec, settings, cache=cache, ledger=ledger, http_client=http_client,
                                          nlp=nlp))
            return built[spec]

        default = model_for(settings.default)
        roles = {role: model_for(spec) for role, spec in settings.roles.items()}
        notice = None if settings.uses_llm else NO_LLM_NOTICE
        return cls(default, roles, notice=notice)


def chat_model(spec: ModelSpec, settings: LLMSettings, *, cache: CompletionCache | None,
               ledger: UsageLedger, http_client: HttpSession | httpx.AsyncClient | None = None,
               nlp: TextToolkit | None = None) -> ChatModel:
    """A `ChatModel` for an OpenAI or OpenAI-compatible `spec`; `nlp`: the toolkit of its
    extractive fallback. Each role with its own sampling (`settings.sampling`) sends its own."""
    reasoning = spec.provider == "openai" and bool(_REASONING.match(spec.model))
    create_args = sampling_args(Sampling(), settings, reasoning)
    role_args = {role: sampling_args(s, settings, reasoning) for role, s in settings.sampling.items()}
    if settings.client == "direct":
        client = direct_client(spec, settings, http_client=http_client)
    else:  # the openai SDK builds its own HTTP client unless given an httpx one
        given = None if isinstance(http_client, HttpSession) else http_client
        client = openai_client(spec, settings, http_client=given)
    model = ChatModel(
        client,
        model=spec.model,
        endpoint=endpoint_of(spec),
        output_mode=settings.output_mode,
        create_args=create_args,
        role_args=role_args,
        retry=settings.retry,
        concurrency=settings.concurrency,
        cache=cache,
        ledger=ledger,
        prices={**KNOWN_PRICES, **settings.prices},
        on_bad_output=settings.on_bad_output,
        nlp=nlp,
    )
    model.tool_calls = model.tool_calls and settings.function_calling
    return model


def sampling_args(sampling: Sampling, settings: LLMSettings, reasoning: bool) -> dict:
    """The request arguments of `sampling` (its values win over the settings'); a reasoning model
    takes max_completion_tokens and only its default temperature and top_p."""
    temperature = sampling.temperature if sampling.temperature is not None else settings.temperature
    max_tokens = sampling.max_tokens if sampling.max_tokens is not None else settings.max_tokens
    args: dict = {}
    if temperature is not None and not reasoning:
        args["temperature"] = temperature
    if sampling.top_p is not None and not reasoning:
        args["top_p"] = sampling.top_p
    if max_tokens is not None:
        args["max_completion_tokens" if reasoning else "max_tokens"] = max_tokens
    return args


def direct_client(spec: ModelSpec, settings: LLMSettings, *,
                  http_client: HttpSession | httpx.AsyncClient | None = None) -> DirectChatClient:
    """A `DirectChatClient` for `spec`: one POST a request, no SDK in between (`settings.client == "direct"`)."""
    base_url = endpoint_of(spec) if spec.provider == "openai" else spec.base_url
    if not base_url:
        raise LLMConfigError(f"model {spec.label} has no base URL: pass --llm-base-url or MODEL@URL")
    return DirectChatClient(model=spec.model, base_url=base_url, api_key=api_key(spec),
                            model_info=generic_model_info(settings), http_client=http_client,
                            timeout_s=settings.retry.timeout_s)


def openai_client(spec: ModelSpec, settings: LLMSettings, *,
                  http_client: httpx.AsyncClient | None = None) -> OpenAIChatCompletionClient:
    """autogen's OpenAI client for `spec`; its own retries are off, `ChatModel` retries."""
    # imported here: the openai package takes ~0.6 s to import, and extractive-only
    # processes (every Ray actor of an offline run) never need it
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    config: dict = {
        "model": spec.model,
        "api_key": api_key(spec),
        "timeout": settings.retry.timeout_s,
        "max_retries": 0,
        "include_name_in_message": False,  # some compatible servers reject a "name" field
    }
    if http_client is not None:
        config["http_client"] = http_client  # passed through to openai.AsyncOpenAI
    if spec.provider == "openai_compatible":
        return OpenAIChatCompletionClient(**config, base_url=spec.base_url, model_info=generic_model_info(settings))
    try:  # autogen knows the capabilities of OpenAI's own models by name
        return OpenAIChatCompletionClient(**config)
    except ValueError:  # a newer name: tell it what raystorm relies on
        return OpenAIChatCompletionClient(**config, model_info=generic_model_info(settings))


def generic_model_info(settings: LLMSettings) -> ModelInfo:
    """What autogen must be told about a model it does not know."""
    return ModelInfo(
        vision=False,
        function_calling=settings.function_calling,
        json_output=settings.output_mode != "text",
        family=ModelFamily.UNKNOWN,
        structured_output=settings.output_mode == "json_schema",
        multiple_system_messages=False,
    )
