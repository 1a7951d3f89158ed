"""The report flow's calls are typed: a renamed stage argument or actor method fails in one process."""

from __future__ import annotations

import asyncio
import inspect

import pytest
from pydantic import ValidationError

from actors.chat_proxy import TurnHost
from actors.corpus import CorpusActor
from actors.expert import ExpertActor
from actors.retriever import SearchHost
from actors.table import TableHost
from agents.runtime import LocalRuntime, StageArgs, StageContext
from agents.storm.stages import PersonasArgs, SectionArgs


def test_a_stage_argument_under_another_name_is_refused_here_not_on_a_cluster():
    PersonasArgs(topic="t", max_personas=1, questions_per_persona=2)
    with pytest.raises(ValidationError, match="max_persona"):
        PersonasArgs(topic="t", max_persona=1, questions_per_persona=2)  # a caller still using an old name
    with pytest.raises(ValidationError, match="index"):
        SectionArgs(topic="t", outline={"sections": []}, k=3)  # a field the stage needs is missing


def test_the_local_runtime_passes_the_arguments_and_its_context():
    class Echo(StageArgs):
        words: list[str]

    seen: list[StageContext] = []

    async def shout(args: Echo, ctx: StageContext) -> str:
        seen.append(ctx)
        return " ".join(w.upper() for w in args.words)

    runtime = LocalRuntime(models="M", retriever="R", tables=lambda name: f"table {name}")  # type: ignore[arg-type]
    runtime.table("t1")
    assert asyncio.run(runtime.stage("x", shout, Echo(topic="t", words=["a", "b"]), table="t1")) == "A B"
    assert (seen[0].models, seen[0].retriever, seen[0].table) == ("M", "R", "table t1")
    with pytest.raises(ValueError, match="no table"):
        StageContext(models="M", retriever="R").need_table("article")  # type: ignore[arg-type]


def _params(fn) -> list[str]:
    return [p for p in inspect.signature(fn).parameters if p not in ("self", "_ray_trace_ctx")]


@pytest.mark.parametrize("host, actor", [(TurnHost, ExpertActor), (SearchHost, CorpusActor), (TableHost, CorpusActor)])
def test_every_method_callers_name_exists_on_the_actor_with_the_same_parameters(host, actor):
    actual = actor.__ray_metadata__.modified_class
    for name, fn in inspect.getmembers(host, inspect.isfunction):
        if name.startswith("_"):
            continue
        assert hasattr(actual, name), f"{actual.__name__} has no {name}(), which callers of {host.__name__} call"
        assert _params(getattr(actual, name)) == _params(fn), f"{actual.__name__}.{name} takes other parameters"
