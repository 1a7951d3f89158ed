"""`raystorm interview RUN_DIR/TOPIC ["QUESTION"]`: talk to a finished run's personas.

Each persona answers in character from its own memory — its conversation and the
passages it retrieved, saved in the run's conversation_log.json — with citations to
exact source lines. No cluster, store or earlier process is needed. Without a
question it opens an interactive session. Every exchange is appended to the run's
interviews.jsonl.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from cluster.commands.common import info, relative_source, run_async

INTERVIEWS = "interviews.jsonl"


def register(sub: argparse._SubParsersAction) -> None:
    from agents.lm.arguments import add_llm_arguments

    p = sub.add_parser(
        "interview", help="interview the personas of a finished report run",
        description="Ask the simulated researchers of a finished `raystorm report` run. Each persona answers in "
                    "character, only from the passages it gathered during its research, citing exact source "
                    "lines. Works in a fresh process, with no cluster running. Without QUESTION: an interactive "
                    "session (type /personas, /persona NAME, /all, /quit).",
        epilog="example: raystorm interview runs/Harborline_Mutual_flood_coverage \"What changed in 2023?\" --all")
    p.add_argument("run_dir", metavar="RUN_DIR/TOPIC", help="a report's folder, e.g. runs/<topic_slug>")
    p.add_argument("question", nargs="?", help="the question (none: interactive session)")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--persona", metavar="NAME", help="ask this persona (default: the basic fact writer, the first)")
    who.add_argument("--all", action="store_true", help="ask every persona (a panel)")
    p.add_argument("--json", action="store_true", help="one JSON object per answer")
    add_llm_arguments(p)
    p.add_argument("--data-dir", metavar="DIR", help="where raystorm keeps its models (default: $RAYSTORM_HOME or "
                   "~/.raystorm); the run's folder holds everything else")
    p.set_defaults(func=run)


def panel_of(memories, persona: str | None, everyone: bool = False) -> list:
    """The personas to ask: all of them, the one named (exactly, else by part of the name), or the first."""
    from retrieval.errors import UsageError

    if everyone:
        return list(memories)
    if not persona:
        return [memories[0]]
    wanted = persona.strip().lower()
    found = [m for m in memories if m.persona.name.lower() == wanted] or \
            [m for m in memories if wanted in m.persona.name.lower()]
    if not found:
        names = ", ".join(m.persona.name for m in memories)
        raise UsageError(f"no persona named '{persona}' in this run; its personas: {names}")
    return found[:1]


class RunTopic(BaseModel):
    """The one field of a run's run_config.json an interview reads."""

    topic: str


def run(args: argparse.Namespace) -> int:
    from agents.lm.arguments import role_models_from_args
    from agents.lm.nlp import TextToolkit
    from agents.report.memory import load_memories
    from retrieval.config import StoreSettings
    from retrieval.embeddings import shared_dense
    from retrieval.errors import UsageError
    from retrieval.saved import load_json

    run_dir = Path(args.run_dir).expanduser()
    if not run_dir.is_dir():
        raise UsageError(f"{args.run_dir}: no such folder; give a report's folder, e.g. runs/<topic_slug>")
    memories = load_memories(run_dir)
    config = run_dir / "run_config.json"
    topic = load_json(config, RunTopic, "rerun the report to rebuild it").topic if config.is_file() else run_dir.name
    panel = panel_of(memories, args.persona, args.all)
    settings = StoreSettings.resolve(args.data_dir)
    nlp = TextToolkit(embed=shared_dense(settings.dense_model, settings.models_dir).embed)
    models = role_models_from_args(args, nlp=nlp)
    models.validate_roles(["interview"])  # the one step an interview runs
    if models.notice and not args.json:
        info(models.notice)
    return run_async(_session(args, run_dir, topic, memories, panel, models))


async def _session(args, run_dir: Path, topic: str, memories, panel, models) -> int:
    dialogue: dict[str, list[str]] = {}
    try:
        if args.question is not None:
            await _ask(args, run_dir, topic, panel, models, args.question, dialogue)
            return 0
        info(f"Interviewing {', '.join(m.persona.name for m in panel)} about '{topic}'. "
             "/personas lists them, /persona NAME or /all switches, /quit ends.")
        while True:
            try:
                line = input("you> ").strip()
            except EOFError:
                return 0
            if not line:
                continue
            if line in ("/quit", "/exit"):
                return 0
            if line == "/personas":
                for m in memories:
                    print(f"- {m.persona.name}: {m.persona.description}")
                continue
            if line == "/all":
                panel = list(memories)
                continue
            if line.startswith("/persona "):
                args.persona, args.all = line.split(" ", 1)[1], False
                try:
                    panel = panel_of(memories, args.persona, args.all)
                except Exception as exc:  # a name not in the run: say so, keep the session
                    print(exc)
                continue
            await _ask(args, run_dir, topic, panel, models, line, dialogue)
    finally:
        await models.close()


def interview_record(name: str, question: str, answer) -> dict:
    """One persona's answer as `interview --json` (and the MCP face) give it."""
    cited = [{"n": n, "title": s.title, "path": s.path, "line_start": s.line_start, "line_end": s.line_end}
             for n, s in enumerate(answer.sources, start=1) if s in answer.cited()]
    return {"at": datetime.now(timezone.utc).isoformat(), "persona": name, "question": question,
            "answer": answer.answer, "cited": cited}


async def _ask(args, run_dir: Path, topic: str, panel, models, question: str, dialogue: dict[str, list[str]]) -> None:
    from agents.report.memory import interview

    for memory in panel:
        name = memory.persona.name
        answer = await interview(memory, topic, question, models, dialogue.get(name, []))
        dialogue.setdefault(name, []).extend([f"Q: {question}", f"A: {answer.answer}"])
        record = interview_record(name, question, answer)
        cited = record["cited"]
        with open(run_dir / INTERVIEWS, "a", encoding="utf-8") as log:
            log.write(json.dumps(record, ensure_ascii=False) + "\n")
        if args.json:
            print(json.dumps(record, ensure_ascii=False))
            continue
        print(f"{name}: {answer.answer}")
        for c in cited:
            print(f"  [{c['n']}] {c['title']} ({relative_source(c['path'])}, lines {c['line_start']}-{c['line_end']})")
        sys.stdout.flush()
