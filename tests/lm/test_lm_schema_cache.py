"""A step's output schema is generated once per model and handed out as a fresh copy."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agents.lm import steps as steps_module
from agents.lm.output import response_format, system_prompt
from agents.lm.steps import Step, json_schema_of


def _shipped_steps() -> list[type[Step]]:
    import agents.storm.steps_article  # noqa: F401  (defines the STORM steps)
    import agents.storm.steps_outline  # noqa: F401
    import agents.storm.steps_perspectives  # noqa: F401
    import agents.storm.steps_research  # noqa: F401

    found, todo = [], list(Step.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if "Output" in vars(cls) or any("Output" in vars(b) for b in cls.__mro__[1:-1]):
            found.append(cls)
    return found


def test_every_step_gets_exactly_what_pydantic_generates():
    shipped = _shipped_steps()
    assert len(shipped) >= 9
    for step in shipped:
        for _ in range(2):  # generated, then from the cache
            assert step.output_schema() == step.Output.model_json_schema(), step.name


def test_generated_once_and_each_caller_gets_its_own_copy(monkeypatch):
    class Reply(BaseModel):
        text: str
        numbers: list[int] = []

    generated = []
    real = Reply.model_json_schema

    def counting(*args, **kwargs):
        generated.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(Reply, "model_json_schema", counting)

    class Say(Step):
        name, role, Input, Output, instructions = "test.say", "conv_simulator", Reply, Reply, "Say it."

    first = Say.output_schema()
    first["properties"]["text"]["title"] = "changed by a caller"
    first["required"].append("numbers")
    assert Say.output_schema() == real()  # the caller's edits did not reach the cache
    system_prompt(Say), response_format(Say, "json_schema"), response_format(Say, "json_object")
    assert len(generated) == 1


def test_a_rebuilt_model_gets_its_new_schema():
    class Box(BaseModel):
        item: str

    assert "description" not in json_schema_of(Box)["properties"]["item"]
    Box.model_fields["item"].description = "what is in the box"
    Box.model_rebuild(force=True)  # a new core schema: the cached text is stale
    assert json_schema_of(Box)["properties"]["item"]["description"] == "what is in the box"
    assert json_schema_of(Box) == Box.model_json_schema()


def test_a_step_given_another_output_model_gets_that_schema(monkeypatch):
    class One(BaseModel):
        one: str

    class Two(BaseModel):
        two: str

    class Flip(Step):
        name, role, Input, Output, instructions = "test.flip", "conv_simulator", One, One, "Flip."

    assert list(Flip.output_schema()["properties"]) == ["one"]
    monkeypatch.setattr(Flip, "Output", Two)
    assert list(Flip.output_schema()["properties"]) == ["two"]
    assert "two" in system_prompt(Flip)


def test_a_model_that_cannot_be_built_yet_is_not_cached():
    class Early(BaseModel):
        later: "NotYetDefined"  # noqa: F821

    with pytest.raises(Exception):
        json_schema_of(Early)
    assert Early not in steps_module._SCHEMAS
