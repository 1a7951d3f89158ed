"""`Roundtable`: the turn order of a Co-STORM discussion (the discourse manager), written once.

- warm start: STORM's perspectives pick the first experts; each takes `warm_start_turns` turns on its own
  questions, which seed the mind map;
- a turn: the user's message, when given, is put to the expert who fits it best (a new expert joins when none
  does) and that expert searches for it; else, after `moderator_after` expert turns in a row, the moderator asks
  from the unused-information pool (retrieved by some turn, cited by none); else the next expert answers the
  question pending (the moderator's) or raises its own;
- with nobody at the keyboard (`observe`), a simulated user speaks after every `user_every` turns without the
  user: its message (grounded in the discussion and the mind map) is put to the table as a typed one is;
- after every turn: the cited snippets go into the mind map, the pool is updated, the session is saved.

Every model call is a stage run through `runtime.stage(...)` (`agents.runtime.LocalRuntime` here, the cluster's
expert actors with `--distributed`), so where a turn runs is the runtime's choice alone.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from agents.roundtable import mindmap
from agents.roundtable.files import SessionFiles, new_session_id
from agents.roundtable.records import MindMapNode, RoundtableOptions, RoundtableSession, Utterance
from agents.roundtable.stages import (ExpertsArgs, ExpertTurnArgs, ModeratorArgs, UserArgs, WarmStartArgs,
                                      choose_experts, expert_turn, first_experts, moderator_turn, simulated_user)
from retrieval.errors import RaystormError

STAGE = "roundtable"
UNUSED_KEPT = 200  # passages in the unused-information pool at most


class TurnEvent(BaseModel):
    """What a face shows as it happens: a turn said, or the mind map changed."""

    kind: str  # "utterance" | "mindmap"
    utterance: Utterance | None = None
    mindmap: MindMapNode | None = None


Listener = Callable[[TurnEvent], None]


class NothingFound(RaystormError):
    def __init__(self, topic: str, collection: str):
        super().__init__(f"nothing about '{topic}' was found in '{collection}': choose a topic the sources cover, "
                         f"or another collection")


class Roundtable:
    """One session and the runtime its turns run on; `files` saves it after every turn (None: not saved)."""

    def __init__(self, session: RoundtableSession, runtime, files: SessionFiles | None = None,
                 listener: Listener | None = None):
        self.session = session
        self.runtime = runtime
        self.files = files
        self.listener = listener

    @classmethod
    async def start(cls, topic: str, collection: str, runtime, *, options: RoundtableOptions | None = None,
                    files: SessionFiles | None = None, listener: Listener | None = None,
                    session_id: str | None = None, source: str = "corpus") -> Roundtable:
        """A new session after its warm start."""
        table = cls.new(topic, collection, runtime, options=options, files=files, listener=listener, source=source)
        if session_id:
            table.session.id = session_id
        await table.warm_start()
        return table

    @classmethod
    def new(cls, topic: str, collection: str, runtime, *, options: RoundtableOptions | None = None,
            files: SessionFiles | None = None, listener: Listener | None = None, source: str = "corpus"
            ) -> Roundtable:
        """A session not started yet (its id known at once): `await warm_start()` next."""
        session = RoundtableSession(id=new_session_id(topic), topic=topic, collection=collection, source=source,
                                    options=options or RoundtableOptions(), mindmap=MindMapNode(id="root", concept=topic))
        return cls(session, runtime, files, listener)

    async def warm_start(self) -> None:
        s = self.session
        s.experts = await self.runtime.stage(STAGE, first_experts, WarmStartArgs(topic=s.topic,
                                                                                  max_experts=s.options.max_experts))
        if not s.experts:
            raise NothingFound(s.topic, s.collection)
        for _ in range(s.options.warm_start_turns):
            for expert in list(s.experts):
                await self._apply(await self._expert(expert, ""), warm_start=True)
        self._save()

    async def observe(self, user_every: int = 0) -> list[Utterance]:
        """One turn with nobody at the keyboard: the simulated user speaks after `user_every` turns without the
        user (0: never), else the table goes on."""
        if user_every and self.turns_since_user() >= user_every:
            s = self.session
            last = next((u for u in reversed(s.utterances) if u.role == "expert" and u.cited), None)
            message = await self.runtime.stage(STAGE, simulated_user, UserArgs(
                topic=s.topic, discussion=self._discussion(), concepts=mindmap.concept_views(s.mindmap),
                cited=last.cited_snippets() if last else [],
                asked=[u.text for u in s.utterances if u.simulated]))
            if message:
                return await self.step(message, simulated=True)
        return await self.step()

    def turns_since_user(self) -> int:
        """Turns since the user last spoke (or since the warm start)."""
        count = 0
        for u in reversed(self.session.utterances):
            if u.role == "user" or u.warm_start:
                break
            count += 1
        return count

    async def step(self, message: str | None = None, *, simulated: bool = False) -> list[Utterance]:
        """One turn (two when the user speaks: the message, then the expert's answer to it)."""
        s = self.session
        said: list[Utterance] = []
        message = " ".join((message or "").split())
        if message:
            said.append(await self._apply(Utterance(role="user", speaker="You (simulated)" if simulated else "You",
                                                    text=message, focus=message, simulated=simulated)))
            await self._seat_for(message)
            said.append(await self._apply(await self._expert(s.experts[0], message)))
        elif s.expert_streak >= s.options.moderator_after and s.unused:
            asked = await self.runtime.stage(STAGE, moderator_turn, ModeratorArgs(
                topic=s.topic, discussion=self._discussion(), unused=list(reversed(s.unused))))
            said.append(await self._apply(asked))
            await self._seat_for(asked.focus)
        else:
            pending = s.pending_question()
            if pending:
                expert = s.experts[0]
            else:
                expert = s.experts[s.next_expert % len(s.experts)]
                s.next_expert += 1
            said.append(await self._apply(await self._expert(expert, pending)))
        self._save()
        return said

    async def _seat_for(self, focus: str) -> None:
        """The expert list for a new focus, the one to answer it first."""
        s = self.session
        s.experts = await self.runtime.stage(STAGE, choose_experts, ExpertsArgs(
            topic=s.topic, focus=focus, experts=s.experts, max_experts=s.options.max_experts))

    async def _expert(self, expert, focus: str) -> Utterance:
        s = self.session
        said = await self.runtime.stage(STAGE, expert_turn, ExpertTurnArgs(
            topic=s.topic, expert=expert, focus=focus, discussion=self._discussion(),
            asked=s.asked.get(expert.name, []), search_k=s.options.search_k))
        if not focus:  # its own question: not raised again
            s.asked.setdefault(expert.name, []).append(said.focus)
        return said

    def _discussion(self) -> list[str]:
        return [u.line() for u in self.session.utterances]

    async def _apply(self, utterance: Utterance, warm_start: bool = False) -> Utterance:
        """The turn joins the session: streak, pool, mind map; listeners hear of it."""
        s = self.session
        utterance = utterance.model_copy(update={"turn": len(s.utterances) + 1, "warm_start": warm_start})
        s.utterances.append(utterance)
        if utterance.role == "expert":
            s.expert_streak = 0 if warm_start else s.expert_streak + 1
        else:
            s.expert_streak = 0
        cited = s.cited_ids()
        pooled = {x.point_id for x in s.unused}
        s.unused = [x for x in s.unused if x.point_id not in cited]
        s.unused += [x for x in utterance.sources if x.point_id not in cited and x.point_id not in pooled]
        s.unused = s.unused[-UNUSED_KEPT:]  # the oldest go first: the moderator reads the most recent
        self._tell(TurnEvent(kind="utterance", utterance=utterance))
        changed = False
        for snippet in utterance.cited_snippets():
            if mindmap.holder_of(s.mindmap, snippet.point_id) is None:
                await mindmap.insert(s, snippet, self.runtime)
                changed = True
        if changed:
            self._tell(TurnEvent(kind="mindmap", mindmap=s.mindmap))
        return utterance

    def _tell(self, event: TurnEvent) -> None:
        if self.listener is not None:
            self.listener(event)

    def _save(self) -> None:
        if self.files is not None:
            self.files.save(self.session)
