"""Typed steps: every model interaction is one `Step` subclass.

A step names its role (the routing key that picks the model which runs it), its
input and output pydantic models, and its instructions. It also carries its own
deterministic offline implementation, `extract`, which the extractive model
runs; a chat model renders `instructions` + the input and parses the output.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel

from retrieval.errors import RaystormError

if TYPE_CHECKING:  # pragma: no cover
    from agents.lm.nlp import TextToolkit

class NoOfflineImplementation(RaystormError, NotImplementedError):
    """The extractive model was asked to run a step that only a chat model can run."""

    def __init__(self, step: str, role: str):
        super().__init__(f"step '{step}' has no offline implementation: give its role a language model, "
                         f"e.g. --role-llm {role}=openai:gpt-4o-mini")


I = TypeVar("I", bound=BaseModel)
O = TypeVar("O", bound=BaseModel)


class Step(Generic[I, O]):
    """One model interaction: `Input` in, validated `Output` out.

    Subclasses set the class attributes and implement `extract`.
    """

    name: ClassVar[str]  # unique, e.g. "storm.expert.answer"
    role: ClassVar[str]  # which role's model runs it, e.g. "conv_simulator"
    Input: ClassVar[type[BaseModel]]
    Output: ClassVar[type[BaseModel]]
    instructions: ClassVar[str]
    # whether the input may carry corpus text (fenced or not): then the system prompt says that such
    # text is data, never instructions; only a step whose input has none may say False
    quotes_documents: ClassVar[bool] = True

    @classmethod
    def render_input(cls, inp: BaseModel) -> str:
        """The user message a chat model sees. Override for a friendlier layout."""
        return json.dumps(inp.model_dump(mode="json"), ensure_ascii=False, indent=1)

    @classmethod
    def output_schema(cls) -> dict:
        """`Output`'s JSON schema: a fresh dict each call, generated once per model (`json_schema_of`)."""
        return json_schema_of(cls.Output)

    @classmethod
    def check(cls, inp: BaseModel, out: BaseModel) -> str | None:
        """What is wrong with a chat model's schema-valid `out` for `inp`, in words the model
        can act on, or None when it is usable. E.g. an answer must cite the sources it was given.
        A problem earns the reply one repair turn, then the step's `extract` (or an error)."""
        return None

    @classmethod
    def extract(cls, inp: BaseModel, nlp: "TextToolkit") -> BaseModel:
        """The deterministic offline implementation (classical IR/NLP); every shipped step has one.

        A step without one can only run on a chat model, so the offline default refuses it.
        """
        raise NoOfflineImplementation(cls.name, cls.role)


# model -> (the core schema it was generated from, the schema as JSON text). Every chat call needs its
# step's schema twice (system message, response_format) and pydantic takes ~0.2-0.3 ms to generate one;
# json.loads of the text takes ~5 us. One entry per output model a process uses (a few dozen).
_SCHEMAS: dict[type[BaseModel], tuple[object, str]] = {}


def json_schema_of(model: type[BaseModel]) -> dict:
    """`model.model_json_schema()`, from a cache: each call returns a new dict (callers may change it),
    and a model rebuilt since (`model_rebuild`, a new core schema) has its schema generated again."""
    core = model.__pydantic_core_schema__
    cached = _SCHEMAS.get(model)
    if cached is None or cached[0] is not core:
        cached = (core, json.dumps(model.model_json_schema(), ensure_ascii=False))
        _SCHEMAS[model] = cached
    return json.loads(cached[1])


class LanguageModel(Protocol):
    """Runs a step and returns its validated output."""

    name: str

    async def run(self, step: type[Step[I, O]], inp: I) -> O: ...


class ToolStep(Step[I, O]):
    """A step a chat model answers with a native function call (the API's `tools`).

    The model is offered `tools(inp)` — name → (description, arguments model) — and the
    conversation so far as real messages (`render_messages`: its earlier calls, each
    followed by the result a tool execution returned under the same call id). Its reply
    counts only as a call of one of those tools with valid arguments (`from_call` turns
    it into `Output`); text it writes is a thought at most, never an observation. A
    server that refuses tools, and the extractive model, run the step like any other
    (`render_input` + schema, or `extract`).
    """

    @classmethod
    def tools(cls, inp: BaseModel) -> dict[str, tuple[str, type[BaseModel]]]:
        raise TypeError(f"{cls.__name__} must define tools()")

    @classmethod
    def render_messages(cls, inp: BaseModel) -> list:
        """autogen `LLMMessage`s: system, the task, then each earlier call and its result."""
        raise TypeError(f"{cls.__name__} must define render_messages()")

    @classmethod
    def from_call(cls, inp: BaseModel, tool: str, arguments: dict, call_id: str, thought: str) -> BaseModel:
        raise TypeError(f"{cls.__name__} must define from_call()")
