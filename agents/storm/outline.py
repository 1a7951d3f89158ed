"""The outline: a draft from the topic alone, refined from what the conversations found.

Stored as STORM's outline text: one heading a line, `#` for a section and `##`
for a subsection.
"""

from __future__ import annotations

from typing import Sequence

from agents.lm.steps import LanguageModel
from agents.storm.headings import DocumentHeading
from agents.storm.outline_params import OutlineParams
from agents.storm.records import ConversationLog, Outline, OutlineSection
from agents.storm.steps_outline import (
    MAX_SECTIONS,
    DraftOutline,
    DraftOutlineInput,
    QuestionAnswer,
    RefineOutline,
    RefineOutlineInput,
    clean_outline,
)
from agents.storm.steps_research import NOTHING_FOUND
from retrieval.documents import PassageText
from retrieval.snippets import Snippet


async def draft_outline(topic: str, models: LanguageModel) -> Outline:
    return clean_outline(await models.run(DraftOutline, DraftOutlineInput(topic=topic)), topic)


async def refine_outline(topic: str, draft: Outline, log: ConversationLog, snippets: Sequence[Snippet],
                         models: LanguageModel, params: OutlineParams | None = None,
                         reading: Sequence[Snippet] = ()) -> Outline:
    """The outline the research supports (the extractive one planned with `params`, None: the defaults,
    at most `params.max_headings` headings); empty when the research found nothing. `reading`: more of
    the corpus a chat model reads beside the research."""
    if not snippets:
        return Outline()
    inp = refine_input(topic, draft, log, snippets, params.max_headings if params else MAX_SECTIONS)
    have = {" ".join(e.text.split()) for e in inp.evidence}
    more = [_as_text(s) for s in reading if " ".join(s.text.split()) not in have]
    out = await models.run(RefineOutline, inp.model_copy(update={"params": params, "reading": more}))
    return clean_outline(out, topic)


def refine_input(topic: str, draft: Outline, log: ConversationLog, snippets: Sequence[Snippet],
                 max_headings: int = MAX_SECTIONS) -> RefineOutlineInput:
    """What the refine step reads: the conversations' answers, the sources' headings and snippets."""
    conversation = [QuestionAnswer(question=t.user_utterance, answer=t.agent_utterance)
                    for c in log.conversations for t in c.dlg_turns if t.agent_utterance != NOTHING_FOUND]
    headings: list[DocumentHeading] = []
    for s in snippets:
        for h in s.heading_path:
            d = DocumentHeading(heading=h, title=s.title)
            if d not in headings:
                headings.append(d)
    return RefineOutlineInput(
        topic=topic, draft=draft, conversation=conversation, document_headings=headings,
        evidence=[_as_text(s) for s in snippets], max_headings=max_headings)


def _as_text(s: Snippet) -> PassageText:
    return PassageText(text=s.text, title=s.title, section=" > ".join(s.heading_path))


def outline_text(outline: Outline) -> str:
    lines = []
    for s in outline.sections:
        lines.append(f"# {s.heading}")
        lines += [f"## {x}" for x in s.subsections]
    return "\n".join(lines) + ("\n" if lines else "")


def parse_outline(text: str) -> Outline:
    """An `Outline` from outline text; deeper levels fold into subsections."""
    sections: list[OutlineSection] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        level = len(stripped) - len(stripped.lstrip("#"))
        heading = stripped.lstrip("#").strip()
        if not heading:
            continue
        if level == 1 or not sections:
            sections.append(OutlineSection(heading=heading))
        else:
            sections[-1].subsections.append(heading)
    return Outline(sections=sections)
