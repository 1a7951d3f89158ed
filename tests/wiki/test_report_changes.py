"""What changed since the last run, as a user meets it: the bundled corpus copied, a report written, one
cited line edited and one bulletin superseded in part by a newer one, the topic reported again into the
same folder; changes.md (and `raystorm diff` of two kept runs) must list exactly those two changes."""

from __future__ import annotations

import json
import shutil

from test_cli_errors import EXAMPLE_DIR, raystorm

TOPIC = "Harborline Mutual flood coverage"
EDITED = "flood-claims-handling-memo.md"
SENTENCE = "Measure and photograph the high-water line in every affected room."
NEWER = """---
title: "Bulletin 2025-02: Renters Deductible"
url: https://docs.harborline.example/bulletins/2025-02
---
# Bulletin 2025-02: Renters Deductible

**Issued:** February 3, 2025
**Effective:** May 1, 2025
**Applies to:** form RP-1
**Supersedes:** Section 6 of Bulletin 2021-04

## Rule 1. Renters deductible

The base deductible for form RP-1 is $750 per occurrence.
"""


def test_a_rerun_lists_the_edited_claim_and_the_newly_superseded_bulletin(tmp_path):
    shutil.copytree(EXAMPLE_DIR, tmp_path / "corpus")
    report = ["report", TOPIC, "--corpus", "corpus", "--out", "runs"]
    done = raystorm(tmp_path, *report)
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "runs" / TOPIC.replace(" ", "_")
    assert not (run / "changes.md").exists()  # a first run has nothing to compare with
    shutil.copytree(run, tmp_path / "first")

    # one line the report cites (a line holding only that sentence), edited in place; the 2021 schedule
    # superseded in part, in a section the report does not cite
    claims = json.loads((run / "report.claims.json").read_text())["claims"]
    cited = next(c for c in claims if c["text"] == SENTENCE)
    assert cited["evidence"][0]["path"].endswith(EDITED)
    line_no = cited["evidence"][0]["line_start"]
    lines = (tmp_path / "corpus" / EDITED).read_text().splitlines(keepends=True)
    assert lines[line_no - 1].strip() == f"1. {SENTENCE}"
    lines[line_no - 1] = lines[line_no - 1].replace("affected room.", "affected room and hallway.")
    (tmp_path / "corpus" / EDITED).write_text("".join(lines))
    (tmp_path / "corpus" / "bulletin-2025-02-renters-deductible.md").write_text(NEWER)

    done = raystorm(tmp_path, *report)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "what changed since the previous run" in done.stderr
    changes = json.loads((run / "changes.json").read_text())
    (changed,) = changes["claims"]  # nothing new, nothing gone: only the claim whose line was edited
    assert changed["kind"] == "changed" and changed["before"]["text"] == cited["text"]
    assert changed["after"]["text"].endswith("and hallway.")
    assert changed["before"]["places"] == changed["after"]["places"] == [f"{EDITED}, line {line_no}"]
    (superseded,) = changes["superseded"]
    assert superseded["title"].startswith("Bulletin 2021-04")
    (by,) = superseded["by"]
    assert by["title"] == "Bulletin 2025-02: Renters Deductible" and by["scope"] == "Section 6. Renters deductible"
    assert by["where"] == "bulletin-2025-02-renters-deductible.md, line 10"
    md = (run / "changes.md").read_text()
    assert "0 claims new, 0 gone, 1 with changed cited lines; 1 cited sources superseded" in md
    assert md.count("\n- ") == 2  # the two changes, each one line with both citations
    # `raystorm wiki check` reads this run's claims, not the kept earlier ones as a second report
    check = raystorm(tmp_path, "wiki", "check", str(run), "--json")
    assert {c["sidecar"] for c in json.loads(check.stdout)["claims"]} == {str(run / "report.claims.json")}

    # `raystorm diff` of the first run (kept aside) and the second says the same
    done = raystorm(tmp_path, "diff", "first", str(run), "--out", "diff.md")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "diff.md").read_text().split("\n", 3)[3] == md.split("\n", 3)[3]


def test_diff_of_a_folder_without_claims_is_one_line(tmp_path):
    (tmp_path / "a").mkdir()
    done = raystorm(tmp_path, "diff", "a", "a")
    assert done.returncode == 1 and "has no report.claims.json" in done.stderr and "Traceback" not in done.stderr
