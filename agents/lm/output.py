"""Structured output for a step: the prompt that asks for it, the response_format
that enforces it, and the lenient parse + strict validation of what came back.

Three output modes, strongest first:

- `json_schema`: OpenAI structured output (`response_format` type json_schema);
  vLLM and recent llama.cpp servers honour it too.
- `json_object`: JSON mode, with the schema attached the way llama.cpp and
  llama-cpp-python read it (`{"type": "json_object", "schema": ...}`).
- `text`: no response_format; the JSON is dug out of the reply.

Whatever the mode, the schema is also in the system message, and parsing copes
with what models really write: code fences, prose around the JSON, `<think>`
blocks, raw newlines inside strings, trailing commas, single quotes, unquoted
keys, unclosed strings, several objects where one was asked for. Strict JSON is
tried first; `json-repair` mends the rest. The schema is still checked strictly,
and a step may check more (`Step.check`, e.g. that an answer cites its sources).
"""

from __future__ import annotations

import json
import re
from typing import Literal

import json_repair
from pydantic import BaseModel, ValidationError

from agents.lm.steps import Step
from agents.lm.text.instructions import DATA_RULE

OutputMode = Literal["json_schema", "json_object", "text"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")
# What a chat model does with a reply still unusable after its repair turn.
OnBadOutput = Literal["extractive", "fail"]
ON_BAD_OUTPUT: tuple[OnBadOutput, ...] = ("extractive", "fail")

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
    """The step's instructions and its schema; the rule on quoted documents unless the step's input
    carries no corpus text (`Step.quotes_documents`)."""
    schema = json.dumps(step.output_schema(), ensure_ascii=False, sort_keys=True)
    rule = f"{DATA_RULE}\n\n" if step.quotes_documents else ""
    return (
        f"{step.instructions.strip()}\n\n{rule}"
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


def parse_output(step: type[Step], text: str, finish_reason: str | None = None,
                 inp: BaseModel | None = None) -> BaseModel:
    """The validated `step.Output` in `text`, or `OutputInvalid` saying what is wrong.

    With `inp`, the output must also pass `step.check(inp, output)`.
    """
    body = _THINK.sub("", text or "").strip()
    if not body:
        raise OutputInvalid("the reply was empty")
    # Cut off: the reply ends inside its JSON, even if an inner object happens to parse.
    if (finish_reason == "length" or _looks_truncated(body)) and not _complete_at_first_brace(body):
        raise OutputInvalid(_TRUNCATED)
    found = list(json_candidates(body))
    if not found:
        raise OutputInvalid("the reply contained no JSON object")
    first_problem = None
    for value in found:  # several objects where one was asked for: the first that fits
        try:
            output = step.Output.model_validate(value)
        except ValidationError as exc:
            first_problem = first_problem or f"the JSON does not match the schema: {_brief(exc)}"
            continue
        problem = step.check(inp, output) if inp is not None else None
        if problem is None:
            return output
        first_problem = first_problem or problem
    raise OutputInvalid(first_problem)


_TRUNCATED = (
    "the JSON was cut off before its end (the reply hit the token limit); "
    "make the answer shorter so that it fits"
)


def extract_json(text: str):
    """The first JSON object in `text`: bare, fenced, amid prose (which may hold "[1]"), or
    mended by `json-repair`. None if there is none."""
    return next(json_candidates(text), None)


def json_candidates(text: str):
    """The JSON objects `text` may hold, most plausible first: strictly valid ones (in fences,
    then anywhere), then the same with control characters allowed in strings, then what
    `json-repair` makes of the text from each brace on; when it finds several objects,
    each of them and then their merge (a model that split one object in two)."""
    fenced = [m.group(1) for m in re.finditer(r"```(?:json|JSON)?\s*\n?(.*?)```", text, re.DOTALL)]
    seen: list = []

    def fresh(value) -> bool:
        if isinstance(value, dict) and value and value not in seen:
            seen.append(value)
            return True
        return False

    for strict in (True, False):
        decoder = json.JSONDecoder(strict=strict)
        for candidate in [*fenced, text]:
            end = 0  # objects inside one already found are its parts, not candidates of their own
            for start in (m.start() for m in re.finditer(r"{", candidate)):
                if start < end:
                    continue
                try:
                    value, end = decoder.raw_decode(candidate, start)
                except json.JSONDecodeError:
                    continue
                if fresh(value):
                    yield value
    for candidate in [*fenced, text]:
        # From the first brace: prose before it may hold "[1]", which would read as a list.
        for start in [m.start() for m in re.finditer(r"{", candidate)][:_REPAIR_STARTS]:
            mended = _repair(candidate[start:])
            objects = [v for v in (mended if isinstance(mended, list) else [mended]) if isinstance(v, dict)]
            for value in objects:
                if fresh(value):
                    yield value
            if len(objects) > 1:
                merged = {k: v for obj in reversed(objects) for k, v in obj.items()}
                if fresh(merged):
                    yield merged
            if objects:
                break


_REPAIR_STARTS = 3  # json-repair is slower than the strict decoder; a few starting braces suffice


def _repair(text: str):
    try:
        return json_repair.loads(text)
    except Exception:  # json-repair gives up on some inputs with assorted errors: then there is no JSON
        return None


def _complete_at_first_brace(body: str) -> bool:
    start = body.find("{")
    if start < 0:
        return False
    try:
        json.JSONDecoder(strict=False).raw_decode(body, start)  # a raw newline in a string is no cut
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
