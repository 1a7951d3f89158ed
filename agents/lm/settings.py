"""`LLMSettings`: which model runs each role, and how it is called — never a secret.

Settings are plain values: written into run_config.json as they are, shipped to
Ray actors, which rebuild the same models with `RoleModels.from_settings`. API
keys are read from the environment where the models are built
(`LLMSettings.api_key_env` lists what a remote process needs).

Model specs, as given to `--llm` and `--role-llm ROLE=SPEC` (`ROLE=SPEC,temperature=T,top_p=P,max_tokens=N`
also sets that role's sampling; `ROLE:temperature=T,...` only its sampling):

- `extractive` — the offline extractive model;
- `openai:MODEL` — OpenAI's API (key from OPENAI_API_KEY);
- `MODEL` — MODEL on the OpenAI-compatible server of `--llm-base-url`;
- `MODEL@URL` — MODEL on the OpenAI-compatible server at URL (vLLM, Ollama,
  llama.cpp's server, LM Studio; key from RAYSTORM_LLM_API_KEY, else
  OPENAI_API_KEY, else a placeholder that local servers accept).

A role is the routing key of a model call: the kind of work a `Step` does
(`Step.role`), e.g. STORM's `STORM_ROLES`; other pipelines add their own. (A
*stage* is something else: a checkpointed step of a report, `agents/storm/flow.py`.)

Each role samples as its work wants (`ROLE_SAMPLING`, after STORM's: temperature 1.0 and top_p 0.9 for
every role, completion limits by the length of what the role writes, here as JSON); a role without its
own uses `LLMSettings.temperature` and `max_tokens` (0.0 and 2048: the multi-hop and answer steps
extract, and want the same answer twice). `--llm-temperature` / `--llm-max-tokens` set every role.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.lm.errors import LLMConfigError
from agents.lm.output import OnBadOutput, OutputMode
from agents.lm.usage import ModelPrice
from agents.retry import RetryPolicy

STORM_ROLES = ("conv_simulator", "question_asker", "outline", "article", "polish", "react")  # react: --writer react
# raystorm roundtable (Co-STORM): the experts, the moderator (its questions and who sits at the table, the warm
# start's perspectives included), the mind-map organiser, the report from the mind map, the simulated user (--observe)
ROUNDTABLE_ROLES = ("expert", "moderator", "mindmap", "report", "user")

Provider = Literal["extractive", "openai", "openai_compatible"]
# how chat requests are sent: raystorm's own client (agents.lm.direct_client) or autogen-ext's
LLMClient = Literal["direct", "autogen"]
LLM_CLIENTS: tuple[str, ...] = get_args(LLMClient)
OPENAI_KEY_ENV = "OPENAI_API_KEY"
COMPATIBLE_KEY_ENV = "RAYSTORM_LLM_API_KEY"
OPENAI_BASE_URL = "https://api.openai.com/v1"
LOCAL_PLACEHOLDER_KEY = "not-needed"  # local servers want some bearer token, and ignore it
_ROLE = re.compile(r"^[a-z][a-z0-9_]*$")


class Sampling(BaseModel):
    """How one role's requests sample; None: the settings' value (top_p: the server's default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, gt=0)


# STORM's: 1.0 / 0.9 everywhere; its limits (500 for questions and answers, 400 for the outline, 700
# for a section, 4000 for polish) raised for our JSON replies, the expert's longer answers and
# sections with their subsections
ROLE_SAMPLING: dict[str, Sampling] = {
    "question_asker": Sampling(temperature=1.0, top_p=0.9, max_tokens=500),
    "conv_simulator": Sampling(temperature=1.0, top_p=0.9, max_tokens=1000),
    "outline": Sampling(temperature=1.0, top_p=0.9, max_tokens=2000),
    "article": Sampling(temperature=1.0, top_p=0.9, max_tokens=3000),
    "polish": Sampling(temperature=1.0, top_p=0.9, max_tokens=4000),
    "react": Sampling(temperature=1.0, top_p=0.9, max_tokens=1000),
}


class ModelSpec(BaseModel):
    """One model at one endpoint (hashable: equal specs build one shared model)."""

    model_config = ConfigDict(frozen=True)

    provider: Provider
    model: str = "extractive"
    base_url: str | None = None

    @field_validator("base_url")
    @classmethod
    def _no_credentials_in_url(cls, url: str | None) -> str | None:
        if url is None:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base URL must look like http://host:8000/v1, got {url!r}")
        if parts.username or parts.password:
            raise ValueError("put credentials in RAYSTORM_LLM_API_KEY, not in the base URL")
        return url.rstrip("/")

    @property
    def label(self) -> str:
        if self.provider == "openai":
            return f"openai:{self.model}"
        if self.provider == "openai_compatible":
            return f"{self.model}@{self.base_url}"
        return "extractive"


EXTRACTIVE_SPEC = ModelSpec(provider="extractive")


def parse_model_spec(text: str, base_url: str | None = None) -> ModelSpec:
    """A `ModelSpec` from `--llm` syntax; `base_url` is `--llm-base-url`, for bare names."""
    text = text.strip()
    try:
        if text == "extractive":
            return EXTRACTIVE_SPEC
        if text.startswith("openai:") and len(text) > len("openai:"):
            return ModelSpec(provider="openai", model=text[len("openai:"):])
        on_server = re.match(r"^(.+?)@(https?://.+)$", text)
        if on_server:
            return ModelSpec(provider="openai_compatible", model=on_server[1], base_url=on_server[2])
        if text and base_url:
            return ModelSpec(provider="openai_compatible", model=text, base_url=base_url)
    except ValueError as exc:  # pydantic's, from the URL check
        raise LLMConfigError(f"model spec {text!r}: {exc}") from None
    raise LLMConfigError(
        f"model spec {text!r} names no endpoint: use openai:MODEL for OpenAI, MODEL with "
        "--llm-base-url http://host:8000/v1 (or MODEL@http://host:8000/v1) for an OpenAI-compatible "
        "server, or 'extractive'"
    )


class LLMSettings(BaseModel):
    """Everything needed to rebuild a run's models, without secrets."""

    default: ModelSpec = EXTRACTIVE_SPEC
    roles: dict[str, ModelSpec] = Field(default_factory=dict, description="per-role overrides")
    output_mode: OutputMode = Field("json_schema", description="strongest structured-output mode to try")
    temperature: float | None = Field(0.0, ge=0, le=2)
    max_tokens: int | None = Field(2048, gt=0)
    sampling: dict[str, Sampling] = Field(default_factory=lambda: dict(ROLE_SAMPLING),
                                          description="per-role sampling; other roles use temperature, max_tokens")
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    concurrency: int = Field(8, ge=1, description="requests in flight per model")
    prices: dict[str, ModelPrice] = Field(default_factory=dict, description="added to KNOWN_PRICES")
    cache: bool = Field(True, description="replay identical requests from the run's cache directory")
    client: LLMClient = Field(
        "direct", description="how requests are sent: 'direct' posts each one itself (agents.lm.direct_client); "
                              "'autogen' goes through autogen-ext's OpenAIChatCompletionClient and the openai SDK")
    function_calling: bool = Field(True, description="offer tool steps (the report agent's choice of tool) the "
                                                     "API's native function calling; off: they ask for JSON")
    on_bad_output: OnBadOutput = Field(
        "extractive", description="a reply still unusable after the repair turn: run the step's extractive "
                                  "implementation instead ('extractive') or stop the stage ('fail')")

    @field_validator("roles")
    @classmethod
    def _role_names(cls, roles: dict[str, ModelSpec]) -> dict[str, ModelSpec]:
        for name in roles:
            if not _ROLE.match(name):
                raise ValueError(f"role name {name!r} must be lowercase letters, digits and _")
        return roles

    def spec_for(self, role: str) -> ModelSpec:
        return self.roles.get(role, self.default)

    @property
    def specs(self) -> list[ModelSpec]:
        return [self.default, *self.roles.values()]

    @property
    def uses_llm(self) -> bool:
        return any(s.provider != "extractive" for s in self.specs)

    def api_key_env(self, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
        """The key variables these models read, with their values from `environ`: for a
        Ray `runtime_env={"env_vars": ...}`. Never write the result to disk."""
        names: set[str] = set()
        for spec in self.specs:
            if spec.provider == "openai":
                names.add(OPENAI_KEY_ENV)
            elif spec.provider == "openai_compatible":
                names |= {COMPATIBLE_KEY_ENV, OPENAI_KEY_ENV}
        return {n: environ[n] for n in sorted(names) if n in environ}


def api_key(spec: ModelSpec, environ: Mapping[str, str] = os.environ) -> str:
    if spec.provider == "openai":
        key = environ.get(OPENAI_KEY_ENV)
        if not key:
            raise LLMConfigError(
                f"{OPENAI_KEY_ENV} is not set: export it to use --llm {spec.label}, or serve a model "
                "locally and pass --llm-base-url http://host:8000/v1 --llm MODEL"
            )
        return key
    return environ.get(COMPATIBLE_KEY_ENV) or environ.get(OPENAI_KEY_ENV) or LOCAL_PLACEHOLDER_KEY


def endpoint_of(spec: ModelSpec) -> str:
    if spec.provider == "openai":
        return os.environ.get("OPENAI_BASE_URL", OPENAI_BASE_URL)
    return spec.base_url or "(none)"
