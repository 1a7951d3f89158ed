"""The roundtables a long-lived face runs (the web app, the MCP server), over its open `cluster.session.Session`:
one `RoundtableHub` per session (`hub_of`), holding each live roundtable, its events as they happen and a
lock, so two requests never step one session at once. Sessions on disk are picked up again by id.

Every method returns plain JSON-able values, the shapes of `raystorm roundtable --json`.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from typing import Any

from agents.roundtable.engine import Roundtable, TurnEvent
from agents.roundtable.mindmap import mindmap_text
from agents.roundtable.records import MindMapNode, RoundtableOptions
from cluster.roundtables import no_table, report_of, session_files, session_summary
from retrieval.errors import RaystormError, UsageError
from retrieval.snippets import Snippet

LINES_AROUND = 4  # lines shown around a cited snippet, as on the report page

_HUBS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def hub_of(session) -> RoundtableHub:
    """The hub of an open `Session` (made on first use)."""
    hub = _HUBS.get(session)
    if hub is None:
        hub = _HUBS[session] = RoundtableHub(session)
    return hub


class LiveRoundtable:
    """A roundtable a face serves: its events so far, its state, and the lock its turns take."""

    def __init__(self, table: Roundtable):
        self.table = table
        self.events: list[dict[str, Any]] = []
        self.state = "ready"  # running | ready | failed
        self.error: str | None = None
        self.lock = asyncio.Lock()
        self._changed = asyncio.Event()  # set (and replaced) on every event and change of state
        table.listener = self.hear
        session = table.session  # a session picked up again: its history first, as events
        for said in session.utterances:
            self.hear(TurnEvent(kind="utterance", utterance=said))
        if session.mindmap.children:
            self.hear(TurnEvent(kind="mindmap", mindmap=session.mindmap))

    def hear(self, event: TurnEvent) -> None:
        self.events.append({"kind": event.kind, "utterance": event.utterance.model_dump(mode="json")
                            if event.utterance else None,
                            "mindmap": tree_json(event.mindmap) if event.mindmap else None})
        self.changed()

    def set_state(self, state: str, error: str | None = None) -> None:
        self.state, self.error = state, error
        self.changed()

    def changed(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, timeout_s: float) -> None:
        """Until the next event or change of state, or `timeout_s`."""
        try:
            await asyncio.wait_for(self._changed.wait(), timeout_s)
        except asyncio.TimeoutError:
            pass


def tree_json(root: MindMapNode) -> dict[str, Any]:
    """The mind map as JSON, each snippet with its id (what `source(point=...)` takes)."""
    return {"id": root.id, "concept": root.concept,
            "snippets": [{**s.model_dump(mode="json"), "point_id": s.point_id} for s in root.snippets],
            "children": [tree_json(c) for c in root.children]}


class RoundtableHub:
    def __init__(self, session):
        self.session = session
        self.files = session_files(session.settings)
        self.live: dict[str, LiveRoundtable] = {}
        # turns running on after their request answered are the session's background tasks: closing the
        # session (the web app or MCP server shutting down) cancels them with its own
        self._tasks: set[asyncio.Task] = session._tasks

    def _runtime(self, source: str):
        from agents.runtime import LocalRuntime

        return LocalRuntime(self.session.models, self._retriever(source), tables=no_table)

    def _retriever(self, source: str):
        for_source = getattr(self.session, "retriever_for", None)  # a session that can research the web
        if for_source is not None:
            return for_source(source)
        if source != "corpus":
            raise UsageError(f"source '{source}': this server searches its collection only")
        return self.session.retriever

    def _served(self) -> set[str]:
        """The files a citation may open: the collection's, and the snapshots of web pages it fetched."""
        snapshots = getattr(self.session, "_snapshots", None)
        return self.session._files() | (snapshots() if snapshots else set())

    async def start(self, topic: str, source: str = "corpus", wait: bool = True,
                    options: RoundtableOptions | None = None) -> dict[str, Any]:
        """A new roundtable: its id at once (`wait` False: the warm start runs on), or after its warm start."""
        topic = " ".join(topic.split())
        if not topic:
            raise UsageError("the topic is empty")
        table = Roundtable.new(topic, self.session.collection, self._runtime(source), options=options,
                               files=self.files, source=source)
        live = self.live[table.session.id] = LiveRoundtable(table)
        await self._run(live, table.warm_start, wait)
        return self.status(table.session.id)

    async def turn(self, session_id: str, message: str | None = None, wait: bool = True) -> dict[str, Any]:
        """One turn (the user's message, if given, and the answer to it); with `wait`, the turns said."""
        return await self._turns(session_id, lambda table: table.step(message), wait)

    async def observe(self, session_id: str, turns: int, user_every: int = 3, wait: bool = True) -> dict[str, Any]:
        """`turns` turns with nobody typing (as `raystorm roundtable --observe`): the simulated user asks after
        every `user_every` turns without the user (0: never); with `wait`, the turns said."""
        async def run(table: Roundtable) -> None:
            for _ in range(turns):
                await table.observe(user_every)
        return await self._turns(session_id, run, wait)

    async def _turns(self, session_id: str, work, wait: bool) -> dict[str, Any]:
        """`work(table)` on the live roundtable; its status, and with `wait` the turns it said."""
        live = self.get(session_id)
        before = live.table.session.turns
        await self._run(live, lambda: work(live.table), wait)
        said = live.table.session.utterances[before:] if wait else []
        return {**self.status(session_id), "said": [u.model_dump(mode="json") for u in said]}

    async def _run(self, live: LiveRoundtable, work, wait: bool) -> None:
        async def guarded() -> None:
            async with live.lock:
                live.set_state("running")
                try:
                    await work()
                    live.set_state("ready")
                except Exception as exc:  # the face shows it; the session file keeps the last good turn
                    live.set_state("failed", str(exc))
                    if wait:
                        raise
        if wait:
            await guarded()
            return
        live.set_state("running")  # from now: the request that started it reads it so
        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def get(self, session_id: str) -> LiveRoundtable:
        """A live roundtable, or a saved one of this collection picked up again."""
        live = self.live.get(session_id)
        if live is None:
            saved = self.files.load_id(session_id)
            if saved.collection != self.session.collection:
                raise UsageError(f"roundtable '{session_id}' searches collection '{saved.collection}', not "
                                 f"'{self.session.collection}'")
            live = self.live[session_id] = LiveRoundtable(
                Roundtable(saved, self._runtime(saved.source), self.files))
        return live

    def status(self, session_id: str) -> dict[str, Any]:
        live = self.get(session_id)
        return {**session_summary(live.table.session), "state": live.state, "error": live.error}

    def events(self, session_id: str, since: int = 0) -> dict[str, Any]:
        live = self.get(session_id)
        return {**self.status(session_id), "events": live.events[since:], "next": len(live.events)}

    async def stream(self, session_id: str, since: int = 0, keepalive_s: float = 15.0) -> AsyncIterator[dict | None]:
        """`events` as they happen: the first answer at once, then one each time events come or the state
        changes; None after `keepalive_s` of quiet (the stream says it is alive). Ends when the reader goes."""
        live = self.get(session_id)
        last = None
        while True:
            got = self.events(session_id, since)
            seen = (got["next"], got["state"], got["error"])
            if seen != last:
                yield got
                last, since = seen, got["next"]
            waited = asyncio.get_running_loop().time()
            await live.wait_change(keepalive_s)
            if asyncio.get_running_loop().time() - waited >= keepalive_s:
                yield None

    def mindmap(self, session_id: str) -> dict[str, Any]:
        root = self.get(session_id).table.session.mindmap
        return {"id": session_id, "tree": tree_json(root), "text": mindmap_text(root)}

    async def report(self, session_id: str) -> dict[str, Any]:
        live = self.get(session_id)
        async with live.lock:
            path = await report_of(live.table)
        return {"id": session_id, "path": str(path), "report": path.read_text(encoding="utf-8")}

    def list(self) -> list[dict[str, Any]]:
        out = []
        for session_id in self.files.list():
            if session_id in self.live:
                out.append(self.status(session_id))
                continue
            try:
                saved = self.files.load_id(session_id)
            except RaystormError:  # damaged: resuming it says why
                continue
            if saved.collection == self.session.collection:
                out.append({**session_summary(saved), "state": "saved", "error": None})
        return out

    def source(self, session_id: str, turn: int | None = None, n: int | None = None,
               point: str | None = None) -> dict[str, Any]:
        """A cited snippet's lines in their file, as the report page shows a citation: by the turn and its
        [n], or by the mind map's snippet id (`point`)."""
        from agents.wiki.claims import read_lines
        from retrieval.documents import sha256_text

        session = self.get(session_id).table.session
        snip = _snippet(session, turn, n, point)
        if snip.path not in self._served():
            raise UsageError(f"{snip.path} is not a file of collection '{self.session.collection}'")
        lines = read_lines(snip.path, snip.part) or []
        first, last = max(1, snip.line_start - LINES_AROUND), min(len(lines), snip.line_end + LINES_AROUND)
        now = "\n".join(lines[snip.line_start - 1: snip.line_end])
        return {"title": snip.title, "url": snip.url, "snippets": [{
            "path": snip.path, "title": snip.title, "url": snip.url, "part": snip.part.label() if snip.part else None,
            "line_start": snip.line_start, "line_end": snip.line_end, "first": first, "lines": lines[first - 1: last],
            "check": "ok" if snip.text in now or sha256_text(now) == sha256_text(snip.text) else "stale",
            "status": None}]}


def _snippet(session, turn: int | None, n: int | None, point: str | None) -> Snippet:
    if point:
        found = next((s for s in session.mindmap.all_snippets() if s.point_id == point), None)
        if found is None:
            raise UsageError(f"the mind map of '{session.id}' holds no snippet {point}")
        return found
    if turn is None or n is None or not 1 <= turn <= len(session.utterances):
        raise UsageError("give turn and n (a citation [n] of that turn), or point (a mind-map snippet)")
    said = session.utterances[turn - 1]
    if n not in said.cited:
        raise UsageError(f"turn {turn} has no citation [{n}]")
    return said.sources[n - 1]
