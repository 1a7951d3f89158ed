"""From command-line options to LLMSettings to RoleModels."""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle

import pytest

from agents.lm.arguments import add_llm_arguments, settings_from_args, role_models_from_args
from agents.lm.chat import ChatModel
from agents.lm.errors import LLMConfigError
from agents.lm.extractive import NO_LLM_NOTICE, ExtractiveModel
from agents.lm.models import RoleModels
from agents.lm.settings import STORM_ROLES, LLMSettings, ModelSpec, parse_model_spec
from agents.lm.usage import UsageLedger


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-openai")
    monkeypatch.setenv("RAYSTORM_LLM_API_KEY", "sk-secret-local")


def test_nothing_configured_is_extractive_with_a_notice():
    models = role_models_from_args(parse(), cache_dir=None)
    assert isinstance(models.default, ExtractiveModel) and models.roles == {}
    assert models.notice == NO_LLM_NOTICE
    assert models.describe() == ["default: extractive"]


@pytest.mark.parametrize("text, base_url, expected", [
    ("openai:gpt-4o-mini", None, ModelSpec(provider="openai", model="gpt-4o-mini")),
    ("qwen2.5-7b", "http://gpu:8000/v1/", ModelSpec(provider="openai_compatible", model="qwen2.5-7b",
                                                      base_url="http://gpu:8000/v1")),
    ("llama3@http://localhost:11434/v1", None, ModelSpec(provider="openai_compatible", model="llama3",
                                                         base_url="http://localhost:11434/v1")),
    ("extractive", "http://gpu:8000/v1", ModelSpec(provider="extractive")),
])
def test_model_specs(text, base_url, expected):
    assert parse_model_spec(text, base_url) == expected


@pytest.mark.parametrize("argv, message", [
    (["--llm", "llama3"], "names no endpoint"),
    (["--llm", "m@http://user:pw@host/v1"], "credentials"),
    (["--llm", "openai:gpt-4o", "--llm-base-url", "http://gpu:8000/v1"], "no --llm or --role-llm names"),
    (["--role-llm", "outline"], "expected ROLE=SPEC"),
    (["--role-llm", "Outline=openai:gpt-4o"], "role name"),
    (["--llm-temperature", "0.7"], "only apply to a language model"),
    (["--no-llm-cache"], "only apply to a language model"),
    (["--on-bad-output", "fail"], "--on-bad-output only apply to a language model"),
    (["--llm-client", "autogen"], "--llm-client only apply to a language model"),
    (["--llm", "openai:gpt-4o", "--llm-price", "gpt-4o=cheap"], "MODEL=IN,OUT"),
    (["--llm", "openai:gpt-4o", "--llm-retries", "-1"], "max_retries"),
])
def test_bad_options_are_refused_with_the_fix(argv, message):
    with pytest.raises(LLMConfigError, match=message):
        settings_from_args(parse(*argv))


def test_the_client_option_chooses_how_requests_are_sent(keys):
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    from agents.lm.direct_client import DirectChatClient

    chosen = {}
    for flags in ([], ["--llm-client", "autogen"], ["--llm-client", "direct"]):
        settings = settings_from_args(parse("--llm", "openai:gpt-4o-mini", *flags))
        models = RoleModels.from_settings(settings)
        chosen[" ".join(flags)] = (settings.client, type(models.default.client))
    assert chosen == {"": ("direct", DirectChatClient),
                      "--llm-client autogen": ("autogen", OpenAIChatCompletionClient),
                      "--llm-client direct": ("direct", DirectChatClient)}


def test_settings_hold_no_secrets_and_travel(keys):
    args = parse("--llm-base-url", "http://gpu:8000/v1", "--llm", "qwen2.5-7b",
                 "--role-llm", "outline=openai:gpt-4o", "--llm-temperature", "0.3", "--llm-retries", "2",
                 "--llm-price", "qwen2.5-7b=0.1,0.2")
    settings = settings_from_args(args)
    run_config = settings.model_dump_json()
    assert "sk-secret" not in run_config
    assert json.loads(run_config)["roles"]["outline"] == {"provider": "openai", "model": "gpt-4o", "base_url": None}
    assert LLMSettings.model_validate_json(run_config) == settings
    assert pickle.loads(pickle.dumps(settings)) == settings  # what Ray ships to an actor
    assert settings.api_key_env() == {"OPENAI_API_KEY": "sk-secret-openai", "RAYSTORM_LLM_API_KEY": "sk-secret-local"}
    assert settings.retry.max_retries == 2 and settings.temperature == 0.3


