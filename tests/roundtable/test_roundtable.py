"""A roundtable on the bundled corpus with the extractive model: turn policy, grounding, the mind map, resuming
in a fresh process, and the report from the tree."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agents.lm.settings import LLMSettings
from agents.roundtable.mindmap import mindmap_text
from agents.roundtable.records import RoundtableOptions, RoundtableSession
from agents.roundtable.report import tree_headings
from cluster.cli import main
from cluster.roundtables import report_of, session_files, start_roundtable, turns_here
from retrieval.query import SearchAsk, search_each

TOPIC = "Harborline Mutual flood coverage"
STEER = "What is the waiting period of the flood rider?"
OPTIONS = RoundtableOptions(moderator_after=2, split_above=3, max_experts=3, search_k=6)
USER_EVERY = 3  # --observe's simulated user speaks after this many turns without the user
# None: nobody types (--observe: the simulated user may speak); the typed steering message comes mid-way
SCRIPT = [None, None, None, None, STEER, None, None, None]


@pytest.fixture(scope="module")
def played(settings):
    """The session after the script, and each steered turn's own search results (searched again, same k)."""
    async def play():
        async with turns_here(settings, "example", LLMSettings()) as turns:
            table = await start_roundtable(TOPIC, "example", turns.runtime, session_files(settings), OPTIONS)
            for message in SCRIPT:
                await (table.step(message) if message else table.observe(USER_EVERY))
            answer = next(u for u in table.session.utterances if u.role == "expert" and u.focus == STEER)
            found = await search_each(turns.retriever, [SearchAsk(q, OPTIONS.search_k, None) for q in answer.queries])
            report = await report_of(table)
            return table.session, {h.passage.passage_id for hits in found for h in hits}, report
    return asyncio.run(play())


def test_moderator_asks_after_the_streak_from_unused_passages(played):
    session, _, _ = played
    turns = [u for u in session.utterances if not u.warm_start]
    assert any(u.role == "moderator" for u in turns)
    streak = 0
    for i, u in enumerate(turns):
        if streak >= OPTIONS.moderator_after and u.role != "user":
            assert u.role == "moderator", f"turn {u.turn} after {streak} expert turns is {u.role}'s"
        if u.role == "moderator":
            assert streak >= OPTIONS.moderator_after
            grounds = {s.point_id for s in u.cited_snippets()}
            assert grounds and u.text.rstrip().endswith("]")
            earlier = session.utterances[: u.turn - 1]
            cited_before = {s.point_id for x in earlier for s in x.cited_snippets()}
            retrieved_before = {s.point_id for x in earlier for s in x.sources}
            assert not grounds & cited_before, "the moderator's passage was cited before"
            assert grounds <= retrieved_before, "the moderator's passage was never retrieved"
            # the next expert answers the moderator's question, unless the user speaks first
            nxt = turns[i + 1] if i + 1 < len(turns) else None
            assert nxt is None or nxt.role == "user" or (nxt.role == "expert" and nxt.focus == u.focus)
        streak = streak + 1 if u.role == "expert" else 0


def test_the_turn_after_the_user_answers_it_from_a_search_for_it(played):
    session, searched, _ = played
    at = next(i for i, u in enumerate(session.utterances) if u.role == "user" and not u.simulated)
    assert session.utterances[at].text == STEER
    answer = session.utterances[at + 1]
    assert answer.role == "expert" and answer.focus == STEER and answer.cited
    assert any({"waiting", "period", "flood", "rider"} & set(q.lower().split()) for q in answer.queries)
    assert {s.passage_id for s in answer.cited_snippets()} <= searched
    assert re.search(r"waiting period", answer.text, re.IGNORECASE)


def test_with_nobody_typing_a_simulated_user_steers_at_the_cadence(played):
    """--observe: after every USER_EVERY turns without the user, the simulated user asks about the discussion
    (a concept of the mind map, or a passage an expert cited), and the next expert searches for its words."""
    session, _, _ = played
    turns = [u for u in session.utterances if not u.warm_start]
    simulated = [i for i, u in enumerate(turns) if u.simulated]
    assert len(simulated) >= 2 and all(turns[i].role == "user" for i in simulated)
    since = 0
    for i, u in enumerate(turns):
        if u.role == "user":
            assert since == USER_EVERY or not u.simulated, f"turn {u.turn}: simulated after {since} turns"
            since = 0
        else:
            assert since < USER_EVERY, f"turn {u.turn}: the simulated user did not speak after {since} turns"
            since += 1
    for i in simulated:
        message, answer = turns[i], turns[i + 1]
        assert message.speaker != "You" and message.text.endswith("?")
        assert answer.role == "expert" and answer.focus == message.text and answer.cited
        searched = {w for q in answer.queries for w in q.lower().split()}
        asked = {w for w in re.findall(r"[a-z]+", message.text.lower()) if len(w) > 3}
        assert len(asked & searched) >= 2, (message.text, answer.queries)
    # grounded: the first follows up a concept of the mind map, the second what a passage just cited says
    first, second = simulated[:2]
    concepts = [n.concept.lower() for n, d in session.mindmap.walk() if d > 0]
    assert any(f'"{c}"' in turns[first].text.lower() for c in concepts), turns[first].text
    assert turns[second].text.startswith("An expert cited "), turns[second].text
    about = [w.strip(" ?").lower() for w in turns[second].text.split(" about ", 1)[1].split(",")]
    cited = next(u for u in reversed(turns[:second]) if u.role == "expert" and u.cited).cited_snippets()
    assert any(all(w in s.text.lower() for w in about) for s in cited), (about, [s.text for s in cited])


