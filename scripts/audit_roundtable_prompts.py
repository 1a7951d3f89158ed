#!/usr/bin/env python3
"""What each role of a roundtable is given: every chat request of a Co-STORM roundtable, recorded and shown.

The bundled corpus is ingested into a temp data dir, then `raystorm roundtable TOPIC --turns N --observe
--user-every M --report` runs with a chat model served by the loopback endpoint (`tests/support/llm_endpoint.py`, every
request body recorded; its replies are built from the prompt's own passages). The recorded prompts are
grouped by step and role (expert, moderator, mindmap, report, user), one example of each is printed, and each
role is checked for the inputs Co-STORM's own prompts carry:

- expert (`roundtable.expert.*`): the discussion so far (its earlier turns) and, for the answer, the
  numbered passages it retrieved;
- moderator (`roundtable.moderator.ask`): the discussion so far and the unused information (passages
  retrieved but not cited), numbered;
- mind-map organiser (`roundtable.mindmap.*`): the tree (its concepts with ids) and the snippet to place, or
  the concept's snippets to split;
- report (`roundtable.report.concept`): the concept's path in the tree and its snippets;
- the simulated user (`roundtable.user.ask`, with nobody at the keyboard): the discussion so far and the mind
  map (its concepts with how many snippets each holds).

It ends with one JSON line: {"requests", "by_role", "expert_discussion", "expert_first_turn_prompts", "expert_sources",
"moderator_unused", "moderator_discussion", "organiser_tree", "report_snippets", "user_discussion", "user_mindmap"}
(each check: the share of that role's prompts that carry the input).

    python -m scripts.audit_roundtable_prompts
    python -m scripts.audit_roundtable_prompts --turns 8 --user-every 2 --topic "flood claims" --show 2000
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from tests.support.llm_endpoint import start_endpoint

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "retrieval" / "example_corpus"
ROLES = {"roundtable_expert": "expert", "roundtable_moderator": "moderator", "roundtable_mindmap": "mindmap",
         "roundtable_report": "report", "roundtable_user": "user (simulated)",
         "storm_perspectives": "moderator (warm start)"}
_DOC = re.compile(r"<document>")
_PRIOR_TURN = re.compile(r"^- .+? \((?:expert|moderator|user)\): ", re.MULTILINE)
_CONCEPT = re.compile(r"^\s*- .+ \(\d+ snippets\)$", re.MULTILINE)


def user_text(body: dict) -> str:
    return "\n".join(m["content"] for m in body.get("messages") or []
                     if m.get("role") == "user" and isinstance(m.get("content"), str))


def step_of(body: dict) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name") or "(text mode)"


def role_of(step: str) -> str:
    return next((role for prefix, role in ROLES.items() if step.startswith(prefix)), "other")


def share(prompts: list[str], test) -> float | None:
    return round(sum(1 for p in prompts if test(p)) / len(prompts), 3) if prompts else None


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return done


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topic", default="Harborline Mutual flood coverage")
    parser.add_argument("--turns", type=int, default=6, help="turns after the warm start (default 6)")
    parser.add_argument("--user-every", type=int, default=3,
                        help="the simulated user speaks after every M turns without the user (default 3)")
    parser.add_argument("--show", type=int, default=1200, help="characters of each example prompt printed")
    parser.add_argument("--work", type=Path, help="keep the data dir and the recorded requests here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="audit-roundtable-"))
    home = work / "home"
    cli = [sys.executable, "-m", "cluster.cli"]
    run(cli + ["ingest", str(CORPUS), "-c", "example", "--data-dir", str(home), "-q"])
    bodies_path = work / "requests.jsonl"
    bodies_path.unlink(missing_ok=True)
    # nobody at the keyboard: the simulated user steers every --user-every turns, and experts answer it
    with start_endpoint(bodies_path=bodies_path, log_path=work / "requests.log") as endpoint:
        done = subprocess.run(cli + ["roundtable", args.topic, "-c", "example", "--data-dir", str(home),
                                     "--turns", str(args.turns), "--observe", "--user-every", str(args.user_every),
                                     "--report", "--llm", "standin", "--llm-base-url", endpoint.url, "--no-llm-cache"],
                              capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"the roundtable failed ({done.returncode}):\n{done.stderr[-3000:]}")
    bodies = [json.loads(x)["body"] for x in bodies_path.read_text(encoding="utf-8").splitlines() if x.strip()]
    by_step: dict[str, list[str]] = defaultdict(list)
    for body in bodies:
        by_step[step_of(body)].append(user_text(body))
    print(f"{len(bodies)} requests; work dir {work}\n")
    for step in sorted(by_step, key=lambda s: (role_of(s), s)):
        prompts = by_step[step]
        richest = max(prompts, key=len)
        print(f"=== {role_of(step)} · {step} · {len(prompts)} requests; the longest prompt:")
        print(richest[: args.show] + (" […]" if len(richest) > args.show else ""))
        print()

    def of(prefix: str) -> list[str]:
        return [p for s, ps in by_step.items() if s.startswith(prefix) for p in ps]

    answers, moderator, user = of("roundtable_expert_answer"), of("roundtable_moderator_ask"), of("roundtable_user")
    summary = {
        "requests": len(bodies),
        "by_role": dict(Counter(role_of(step_of(b)) for b in bodies)),
        # every expert prompt but the very first turn's carries the earlier turns ("- Name (role): ...")
        "expert_discussion": share([p for p in of("roundtable_expert") if "(nothing said yet)" not in p],
                                   lambda p: bool(_PRIOR_TURN.search(p))),
        "expert_first_turn_prompts": sum(1 for p in of("roundtable_expert") if "(nothing said yet)" in p),
        "expert_sources": share(answers, lambda p: bool(_DOC.search(p))),
        "moderator_unused": share(moderator, lambda p: "Unused information:" in p and bool(_DOC.search(
            p.split("Unused information:", 1)[1]))),
        "moderator_discussion": share(moderator, lambda p: bool(_PRIOR_TURN.search(p))),
        "organiser_tree": share(of("roundtable_mindmap_place"), lambda p: "Mind map:" in p and "New snippet:" in p),
        "report_snippets": share(of("roundtable_report"), lambda p: "Concept:" in p and bool(_DOC.search(p))),
        "user_discussion": share(user, lambda p: bool(_PRIOR_TURN.search(p))),
        "user_mindmap": share(user, lambda p: "Mind map:" in p and bool(_CONCEPT.search(p))),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