def test_role_models_route_by_role_and_share_models(keys, tmp_path):
    args = parse("--llm", "openai:gpt-4o-mini", "--role-llm", "outline=openai:gpt-4o",
                 "--role-llm", "polish=openai:gpt-4o", "--role-llm", "article=extractive")
    ledger = UsageLedger()
    models = role_models_from_args(args, cache_dir=tmp_path, ledger=ledger)

    assert models.notice is None and models.ledger is ledger
    assert isinstance(models.default, ChatModel) and models.default.name == "gpt-4o-mini"
    assert models.for_role("outline") is models.for_role("polish")  # one model, one limit
    assert isinstance(models.for_role("article"), ExtractiveModel)
    assert models.for_role("question_asker") is models.default
    assert models.default.cache is not None and models.default.ledger is ledger
    assert models.default.create_args == {"temperature": 0.0, "max_tokens": 2048}
    assert models.describe()[0] == "article: extractive"
    models.validate_roles(STORM_ROLES)
    with pytest.raises(LLMConfigError, match="outline, polish"):
        models.validate_roles(["article", "conv_simulator"])


def test_compatible_server_model_info(keys):
    args = parse("--llm-base-url", "http://gpu:8000/v1", "--llm", "qwen2.5-7b",
                 "--llm-structured-output", "json_object", "--no-llm-cache")
    models = role_models_from_args(args, cache_dir="/never/used")
    model = models.default
    assert model.endpoint == "http://gpu:8000/v1" and model.cache is None
    info = model.client.model_info
    assert info["family"] == "unknown" and info["json_output"] is True
    assert info["structured_output"] is False and info["function_calling"] is True and info["vision"] is False
    plain = role_models_from_args(parse("--llm", "m@http://gpu:8000/v1", "--no-llm-function-calling")).default
    assert plain.client.model_info["function_calling"] is False and plain.tool_calls is False
    assert model.output_mode == "json_object"


def test_openai_needs_its_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY is not set"):
        role_models_from_args(parse("--llm", "openai:gpt-4o-mini"), cache_dir=None)


def test_local_servers_get_a_placeholder_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("RAYSTORM_LLM_API_KEY", raising=False)
    models = role_models_from_args(parse("--llm", "gemma@http://localhost:8080/v1"), cache_dir=None)
    assert isinstance(models.default, ChatModel)


def test_reasoning_models_get_max_completion_tokens(keys):
    models = RoleModels.from_settings(LLMSettings(default=ModelSpec(provider="openai", model="o3-mini")))
    assert models.default.create_args == {"max_completion_tokens": 2048}


def test_role_models_is_a_language_model(step, question):
    class Polish(step):
        name = "test.polish"
        role = "polish"

    extractive, other = ExtractiveModel(), ExtractiveModel()
    models = RoleModels(extractive, {"polish": other})

    async def both():
        await models.run(step, question)
        await models.run(Polish, question)

    asyncio.run(both())
    assert [r.step for r in extractive.ledger.records] == ["test.answer"]
    assert [r.step for r in other.ledger.records] == ["test.polish"]
    assert sorted(r.step for r in models.ledger.records) == ["test.answer", "test.polish"]  # merged view


def test_on_bad_output_travels_in_the_settings_to_every_chat_model(keys, tmp_path):
    default = settings_from_args(parse("--llm", "m@http://gpu:8000/v1"))
    assert default.on_bad_output == "extractive"
    settings = settings_from_args(parse("--llm", "m@http://gpu:8000/v1", "--role-llm", "outline=openai:gpt-4o",
                                        "--on-bad-output", "fail"))
    shipped = LLMSettings.model_validate_json(settings.model_dump_json())  # run_config.json, a Ray actor
    models = RoleModels.from_settings(shipped, cache_dir=tmp_path)
    assert {m.on_bad_output for m in models._models()} == {"fail"}
    with pytest.raises(SystemExit):
        parse("--llm", "m@http://gpu:8000/v1", "--on-bad-output", "ignore")