def test_every_cited_snippet_sits_under_exactly_one_concept_and_a_full_one_was_split(played):
    session, _, _ = played
    cited = {s.point_id for u in session.utterances for s in u.cited_snippets()}
    placed = [s.point_id for s in session.mindmap.all_snippets()]
    assert sorted(placed) == sorted(cited)  # each once, nothing else
    assert not session.mindmap.snippets  # the root is the topic itself
    split = [n for n, d in session.mindmap.walk() if d > 0 and n.children]
    assert split, "no concept was split"
    assert all(len(s.all_snippets()) > OPTIONS.split_above for s in split)
    assert all(len(n.snippets) <= OPTIONS.split_above for n, _ in session.mindmap.walk())
    assert session.unused and not {s.point_id for s in session.unused} & cited


def test_the_report_follows_the_tree_and_its_citations_resolve(played):
    from agents.wiki.check import check_folder

    session, _, report = played
    text = report.read_text(encoding="utf-8")
    assert _headings(text) == tree_headings(session.mindmap)
    body, refs = text.split("\n## References\n")
    listed = {int(n) for n in re.findall(r"^\[(\d+)\] ", refs, re.MULTILINE)}
    assert {int(n) for n in re.findall(r"\[(\d+)\]", body)} == listed
    checked = check_folder(report.parent)
    assert checked.claims and checked.counts["ok"] == len(checked.claims)


def test_a_concept_that_holds_only_a_superseded_rule_reports_the_rule_in_force_first(settings, tmp_path):
    """The discussion filed only Bulletin 2021-04's 30 days (superseded by Bulletin 2022-11) under a concept: the
    report states 2022-11's 14 days, cited, before it (as a STORM report does)."""
    from agents.roundtable.records import MindMapNode
    from agents.roundtable.report import write_report
    from agents.wiki.check import check_folder
    from retrieval.graph.current import is_history
    from retrieval.snippets import Snippet

    async def go():
        async with turns_here(settings, "example", LLMSettings()) as turns:
            hits = await turns.retriever.search("Coverage under the Flood Rider begins 30 days after purchase", k=20)
            old = next(h.passage for h in hits if "30 days" in h.passage.text and is_history(h.passage.text))
            concept = MindMapNode(id="n1", concept="Flood rider waiting period", snippets=[Snippet.from_passage(old)])
            session = RoundtableSession(id="superseded", topic=TOPIC, collection="example",
                                        mindmap=MindMapNode(id="root", concept=TOPIC, children=[concept]))
            return await write_report(session, turns.runtime, tmp_path)

    report = asyncio.run(go())
    body, refs = report.read_text(encoding="utf-8").split("\n## References\n")
    assert "14 days" in body and body.index("14 days") < body.index("30 days"), body
    cited = re.search(r"14 days[^\[]*\[(\d+)\]", body).group(1)
    assert re.search(rf"^\[{cited}\] Bulletin 2022-11", refs, re.MULTILINE), refs
    checked = check_folder(report.parent)
    assert checked.claims and checked.counts["ok"] == len(checked.claims)


def test_the_session_resumes_in_a_fresh_process_with_the_same_tree(played, settings):
    session, _, _ = played
    folder = session_files(settings).folder(session.id)
    saved = RoundtableSession.model_validate_json((folder / "session.json").read_text(encoding="utf-8"))
    assert saved == session
    (folder / "report.md").unlink()
    # at the keyboard of a fresh process: show the map, let the table go on once, write the report, quit
    done = _cli(settings, "--resume", session.id, "--json", stdin="/map\n\n/report\n/quit\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    first_turn = next(i for i, line in enumerate(lines) if line.startswith("{"))
    assert "\n".join(lines[:first_turn]) == mindmap_text(session.mindmap)  # the tree it loaded is the saved one
    said = [json.loads(line) for line in lines[first_turn:]]
    assert said and said[0]["turn"] == session.turns + 1
    after = RoundtableSession.model_validate_json((folder / "session.json").read_text(encoding="utf-8"))
    assert after.utterances[: session.turns] == session.utterances
    before = {s.point_id for s in session.mindmap.all_snippets()}
    assert before <= {s.point_id for s in after.mindmap.all_snippets()}
    # the fresh process wrote the report from the tree it loaded and grew
    assert _headings((folder / "report.md").read_text(encoding="utf-8")) == tree_headings(after.mindmap)


def test_a_damaged_session_is_one_line(settings, tmp_path, capsys):
    bad = tmp_path / "cut" / "session.json"
    bad.parent.mkdir()
    bad.write_text('{"id": "cut", "topic": "x", "coll', encoding="utf-8")
    assert main(["roundtable", "--resume", str(bad.parent), "--turns", "1", "--observe", "--data-dir",
                 str(settings.data_dir)]) != 0
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "session.json" in err and "not valid JSON" in err
    # (and the simulated user's cadence without --observe, where a person types, is refused, not ignored)
    assert main(["roundtable", TOPIC, "-c", "example", "--user-every", "2", "--data-dir", str(settings.data_dir)]) != 0
    assert "--observe" in capsys.readouterr().err


def _cli(settings, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cluster.cli", "roundtable", *args, "--data-dir",
                           str(settings.data_dir)], input=stdin, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])


