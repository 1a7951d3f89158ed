"""What the report agent's loop produces and logs: tool calls, observations, sections, log lines."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.storm.article import SectionDraft
from retrieval.snippets import Snippet

ToolName = Literal["quick_search", "insight_forge", "panorama_search", "interview_agents"]
TOOL_NAMES: tuple[ToolName, ...] = ("quick_search", "insight_forge", "panorama_search", "interview_agents")


class ToolCall(BaseModel):
    """One call the agent decided on; `call_id` ties it to its result in agent_log.jsonl."""

    call_id: str = Field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")
    tool: ToolName
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought: str = ""


class ToolResult(BaseModel):
    """What a tool execution returned: a digest for the agent, and the facts it may cite."""

    call_id: str
    tool: ToolName
    digest: str = Field(description="what the agent reads next: a few lines")
    facts: list[Snippet] = Field(default_factory=list, description="the passages the section may cite")
    details: dict[str, Any] = Field(default_factory=dict, description="the tool's own structure (sub-questions, "
                                                                        "timeline, interviews)")
    error: str | None = None


class LogEntry(BaseModel):
    """One line of agent_log.jsonl."""

    at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    kind: Literal["plan", "thought", "tool_call", "tool_result", "section", "rejected", "error"]
    section: int | None = None
    call_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    tokens: int = 0


class ReactSection(BaseModel):
    """One section as the agent wrote it: the draft (text + the sources its [n] point at), and its log."""

    index: int
    draft: SectionDraft
    calls: list[ToolCall]
    results: list[ToolResult]
    log: list[LogEntry]
