"""Research prefers what is current: `ask --json` marks each cited passage's status and answers with the
value in force; the example report states the superseded waiting period and deductible only as history."""

from __future__ import annotations

import json
import re

from agents.lm.text.sentences import sentences
from agents.storm.citations import cited_numbers
from agents.wiki.check import check_folder
from cluster.cli import main
from retrieval.graph.current import is_history


def _data_dir(ws) -> str:
    return ws.settings.data_dir


def test_ask_json_marks_status_and_gives_the_value_in_force(example, capsys):
    ws, _ = example
    ws.store.close()  # the CLI opens the embedded store itself
    capsys.readouterr()
    assert main(["ask", "What is the current waiting period for the Flood Rider?", "-c", "hb", "--strategy",
                 "chain", "--json", "--data-dir", _data_dir(ws)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert "14 days" in answer["answer"]
    assert answer["citations"] and all(c["status"]["state"] in ("current", "superseded", "amended")
                                       for c in answer["citations"])
    for s in sentences(answer["answer"]):
        assert "30 days" not in s or is_history(s)
    capsys.readouterr()
    assert main(["ask", "What was the flood rider waiting period under Bulletin 2021-04?", "-c", "hb",
                 "--strategy", "chain", "--json", "--data-dir", _data_dir(ws)]) == 0
    history = json.loads(capsys.readouterr().out)
    old = [c for c in history["citations"] if c["source"].endswith("/bulletins/2021-04") and c["line_start"] == 33]
    assert old and old[0]["status"]["state"] == "superseded"
    assert old[0]["status"]["by"] == ["https://docs.harborline.example/bulletins/2022-11"]
    assert "Until January 1, 2023 (Bulletin 2021-04, superseded by Bulletin 2022-11)" in history["answer"]


def test_example_report_states_the_rules_in_force_and_their_history_only_as_history(example, tmp_path):
    ws, _ = example
    ws.store.close()
    out = tmp_path / "runs"
    assert main(["report", "Harborline Mutual flood coverage", "-c", "hb", "--out", str(out),
                 "--data-dir", _data_dir(ws)]) == 0
    topic = next(out.iterdir())
    report = (topic / "report.md").read_text()
    body = report.split("## References")[0]
    for s in sentences(body):
        if re.search(r"\b30 days after the date the rider\b|\$1,500", s):
            assert is_history(s), s  # the replaced rule only ever as history
    assert "$1,500 per flood event" not in body or "superseded by Bulletin 2022-11" in body
    # and the values in force are stated, cited to the bulletin that set them
    references = dict(re.findall(r"^\[(\d+)\] ([^\n]+)", report.split("## References")[1], re.M))

    def stated_from_2022_11(value: str) -> bool:
        return any(references.get(str(n), "").startswith("Bulletin 2022-11")
                   for s in sentences(body) if value in s and not is_history(s) for n in cited_numbers(s))

    assert stated_from_2022_11("$2,000 per flood event") and stated_from_2022_11("14 days")
    # report.md's sidecar: every statement pinned to its lines, all holding today
    counts = check_folder(topic).counts
    assert counts["ok"] > 5 and counts["stale"] == counts["unresolved"] == 0
