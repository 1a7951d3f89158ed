"""The language-model options of the command line, and the settings they make.

    add_llm_arguments(parser)
    settings = settings_from_args(args)                      # LLMSettings, no secrets
    models = role_models_from_args(args, cache_dir=..., ledger=...)
    if models.notice: print(models.notice)
"""

from __future__ import annotations

import argparse
import os
import re

from typing import TYPE_CHECKING

from agents.lm.errors import LLMConfigError
from agents.lm.output import ON_BAD_OUTPUT, OUTPUT_MODES
from agents.lm.settings import (LLM_CLIENTS, ROLE_SAMPLING, ROUNDTABLE_ROLES, STORM_ROLES, LLMSettings, Sampling,
                                parse_model_spec)
from agents.lm.usage import ModelPrice, UsageLedger
from agents.retry import RetryPolicy

if TYPE_CHECKING:  # (the chat clients load with the models, not with the command line: a client of the
    from agents.lm.models import RoleModels  # service parses these flags and runs no model)
    from agents.lm.nlp import TextToolkit

# Options that only tune a chat model; given without any LLM they are refused, not ignored.
_TUNING = {
    "llm_structured_output": "--llm-structured-output",
    "llm_temperature": "--llm-temperature",
    "llm_max_tokens": "--llm-max-tokens",
    "llm_timeout": "--llm-timeout",
    "llm_retries": "--llm-retries",
    "llm_concurrency": "--llm-concurrency",
    "llm_price": "--llm-price",
    "on_bad_output": "--on-bad-output",
    "llm_client": "--llm-client",
}


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "language model",
        "Without --llm every step runs on the offline extractive model. API keys come from the "
        "environment: OPENAI_API_KEY for openai:MODEL, RAYSTORM_LLM_API_KEY (else OPENAI_API_KEY) "
        "for an OpenAI-compatible server.",
    )
    g.add_argument("--llm", metavar="SPEC",
                   help="the default model: openai:MODEL (e.g. openai:gpt-4o-mini); MODEL served at "
                        "--llm-base-url; MODEL@URL; or 'extractive'")
    g.add_argument("--llm-base-url", metavar="URL",
                   help="an OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio), "
                        "e.g. http://localhost:8000/v1, for specs that are a bare model name")
    g.add_argument("--role-llm", metavar="ROLE=SPEC", action="append", default=[],
                   help="the model of one role (a kind of model call), repeatable, e.g. outline=openai:gpt-4o or "
                        "article=extractive; with ',temperature=T,top_p=P,max_tokens=N' after it (or "
                        "'ROLE:temperature=T,...' alone) that role's sampling, e.g. article:temperature=0.3 "
                        f"(defaults in run_config.json's llm.sampling); STORM's roles: {', '.join(STORM_ROLES)}; "
                        f"a roundtable's: {', '.join(ROUNDTABLE_ROLES)}")
    g.add_argument("--llm-structured-output", choices=OUTPUT_MODES, default=None,
                   help="strongest output mode to ask for (default json_schema; a server that "
                        "refuses a mode is asked in the next: json_object, then text)")
    g.add_argument("--llm-temperature", type=float, default=None, metavar="T", help="default 0.0")
    g.add_argument("--llm-max-tokens", type=int, default=None, metavar="N",
                   help="completion tokens per request (default 2048)")
    g.add_argument("--llm-timeout", type=float, default=None, metavar="SECONDS",
                   help="limit of one request (default 120)")
    g.add_argument("--llm-retries", type=int, default=None, metavar="N",
                   help="retries on 429, 5xx, timeouts and connection errors (default 4)")
    g.add_argument("--llm-concurrency", type=int, default=None, metavar="N",
                   help="requests in flight per model (default 8)")
    g.add_argument("--llm-price", metavar="MODEL=IN,OUT", action="append", default=None,
                   help="USD per 1M prompt,completion tokens, for cost accounting, e.g. "
                        "my-model=0.2,0.6 (common OpenAI models are known)")
    g.add_argument("--on-bad-output", choices=ON_BAD_OUTPUT, default=None,
                   help="when a reply is unusable even after one repair turn: run that step on the "
                        "extractive model and go on (default; counted in the run summary and "
                        "llm_call_history.jsonl), or 'fail' to stop the stage")
    g.add_argument("--llm-client", choices=LLM_CLIENTS, default=None,
                   help="how requests are sent: 'direct' (default) posts each one itself (aiohttp); 'autogen' "
                        "goes through autogen-ext's OpenAI client and the openai SDK (about 1.5 ms more CPU a call)")
    g.add_argument("--no-llm-cache", action="store_true",
                   help="send every request even if the same one was answered before")
    g.add_argument("--no-llm-function-calling", action="store_true",
                   help="the report agent asks for its tool calls as JSON instead of the API's native "
                        "function calling (for servers that ignore `tools`; one that refuses them is "
                        "detected and asked for JSON anyway)")


