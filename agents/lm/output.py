"""Structured output for a step: the prompt that asks for it, the response_format
that enforces it, and the lenient parse + strict validation of what came back.

Three output modes, strongest first:

- `json_schema`: OpenAI structured output (`response_format` type json_schema);
  vLLM and recent llama.cpp servers honour it too.
- `json_object`: JSON mode, with the schema attached the way llama.cpp and
  llama-cpp-python read it (`{"type": "json_object", "schema": ...}`).
- `text`: no response_format; the JSON is dug out of the reply.

Whatever the mode, the schema is also in the system message, and parsing copes
with code fences, prose around the JSON and `<think>` blocks.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ValidationError

from agents.lm.steps import Step

OutputMode = Literal["json_schema", "json_object", "text"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


class OutputInvalid(Exception):
    """The reply is not valid output; `problem` says why, in words for the model and the user."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


def weaker_mode(mode: OutputMode) -> OutputMode | None:
    i = OUTPUT_MODES.index(mode)
    return OUTPUT_MODES[i + 1] if i + 1 < len(OUTPUT_MODES) else None


def system_prompt(step: type[Step]) -> str:
    schema = json.dumps(step.output_schema(), ensure_ascii=False, sort_keys=True)
    return (
        f"{step.instructions.strip()}\n\n"
        "Reply with one JSON object, and nothing else, that validates against this JSON schema:\n"
        f"{schema}"
    )


def response_format(step: type[Step], mode: OutputMode) -> dict | None:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            # strict mode would demand every field required and no defaults, which
            # ordinary pydantic schemas are not; servers still steer to the schema.
            "json_schema": {"name": _schema_name(step.name), "schema": step.output_schema(), "strict": False},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": step.output_schema()}
    return None


def _schema_name(step_name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", step_name)[:64] or "output"


def repair_prompt(problem: str) -> str:
    return (
        f"That reply cannot be used: {problem}. Reply again with only the corrected JSON "
        "object, complete and valid against the schema, with no other text."
    )


def parse_output(step: type[Step], text: str, finish_reason: str | None = None) -> BaseModel:
    """The validated `step.Output` in `text`, or `OutputInvalid` saying what is wrong."""
    body = _THINK.sub("", text or "").strip()
    if not body:
        raise OutputInvalid("the reply was empty")
    # Cut off: the reply ends inside its JSON, even if an inner object happens to parse.
    if (finish_reason == "length" or _looks_truncated(body)) and not _complete_at_first_brace(body):
        raise OutputInvalid(_TRUNCATED)
    found = extract_json(body)
    if found is None:
        raise OutputInvalid("the reply contained no JSON object")
    try:
        return step.Output.model_validate(found)
    except ValidationError as exc:
        raise OutputInvalid(f"the JSON does not match the schema: {_brief(exc)}") from None


_TRUNCATED = (
    "the JSON was cut off before its end (the reply hit the token limit); "
    "make the answer shorter so that it fits"
)


def extract_json(text: str):
    """The first JSON object in `text`: bare, fenced, or amid prose (which may hold "[1]"). None if none."""
    decoder = json.JSONDecoder()
    candidates = [m.group(1) for m in re.finditer(r"```(?:json|JSON)?\s*\n?(.*?)```", text, re.DOTALL)]
    candidates.append(text)
    for candidate in candidates:
        for start in (m.start() for m in re.finditer(r"{", candidate)):
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _complete_at_first_brace(body: str) -> bool:
    start = body.find("{")
    if start < 0:
        return False
    try:
        json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError:
        return False
    return True


def _looks_truncated(body: str) -> bool:
    return sum(body.count(c) for c in "{[") > sum(body.count(c) for c in "}]")


def _brief(exc: ValidationError, limit: int = 5) -> str:
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
