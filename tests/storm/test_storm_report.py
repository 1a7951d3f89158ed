"""The whole STORM pipeline with the extractive model on the bundled example corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agents.lm.errors import ModelOutputError
from agents.storm.artifacts import CALL_HISTORY, FILES, RunFiles
from agents.storm.outline import parse_outline
from agents.storm.steps_outline import RefineOutline
from storm_support import FLOOD, Parts
from agents.storm.checkpoints import StageFailed
from retrieval.graph.current import without_history

CITED = re.compile(r"([^\[\]]+?)((?:\[\d+\])+)")
# The only things in any artifact that vary between runs: each call's id, start time and latency in
# llm_call_history.jsonl, and so the order of its lines (concurrent calls interleave).
TIMING = ("call_id", "started_at", "latency_s")


@pytest.fixture(scope="module")
def flood_run(tmp_path_factory, example_corpus, example_retriever, nlp):
    parts = Parts(example_corpus, example_retriever, nlp)
    out = tmp_path_factory.mktemp("flood-a")
    lines: list[tuple[str, str, str]] = []
    summary = parts.report(FLOOD, out, parts.extractive(), progress=lambda e: lines.append((e.topic, e.stage, e.text())))
    return summary, RunFiles(out, FLOOD), lines, parts


def _artifacts(files: RunFiles) -> dict[str, str]:
    out = {}
    for path in sorted(files.dir.iterdir()):
        text = path.read_text(encoding="utf-8")
        if path.name == CALL_HISTORY:
            rows = [json.loads(line) for line in text.splitlines()]
            text = "\n".join(sorted(json.dumps({k: v for k, v in r.items() if k not in TIMING}, sort_keys=True)
                                    for r in rows))
        out[path.name] = text
    return out


def test_report_has_every_storm_file_and_reads_as_a_report(flood_run):
    summary, files, lines, _ = flood_run
    names = {p.name for p in files.dir.iterdir()}
    assert {n for stage in FILES.values() for n in stage} | {CALL_HISTORY} <= names
    assert summary.relevant and summary.personas >= 2 and summary.sections >= 3 and summary.citations >= 3
    report = files.path("report.md").read_text()
    assert report.startswith(f"# {FLOOD}\n\n") and "\n## References\n" in report
    assert "flood" in report.split("## References")[0].lower()
    stages = [stage for _, stage, _ in lines]
    assert stages.index("personas") < stages.index("conversations") < stages.index("outline") < stages.index("polish")
    assert any(stage == "conversations" and "done" in detail for _, stage, detail in lines)


def test_every_citation_points_at_a_source_line_range_holding_the_sentence(flood_run):
    _, files, _, _ = flood_run
    report = files.path("report.md").read_text()
    body, refs = report.split("\n## References\n")
    citations = {c["index"]: c for c in json.loads(files.path("url_to_info.json").read_text())["citations"]}
    listed = {int(n) for n in re.findall(r"(?m)^\[(\d+)\] ", refs)}
    checked = 0
    for paragraph in body.split("\n\n"):
        if paragraph.startswith("#"):
            continue
        for sentence, markers in CITED.findall(paragraph):
            sentence = without_history(sentence.strip())  # a superseded rule is copied framed as history
            for n in map(int, re.findall(r"\d+", markers)):
                assert n in listed, f"[{n}] is not in the References"
                sources = citations[n]["snippets"]
                texts = ["\n".join(Path(s["path"]).read_text().splitlines()[s["line_start"] - 1:s["line_end"]])
                         for s in sources]
                assert any(sentence in t for t in texts), f"[{n}] does not contain: {sentence!r}"
                checked += 1
    assert checked >= 5
    assert listed == {int(n) for n in re.findall(r"\[(\d+)\]", body)}  # nothing listed that is not cited


def test_outline_first_level_headings_are_the_report_sections(flood_run):
    _, files, _, _ = flood_run
    outline = parse_outline(files.path("storm_gen_outline.txt").read_text())
    report = files.path("report.md").read_text()
    sections = [h for h in re.findall(r"(?m)^## (.+)$", report) if h != "References"]
    assert sections == [s.heading for s in outline.sections]
    assert not {"References", "See also", "Summary"} & set(sections)


def test_no_sentence_is_printed_twice_in_the_sections(flood_run):
    """What `polish` promises: no section says a sentence another says. The lead is not held to it: it
    sums up the sections, and the extractive lead takes their own sentences (`tests/storm/test_lead.py`)."""
    _, files, _, parts = flood_run
    body = files.path("report.md").read_text().split("\n## References\n")[0]
    sections = body.split("\n## ", 1)[1]  # past the title and the lead
    sentences = [s.strip() for s, _ in CITED.findall(re.sub(r"(?m)^## .*$", "", sections))]
    assert len(sentences) > 10 and len(sentences) == len(set(sentences))


def test_two_runs_write_identical_artifacts(flood_run, tmp_path):
    _, files, _, parts = flood_run
    again = tmp_path / "flood-b"
    parts.report(FLOOD, again, parts.extractive())
    assert _artifacts(RunFiles(again, FLOOD)) == _artifacts(files)


def test_a_topic_the_corpus_knows_nothing_of_gets_a_short_honest_report(parts, tmp_path):
    summary = parts.report("Volcanic eruptions on Io", tmp_path, parts.extractive())
    files = RunFiles(tmp_path, "Volcanic eruptions on Io")
    report = files.path("report.md").read_text()
    assert not summary.relevant and summary.sections == 0 and summary.citations == 0
    assert "Nothing about this topic was found" in report and "[" not in report
    assert files.path("storm_gen_outline.txt").read_text() == ""


class FailingOutline:
    """The extractive model, except that the refined outline fails as a chat model's would."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.ledger = inner.ledger

    async def run(self, step, inp):
        if step is RefineOutline:
            raise ModelOutputError(step.name, step.role, "flaky", "the reply was empty", "")
        return await self.inner.run(step, inp)


def test_a_failed_stage_is_named_keeps_what_was_done_and_a_rerun_resumes(flood_run, tmp_path):
    _, reference, _, parts = flood_run
    with pytest.raises(StageFailed) as failed:
        parts.report(FLOOD, tmp_path, FailingOutline(parts.extractive()))
    assert failed.value.stage == "outline" and "rerun to resume" in str(failed.value)
    files = RunFiles(tmp_path, FLOOD)
    assert files.done("personas") and files.done("conversations") and not files.done("outline")
    assert not files.path("report.md").exists() and files.path(CALL_HISTORY).exists()

    summary = parts.report(FLOOD, tmp_path, parts.extractive())
    assert summary.reused == ["personas", "conversations"]
    assert files.path("report.md").read_text() == reference.path("report.md").read_text()

    again = parts.report(FLOOD, tmp_path, parts.extractive())
    assert again.reused == ["personas", "conversations", "outline", "article", "polish"]
    forced = parts.report(FLOOD, tmp_path, parts.extractive(), force=True)
    assert forced.reused == []


def test_a_failed_stage_says_how_to_resume_once():
    endpoint_down = "still failing after 2 attempts; finished stages are kept, so rerunning resumes"
    for reason, expected in (("the reply was empty.", 1), (endpoint_down, 0)):
        message = str(StageFailed("personas", reason, topic="Solar"))
        assert message.startswith("topic 'Solar', stage 'personas' failed: ")
        assert message.count("rerun to resume") == expected and message.count("resum") == 1
        assert ".." not in message
