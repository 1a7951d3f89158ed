"""`raystorm roundtable "TOPIC" -c NAME`: a Co-STORM roundtable you take part in, saved after every turn.

At each `you>` prompt: type a message to steer the discussion, press Enter to let it go on, or type /map (the
mind map), /report (write report.md now), /quit. `--turns N --observe` runs N turns with nobody at the keyboard
(a simulated user steers after every `--user-every M` turns without the user);
`--resume SESSION` continues a saved session; `--report` writes report.md at the end.
"""

from __future__ import annotations

import argparse
import json
import sys

from cluster.commands.common import add_store_arguments, collection_name, count, info, place_of, run_async, \
    store_settings

MAX_TURNS = 200
USER_EVERY = 3  # --observe: the simulated user speaks after this many turns without the user
COMMANDS = "Enter: let it go on; a message: steer it; /map: the mind map; /report: write the report; /quit"


def register(sub: argparse._SubParsersAction) -> None:
    from agents.lm.arguments import add_llm_arguments
    from agents.lm.settings import ROUNDTABLE_ROLES
    from cluster.commands.sources import add_source_arguments
    from cluster.distributed_args import add_cluster_arguments

    p = sub.add_parser(
        "roundtable", help="a roundtable discussion you take part in (Co-STORM), with a live mind map",
        description="A warm start picks the first experts and seeds the mind map; then experts take turns "
                    "answering from the collection with citations, a moderator asks about what was retrieved "
                    "but not yet used, and you may steer at any turn. Every cited snippet is filed under a "
                    "concept of the mind map, which becomes report.md. The session is saved after every turn "
                    f"in $RAYSTORM_HOME/roundtables/<id>/. Interactive: {COMMANDS}.",
        epilog="example: raystorm roundtable \"flood coverage\" -c example --turns 6 --observe --report; "
               f"per-role models: --role-llm ROLE=SPEC with ROLE one of {', '.join(ROUNDTABLE_ROLES)}")
    p.add_argument("topic", nargs="?", help="the topic (not with --resume)")
    p.add_argument("--collection", "-c", type=collection_name,
                   help="the ingested collection the experts search (with --source web: not needed)")
    p.add_argument("--resume", metavar="SESSION", help="continue a saved session (its id, folder or session.json)")
    p.add_argument("--turns", type=count(0, MAX_TURNS), metavar="N",
                   help="turns to run (with --observe: required; interactive: stop after N)")
    p.add_argument("--observe", action="store_true",
                   help="nobody at the keyboard: the roundtable goes on by itself, a simulated user steering "
                        "now and then")
    p.add_argument("--user-every", type=count(0, MAX_TURNS), metavar="M",
                   help="with --observe: the simulated user speaks after every M turns without the user, asking "
                        "about the mind map's least-covered concept or a passage just cited (default 3; 0: never)")
    p.add_argument("--report", action="store_true", help="write report.md from the mind map at the end")
    p.add_argument("--json", action="store_true", help="one JSON object per turn on stdout")
    t = p.add_argument_group("turn policy and mind map (a new session; a resumed one keeps its own)")
    t.add_argument("--moderator-after", type=count(1, 20), default=2, metavar="N",
                   help="expert turns in a row before the moderator asks from unused information (default 2)")
    t.add_argument("--split-above", type=count(2, 100), default=4, metavar="K",
                   help="a mind-map concept holding more snippets than K is split into sub-concepts (default 4)")
    t.add_argument("--max-experts", type=count(1, 8), default=3, metavar="N", help="experts at the table (default 3)")
    t.add_argument("--search-k", type=count(1, 50), default=6, metavar="K", help="passages per search (default 6)")
    add_source_arguments(p)
    add_llm_arguments(p)
    add_cluster_arguments(p)
    add_store_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from retrieval.errors import UsageError

    if args.resume and args.topic:
        raise UsageError("give a TOPIC for a new roundtable or --resume SESSION, not both")
    if not args.resume and not (args.topic and args.topic.strip()):
        raise UsageError("no topic: give TOPIC (with -c NAME or --source web), or --resume SESSION")
    if args.observe and args.turns is None:
        raise UsageError("--observe runs a fixed number of turns: add --turns N")
    if args.user_every is not None and not args.observe:
        raise UsageError("--user-every M sets when the simulated user of --observe speaks; at the keyboard you do")
    return run_async(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from agents.lm.arguments import settings_from_args
    from agents.roundtable.records import RoundtableOptions
    from cluster.roundtables import report_of, resume_roundtable, session_files, start_roundtable, turns_on
    from retrieval.errors import UsageError

    from cluster.commands.sources import source_of, web_source

    settings = store_settings(args)
    llm = settings_from_args(args)
    files = session_files(settings)
    session = files.load(args.resume) if args.resume else None
    if session is not None and args.source and args.source != session.source:
        raise UsageError(f"session {session.id} searches --source {session.source}; resume it with that")
    source = session.source if session else source_of(args, bool(args.collection))
    web = web_source(args) if source != "corpus" else None  # a missing engine or key: refused before any work
    collection = session.collection if session else args.collection or web.collection
    async with turns_on(args, settings, collection, llm, source, web) as turns:
        if turns.notice and not args.json:
            info(turns.notice)
        if getattr(turns, "placement", ""):
            info(f"turns run on the cluster's expert actors: {turns.placement}")
        def listener(event) -> None:
            _show(event, args.json)

        if session is not None:
            table = resume_roundtable(session.id, turns.runtime, files, listener)
            info(f"resumed '{table.session.topic}' ({table.session.id}): {table.session.turns} turns so far")
        else:
            options = RoundtableOptions(moderator_after=args.moderator_after, split_above=args.split_above,
                                        max_experts=args.max_experts, search_k=args.search_k)
            topic = " ".join(args.topic.split())
            where = f"'{collection}'" if source == "corpus" else "the web" if source == "web" else f"'{collection}' and the web"
            info(f"warm start on '{topic}' over {where} ...")
            table = await start_roundtable(topic, collection, turns.runtime, files, options, listener, source)
            info(f"session {table.session.id}; experts: {', '.join(p.name for p in table.session.experts)}")
        if args.observe:
            for _ in range(args.turns):
                await table.observe(USER_EVERY if args.user_every is None else args.user_every)
        else:
            await _converse(table, args.turns)
        if args.report:
            _wrote(await report_of(table))
        info(f"saved: {files.folder(table.session.id) / 'session.json'} (resume: raystorm roundtable --resume "
             f"{table.session.id})")
    return 0


async def _converse(table, limit: int | None) -> None:
    from agents.roundtable.mindmap import mindmap_text
    from cluster.roundtables import report_of

    if sys.stdin.isatty():
        info(COMMANDS)
    taken = 0
    while limit is None or taken < limit:
        try:
            line = input("you> " if sys.stdin.isatty() else "").strip()
        except EOFError:
            return
        if line in ("/quit", "/exit"):
            return
        if line == "/map":
            print(mindmap_text(table.session.mindmap), flush=True)
            continue
        if line == "/report":
            _wrote(await report_of(table))
            continue
        await table.step(line or None)
        taken += 1


def _wrote(path) -> None:
    info(f"report: {path} (check its citations: raystorm wiki check {path.parent})")


def _show(event, as_json: bool) -> None:
    if event.kind != "utterance":
        return
    u = event.utterance
    if as_json:
        print(json.dumps(u.model_dump(mode="json"), ensure_ascii=False), flush=True)
        return
    tag = " (warm start)" if u.warm_start else ""
    print(f"[{u.turn}] {u.speaker}{tag}: {u.text}")
    for n in u.cited:
        s = u.sources[n - 1]
        print(f"    [{n}] {s.title} ({place_of(s.url, s.path, s.line_start, s.line_end, s.part)})")
    sys.stdout.flush()
