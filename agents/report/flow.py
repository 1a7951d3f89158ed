"""The report flow's article stage when the report agent writes it (`--writer react`).

Sections are written one after another, in outline order, each seeing the headings
before it (the agent does not repeat what an earlier section covered; one pass, no
de-duplication afterwards). Files, next to STORM's:

- `report_outline.json`: the plan the agent writes to (STORM's refined outline), each section with
  the description the planning call gave it;
- `section_NN.json` and `section_NN.md`: each section as written, with its tool calls and
  results, and the fingerprint of what it was made from: a rerun resumes at the first
  section whose file is missing or stale;
- a section the agent could not write (empty, tool JSON or uncited, twice) is named in the
  progress and the log and left out; it has no checkpoint, so a rerun tries it again;
- `agent_log.jsonl`: the plan, every thought, tool call (with arguments), tool result,
  rejected draft, section and error, in order, with timestamps (a reused section's entries
  carry the time of the run that reused it).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from agents.report.agent import SectionFailed
from agents.report.memory import memories_of
from agents.report.records import LogEntry, ReactSection
from agents.report.stage import PlanArgs, ReactArgs, plan_report
from agents.runtime import Runtime
from agents.storm.article import assemble
from agents.storm.artifacts import RunFiles
from agents.storm.records import Article, ConversationLog, Outline
from agents.storm.steps_article import SectionDigest
from agents.storm.steps_outline import QuestionAnswer
from agents.storm.steps_research import NOTHING_FOUND
from retrieval.saved import DamagedFile, load_json

AGENT_LOG = "agent_log.jsonl"
OUTLINE = "report_outline.json"


def section_file(index: int) -> str:
    return f"section_{index + 1:02d}"


class SavedSection(BaseModel):
    fingerprint: str
    section: ReactSection


def _reused(files: RunFiles, index: int, print_: str, say: Callable[..., None]) -> ReactSection | None:
    path = files.path(section_file(index) + ".json")
    if not path.is_file():
        return None
    try:
        saved = load_json(path, SavedSection, "")
    except DamagedFile as exc:  # cut short or edited: written again, not trusted
        say("article", f"{exc}: the section is written again")
        return None
    return saved.section if saved.fingerprint == print_ else None


async def react_article(topic: str, runtime: Runtime, files: RunFiles, outline: Outline, log: ConversationLog,
                        options, say: Callable[..., None], print_: str) -> Article:
    """The article, section by section through the report agent (see the module docstring)."""
    research = [QuestionAnswer(question=t.user_utterance, answer=t.agent_utterance)
                for c in log.conversations for t in c.dlg_turns if t.agent_utterance != NOTHING_FOUND]
    plan = await runtime.stage("outline", plan_report, PlanArgs(topic=topic, outline=outline, research=research))
    described = {p.heading: p.description for p in plan.sections}
    files.write_json(OUTLINE, {**outline.model_dump(mode="json"),
                               "descriptions": [described.get(s.heading, "") for s in outline.sections]})
    memories = memories_of(log)
    entries = [LogEntry(kind="plan", data={"sections": [s.heading for s in outline.sections],
                                           "personas": [m.persona.name for m in memories]})]
    written: list[ReactSection] = []
    failed: list[str] = []
    for i, section in enumerate(outline.sections):
        own = f"{print_}/{i}"
        done = None if options.force else _reused(files, i, own, say)
        if done is None:
            try:
                done = await runtime.report_section(ReactArgs(
                    topic=topic, outline=outline, index=i, earlier=[s.draft.heading for s in written],
                    earlier_text=[SectionDigest(heading=s.draft.heading, text=s.draft.text) for s in written],
                    description=described.get(section.heading, ""), memories=memories, min_calls=options.react_min_calls, max_calls=options.react_max_calls))
            except SectionFailed as exc:
                # left out of the report and not checkpointed (a rerun tries it again); the others go on
                failed.append(section.heading)
                entries.append(LogEntry(kind="error", section=i, data={"heading": section.heading,
                                                                       "problem": exc.problem}))
                say("article", f"section '{section.heading}' failed and is left out: {exc.problem}")
                continue
            # without the log's timestamps, so two runs of the same section write the same file
            files.write_json(section_file(i) + ".json", {"fingerprint": own, "section": done.model_dump(
                mode="json", exclude={"log": {"__all__": {"at"}}})})
            files.write_text(section_file(i) + ".md", f"## {done.draft.heading}\n\n{done.draft.text.strip()}\n")
            say("article", "progress", f"sections ({section.heading}: {len(done.calls)} tool calls)", i + 1,
                len(outline.sections))
        else:
            say("article", "progress", f"sections ({section.heading}: reused)", i + 1, len(outline.sections))
        written.append(done)
        entries += done.log
    files.write_text(AGENT_LOG, "".join(e.model_dump_json() + "\n" for e in entries))
    if failed and not written:
        raise SectionFailed(", ".join(failed), "no section of the outline could be written")
    return assemble(topic, [s.draft for s in written])