def _headings(markdown: str) -> list[tuple[int, str]]:
    found = [(len(m[1]), m[2].strip()) for m in re.finditer(r"^(#{2,6}) (.+)$", markdown, re.MULTILINE)]
    return [h for h in found if h != (2, "References")]


def test_on_the_cluster_the_turns_are_the_same(played, settings, ray_session, capsys):
    """--distributed (joining this session's Ray): every turn's stage runs on the Expert actors, searches on the
    Corpus actor; the extractive model's turns are the in-process ones, word for word and citation for citation."""
    session, _, _ = played
    capsys.readouterr()
    assert main(["roundtable", TOPIC, "-c", "example", "--turns", "1", "--observe", "--user-every", str(USER_EVERY),
                 "--json", "--distributed", "--experts", "1", "--moderator-after", str(OPTIONS.moderator_after),
                 "--split-above", str(OPTIONS.split_above), "--max-experts", str(OPTIONS.max_experts),
                 "--search-k", str(OPTIONS.search_k), "--data-dir", str(settings.data_dir)]) == 0
    out = capsys.readouterr()
    assert "expert actors" in out.err
    said = [json.loads(line) for line in out.out.splitlines()]
    assert said == [u.model_dump(mode="json") for u in session.utterances[: len(said)]]
    assert len(said) == sum(1 for u in session.utterances if u.warm_start) + 1


def test_the_mcp_tools(played, settings):
    """roundtable_start / _turn / _observe / _mindmap / _report through the MCP SDK's client, on the server `raystorm mcp`
    builds (in memory: the protocol without the stdio pipe)."""
    from mcp.shared.memory import create_connected_server_and_client_session

    from cluster.cli import build_parser
    from cluster.mcp_server import build_server
    from cluster.roundtable_hub import hub_of
    from cluster.session import session_of

    args = build_parser().parse_args(["mcp", "-c", "example", "--data-dir", str(settings.data_dir)])

    async def go():
        session = session_of(args).open()
        try:
            async with create_connected_server_and_client_session(build_server(session)) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                started = _result(await client.call_tool("roundtable_start", {"topic": TOPIC}))
                turn = _result(await client.call_tool("roundtable_turn", {"session_id": started["id"],
                                                                          "message": STEER}))
                # nobody typing for three turns, the simulated user asking after every two
                observed = _result(await client.call_tool("roundtable_observe", {"session_id": started["id"],
                                                                                  "turns": 3, "user_every": 2}))
                tree = _result(await client.call_tool("roundtable_mindmap", {"session_id": started["id"]}))
                report = _result(await client.call_tool("roundtable_report", {"session_id": started["id"]}))
                bad = await client.call_tool("roundtable_turn", {"session_id": "../../etc"})
            # a turn left running in the background (as the web page starts them) ends with the session
            await hub_of(session).turn(started["id"], None, wait=False)
            running = list(session._tasks)
        finally:
            await session.close()
        return names, started, turn, observed, tree, report, bad, running

    names, started, turn, observed, tree, report, bad, running = asyncio.run(go())
    assert running and all(t.cancelled() for t in running)
    assert {"roundtable_start", "roundtable_turn", "roundtable_observe", "roundtable_mindmap",
            "roundtable_report"} <= names
    assert started["experts"] and started["said"] and all(u["warm_start"] for u in started["said"])
    assert [u["role"] for u in turn["said"]] == ["user", "expert"] and turn["said"][1]["focus"] == STEER
    assert turn["said"][1]["cited"] and turn["turns"] == len(started["said"]) + 2
    # three turns with nobody typing: the simulated user asks once in them (the user's own message was one
    # turn back), an expert answers its question; every expert turn cites
    said = observed["said"]
    users = [n for n, u in enumerate(said) if u["role"] == "user"]
    assert observed["turns"] == turn["turns"] + len(said) and len(said) == 4, [u["role"] for u in said]
    assert len(users) == 1 and said[users[0]]["simulated"], said
    assert said[users[0] + 1]["role"] == "expert" and said[users[0] + 1]["focus"] == said[users[0]]["text"]
    assert all(u["cited"] for u in said if u["role"] == "expert")
    assert tree["tree"]["children"] and TOPIC in tree["text"]
    assert report["report"].startswith(f"# {TOPIC}") and "## References" in report["report"]
    assert bad.isError


def _result(reply):
    assert not reply.isError, reply.content
    return reply.structuredContent.get("result", reply.structuredContent)
