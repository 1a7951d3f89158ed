"""A report's checkpoints: a stage is reused only while what it was made from still holds.

`checkpoints.json` in the topic's folder records, per stage, a fingerprint of its inputs —
the topic, the corpus version (a hash of the passage ids, which derive from text and place),
the models, the options the stage reads — chained through the stages before it. A stage whose
files exist but whose fingerprint differs is made again, and so is every stage after it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from agents.lm.settings import LLMSettings
from agents.storm.artifacts import STAGES, RunFiles
from retrieval.errors import RaystormError
from retrieval.saved import DamagedFile, load_json

T = TypeVar("T")
CHECKPOINTS = "checkpoints.json"


def models_key(llm: LLMSettings | None) -> dict[str, Any]:
    """The models a run's stages use, as its checkpoints record them (no secrets, no limits)."""
    llm = llm or LLMSettings()
    return {"default": llm.default.model_dump(mode="json"),
            "roles": {k: v.model_dump(mode="json") for k, v in sorted(llm.roles.items())}}


def fingerprint(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class StageFailed(RaystormError):
    """A pipeline stage failed; what finished before it is kept and a rerun resumes."""

    def __init__(self, stage: str, reason: str, topic: str | None = None):
        where = f"topic '{topic}', " if topic else ""
        resume = "" if "rerun" in reason else ". Finished stages are kept; rerun to resume."  # said once
        super().__init__(f"{where}stage '{stage}' failed: {reason.rstrip('.') if resume else reason}{resume}")
        self.stage = stage
        self.reason = reason
        self.topic = topic

class Checkpoints:
    """Reuse a stage's files when its fingerprint still holds, else make, write and record it."""

    def __init__(self, files: RunFiles, say: Callable[..., None], force: bool):
        self.files = files
        self.say = say
        self.reused: list[str] = []
        path = files.path(CHECKPOINTS)
        self.made: dict[str, str] = {} if force or not path.is_file() else load_json(
            path, dict[str, str], "delete it (the stages are then redone) or rerun with --force")

    async def stage(self, name: str, print_: str, make: Callable[[], Awaitable[T]],
                    write: Callable[[T], None], read: Callable[[], T]) -> T:
        if self.holds(name, print_):
            try:
                value = read()
            except DamagedFile as exc:  # cut short or edited since: made again, not trusted
                self.say(name, f"redone: {exc}")
            else:
                self.reused.append(name)
                self.say(name, "reused")
                return value
        self.files.clear(name)
        self.made.pop(name, None)
        self._save()
        self.say(name, "started")
        try:
            value = await make()
        except RaystormError as exc:
            raise StageFailed(name, str(exc), self.files.topic) from exc
        write(value)
        self.made[name] = print_
        self._save()
        return value

    def holds(self, name: str, print_: str) -> bool:
        """Whether stage `name` would be reused now: its files exist and were made from `print_`."""
        return self.made.get(name) == print_ and self.files.done(name)

    def _save(self) -> None:
        self.files.write_json(CHECKPOINTS, {s: self.made[s] for s in STAGES if s in self.made})