def settings_from_args(args: argparse.Namespace) -> LLMSettings:
    base_url = args.llm_base_url
    default = parse_model_spec(args.llm, base_url) if args.llm else None
    roles = {}
    sampling = dict(ROLE_SAMPLING)
    if args.llm_temperature is not None or args.llm_max_tokens is not None:  # set for every role
        drop = {"temperature": None} if args.llm_temperature is not None else {}
        drop |= {"max_tokens": None} if args.llm_max_tokens is not None else {}
        sampling = {r: s.model_copy(update=drop) for r, s in sampling.items()}
    for item in args.role_llm:
        role, spec, tuning = _role_item(item)
        if spec:
            roles[role] = parse_model_spec(spec, base_url)
        if tuning:
            sampling[role] = sampling.get(role, Sampling()).model_copy(update=tuning)
    fields: dict = {"roles": roles, "sampling": sampling}
    if default is not None:
        fields["default"] = default
    if base_url and not any(s.base_url == base_url.rstrip("/") for s in [*roles.values()] + [default] if s):
        raise LLMConfigError(
            f"--llm-base-url {base_url} is set but no --llm or --role-llm names a model on it: "
            "add --llm MODEL (the name the server serves)"
        )
    try:
        _set_tuning(fields, args)
        settings = LLMSettings(**fields)
    except ValueError as exc:
        raise LLMConfigError(f"language-model options: {exc}") from None
    if not settings.uses_llm:
        given = [flag for attr, flag in _TUNING.items() if getattr(args, attr) is not None]
        switches = [f for attr, f in (("no_llm_cache", "--no-llm-cache"),
                                       ("no_llm_function_calling", "--no-llm-function-calling")) if getattr(args, attr)]
        switches += [f"--role-llm {item}" for item in args.role_llm if _role_item(item)[2]]
        if given or switches:
            flags = ", ".join(given + switches)
            raise LLMConfigError(f"{flags} only apply to a language model: add --llm SPEC, or drop them")
    return settings


def role_models_from_args(args: argparse.Namespace, cache_dir: str | os.PathLike | None = None,
                           ledger: UsageLedger | None = None, *, nlp: TextToolkit | None = None) -> RoleModels:
    """The run's models. `cache_dir`: the completion cache (None: none); `ledger`: where
    every call is recorded (a new one if None; `RoleModels.ledger` either way);
    `nlp`: the extractive model's toolkit (e.g. one with the run's embedder)."""
    from agents.lm.models import RoleModels

    return RoleModels.from_settings(settings_from_args(args), cache_dir=cache_dir, ledger=ledger, nlp=nlp)


def _set_tuning(fields: dict, args: argparse.Namespace) -> None:
    if args.llm_structured_output is not None:
        fields["output_mode"] = args.llm_structured_output
    if args.llm_temperature is not None:
        fields["temperature"] = args.llm_temperature
    if args.llm_max_tokens is not None:
        fields["max_tokens"] = args.llm_max_tokens
    if args.llm_concurrency is not None:
        fields["concurrency"] = args.llm_concurrency
    retry = {}
    if args.llm_timeout is not None:
        retry["timeout_s"] = args.llm_timeout
    if args.llm_retries is not None:
        retry["max_retries"] = args.llm_retries
    if retry:
        fields["retry"] = RetryPolicy(**retry)
    if args.on_bad_output is not None:
        fields["on_bad_output"] = args.on_bad_output
    if args.llm_client is not None:
        fields["client"] = args.llm_client
    if args.llm_price:
        fields["prices"] = dict(_price(p) for p in args.llm_price)
    fields["cache"] = not args.no_llm_cache
    fields["function_calling"] = not args.no_llm_function_calling


def _role_item(item: str) -> tuple[str, str, dict]:
    """(role, model spec or "", sampling values) of a `--role-llm` item."""
    usage = (f"--role-llm {item!r}: expected ROLE=SPEC (e.g. outline=openai:gpt-4o), optionally followed by "
             ",temperature=T,top_p=P,max_tokens=N, or ROLE:temperature=T,...")
    named = re.match(r"^([a-z][a-z0-9_]*):(.+)$", item.strip())
    if named:
        role, spec, rest = named[1], "", named[2]
    else:
        role, eq, rest = item.partition("=")
        if not eq or not role.strip() or not rest.strip():
            raise LLMConfigError(usage)
        role, (spec, _, rest) = role.strip(), rest.partition(",")
        spec = spec.strip()
        if not spec:
            raise LLMConfigError(usage)
    tuning: dict = {}
    for part in filter(None, (x.strip() for x in rest.split(","))) if rest else []:
        key, eq, value = part.partition("=")
        if not eq or key not in Sampling.model_fields:
            raise LLMConfigError(f"{usage} ({part!r} is not one of {', '.join(Sampling.model_fields)}=VALUE)")
        try:
            tuning[key] = int(value) if key == "max_tokens" else float(value)
            Sampling(**{key: tuning[key]})
        except ValueError as exc:
            bad = exc.errors()[0]["msg"] if hasattr(exc, "errors") else "not a number"
            raise LLMConfigError(f"--role-llm {item!r}: {key}={value}: {bad}") from None
    if not spec and not tuning:
        raise LLMConfigError(usage)
    return role, spec, tuning


def _price(item: str) -> tuple[str, ModelPrice]:
    model, eq, numbers = item.partition("=")
    parts = numbers.split(",")
    try:
        if not eq or not model or len(parts) != 2:
            raise ValueError
        return model.strip(), ModelPrice(input_per_1m=float(parts[0]), output_per_1m=float(parts[1]))
    except ValueError:
        raise LLMConfigError(f"--llm-price {item!r}: expected MODEL=IN,OUT in USD per 1M tokens") from None
