"""The roundtable on the web app and the MCP server: HTTP routes and the page (`roundtable_router`), and the MCP
tools `roundtable_start`, `roundtable_turn`, `roundtable_observe`, `roundtable_mindmap`, `roundtable_report`
(`add_roundtable_tools`).
Both call the session's `RoundtableHub`, which calls what `raystorm roundtable` calls."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, StreamingResponse
from pydantic import BaseModel, Field

from cluster.limits import MAX_NAME, MAX_QUESTION, Name, Source, Topic
from cluster.roundtable_hub import hub_of

Message = Annotated[str, Field(max_length=MAX_QUESTION, description="what the user says ('' lets the table go on)")]
EventIndex = Annotated[int, Field(ge=0, le=10**6, description="the first event to return")]
TurnNumber = Annotated[int, Field(ge=1, le=10**5, description="a turn of the discussion")]
CiteNumber = Annotated[int, Field(ge=1, le=1000, description="a citation [n] of that turn")]
ObserveTurns = Annotated[int, Field(ge=1, le=50, description="turns to run with nobody typing")]
UserEvery = Annotated[int, Field(ge=0, le=50, description="the simulated user asks after this many turns without "
                                                          "the user (0: never)")]
PointId = Annotated[str, Field(max_length=MAX_NAME, description="a mind-map snippet's id")]


class RoundtableRequest(BaseModel):
    topic: Topic
    source: Source = "corpus"


class TurnRequest(BaseModel):
    message: Message = ""


class ObserveRequest(BaseModel):
    turns: ObserveTurns = 3
    user_every: UserEvery = 3


def roundtable_router(get_session, page):
    """The routes: the API under /api/roundtables, the pages /roundtable and /roundtable/{id}. `page(request,
    template, **context)` renders a page as the app's others are."""
    router = APIRouter()

    def hub():
        return hub_of(get_session())

    @router.post("/api/roundtables")
    async def roundtable_start(body: RoundtableRequest) -> dict:
        """Start a roundtable: its id at once; its warm start streams in as events."""
        return await hub().start(body.topic, body.source, wait=False)

    @router.get("/api/roundtables")
    async def roundtables() -> list[dict]:
        return hub().list()

    @router.get("/api/roundtables/{session_id}")
    async def roundtable_events(session_id: Name, since: EventIndex = 0) -> dict:
        """Its state and the events (turns said, the mind map as it changed) from index `since` on."""
        return hub().events(session_id, since)

    @router.get("/api/roundtables/{session_id}/stream", responses={200: {"content": {"text/event-stream": {}}}})
    async def roundtable_stream(session_id: Name, since: EventIndex = 0):
        """The events of `GET /api/roundtables/{id}` as server-sent events: one `data:` line (that object) at
        once and each time turns are said, the mind map changes or the state does; a comment line every 15 s."""
        updates = hub().stream(session_id, since)
        first = await anext(updates)  # an unknown session fails here, as the events route does, not in the stream

        async def lines():
            yield f"data: {json.dumps(first)}\n\n"
            async for got in updates:
                yield ": alive\n\n" if got is None else f"data: {json.dumps(got)}\n\n"
        return StreamingResponse(lines(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    @router.post("/api/roundtables/{session_id}/turn")
    async def roundtable_turn(session_id: Name, body: TurnRequest) -> dict:
        """The user's message (or none: the table goes on); the turns stream in as events."""
        return await hub().turn(session_id, body.message or None, wait=False)

    @router.post("/api/roundtables/{session_id}/observe")
    async def roundtable_observe(session_id: Name, body: ObserveRequest) -> dict:
        """Let the table run `turns` turns by itself, a simulated user asking now and then; they stream in."""
        return await hub().observe(session_id, body.turns, body.user_every, wait=False)

    @router.get("/api/roundtables/{session_id}/mindmap")
    async def roundtable_mindmap(session_id: Name) -> dict:
        return hub().mindmap(session_id)

    @router.post("/api/roundtables/{session_id}/report")
    async def roundtable_report(session_id: Name) -> dict:
        return await hub().report(session_id)

    @router.get("/api/roundtables/{session_id}/source")
    async def roundtable_source(session_id: Name, turn: TurnNumber | None = None, n: CiteNumber | None = None,
                                point: PointId | None = None) -> dict:
        """A cited snippet's lines: a turn's [n], or a mind-map snippet by its id."""
        return hub().source(session_id, turn, n, point)

    @router.get("/roundtable", response_class=HTMLResponse, include_in_schema=False)
    async def roundtable_new(request: Request):
        return page(request, "roundtable.html", session=None, sessions=hub().list())

    @router.get("/roundtable/{session_id}", response_class=HTMLResponse, include_in_schema=False)
    async def roundtable_page(request: Request, session_id: Name):
        return page(request, "roundtable.html", session=hub().status(session_id), sessions=[])

    return router


def add_roundtable_tools(mcp, session) -> None:
    """The five roundtable tools on a FastMCP server of an opened `session`."""

    @mcp.tool()
    async def roundtable_start(topic: Topic, source: Source = "corpus") -> dict[str, Any]:
        """Start a roundtable on `topic` (Co-STORM): a warm start picks the experts and seeds the mind map.
        Returns the session id, its experts and the warm start's turns; go on with `roundtable_turn`."""
        started = await hub_of(session).start(topic, source, wait=True)
        return {**started, "said": [e["utterance"] for e in hub_of(session).events(started["id"])["events"]
                                    if e["kind"] == "utterance"]}

    @mcp.tool()
    async def roundtable_turn(session_id: Name, message: Message = "") -> dict[str, Any]:
        """One turn of roundtable `session_id`: with a `message`, you speak and an expert answers it (searching
        for it); without, the table goes on (an expert, or the moderator asking from unused information).
        Returns the turns said, each with its text, [n] citations and their sources (file, lines)."""
        return await hub_of(session).turn(session_id, message or None, wait=True)

    @mcp.tool()
    async def roundtable_observe(session_id: Name, turns: ObserveTurns = 3, user_every: UserEvery = 3
                                 ) -> dict[str, Any]:
        """Let roundtable `session_id` run `turns` turns by itself: experts and the moderator go on, and a
        simulated user asks about the least-covered concept after every `user_every` turns without a user
        (0: never). Returns the turns said, as `roundtable_turn` does."""
        return await hub_of(session).observe(session_id, turns, user_every, wait=True)

    @mcp.tool()
    def roundtable_mindmap(session_id: Name) -> dict[str, Any]:
        """The mind map of roundtable `session_id`: a tree of concepts, each with its cited snippets."""
        return hub_of(session).mindmap(session_id)

    @mcp.tool()
    async def roundtable_report(session_id: Name) -> dict[str, Any]:
        """Write the report of roundtable `session_id` from its mind map (sections in the tree's order,
        References, claims that `claims_check` verifies) and return report.md."""
        return await hub_of(session).report(session_id)
