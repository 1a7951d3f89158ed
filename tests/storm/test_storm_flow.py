"""The report flow's own duties: whose model calls are whose, and checkpoints that hold only while
what they were made from holds (the corpus, the options, the topic)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

from storm_support import EXAMPLE_DIR, FLOOD

from agents.lm.usage import CURRENT_TOPIC, UsageLedger, UsageRecord
from agents.storm.artifacts import CALL_HISTORY, STAGES, RunFiles
from agents.storm.checkpoints import CHECKPOINTS
from cluster.cli import main
from retrieval.query import SearchFilter


def test_calls_made_at_once_for_two_topics_are_told_apart():
    ledger = UsageLedger()

    async def research(topic: str, calls: int) -> None:
        CURRENT_TOPIC.set(topic)  # as run_topic does, in its own task
        for _ in range(calls):
            ledger.record(UsageRecord(step="s", stage="article", model="m"))
            await asyncio.sleep(0)  # the other topic's calls interleave

    async def both() -> None:
        await asyncio.gather(research("a", 3), research("b", 5))

    asyncio.run(both())
    assert [len(ledger.of_topic(t).records) for t in ("a", "b")] == [3, 5]
    assert "topic" not in ledger.to_jsonl()  # the history file keeps its columns


def test_a_shared_model_still_gives_each_topic_only_its_own_history(parts, tmp_path):
    shared = parts.extractive()  # one ledger for both topics, as in `raystorm report --topics`
    for topic in (FLOOD, "Harborline Mutual cyber add-on"):
        parts.report(topic, tmp_path / "shared", shared, personas=1, turns=1)
        parts.report(topic, tmp_path / "alone", parts.extractive(), personas=1, turns=1)

        def steps(folder: str) -> list[str]:
            text = RunFiles(tmp_path / folder, topic).path(CALL_HISTORY).read_text()
            return sorted(json.loads(line)["step"] for line in text.splitlines())

        assert steps("shared") == steps("alone")


def _report(corpus: Path, out: Path, home: Path, capsys, *extra: str) -> tuple[list[str], str]:
    code = main(["report", FLOOD, "--corpus", str(corpus), "--out", str(out), "--data-dir", str(home),
                 "--personas", "1", "--turns", "2", *extra])
    printed = capsys.readouterr()
    assert code == 0, printed.err[-2000:]
    reused = re.search(r"\(reused: ([^)]*)\)", printed.out)
    return (reused.group(1).split(", ") if reused else []), (RunFiles(out, FLOOD).path("report.md")).read_text()


def test_an_edited_corpus_or_a_changed_option_redoes_what_depends_on_it(tmp_path, capsys):
    corpus, out, home = tmp_path / "corpus", tmp_path / "out", tmp_path / "home"
    shutil.copytree(EXAMPLE_DIR, corpus)
    first, report = _report(corpus, out, home, capsys)
    assert first == [] and "14 days" in report

    again, same = _report(corpus, out, home, capsys)
    assert again == list(STAGES) and same == report  # nothing changed: everything reused

    polished, _ = _report(corpus, out, home, capsys, "--no-polish")
    assert polished == list(STAGES[:-1])  # only the stage that reads the option is redone

    # the rule changes, and lines are inserted above it: every stage's evidence may have moved
    bulletin = corpus / "bulletin-2022-11-flood-rider-waiting-period.md"
    text = bulletin.read_text().replace("is 14 days from", "is 21 days from")
    bulletin.write_text(text.replace("## Background\n", "## Background\n\nA note added above.\n\nAnother.\n", 1))
    after, edited = _report(corpus, out, home, capsys, "--no-polish")
    assert after == []
    assert "14 days from the date of purchase" not in edited
    # the new rule is cited at the lines that now hold it
    lines = bulletin.read_text().splitlines()
    sentence = next(x for x in re.split(r"(?<=\])\s+", edited) if "21 days" in x)
    number = re.search(r"\[(\d+)\]", sentence).group(1)
    ref = re.search(rf"^\[{number}\] .*$", edited, flags=re.M).group(0)
    cited = "\n".join(line for start, end in _spans(ref) for line in lines[start - 1:end])
    assert "bulletin-2022-11" in ref and "21 days" in cited, ref
    assert json.loads(RunFiles(out, FLOOD).path(CHECKPOINTS).read_text()).keys() == set(STAGES)


def _spans(reference: str) -> list[tuple[int, int]]:
    """The line ranges of a References line: "(file.md, lines 14–18, 22)" -> [(14, 18), (22, 22)]."""
    places = reference.rsplit("lines ", 1)[-1] if "lines " in reference else reference.rsplit("line ", 1)[-1]
    return [(int(a), int(b or a)) for a, b in re.findall(r"(\d+)(?:–(\d+))?", places)]


def test_a_nothing_found_report_is_redone_once_the_corpus_has_the_topic(tmp_path, capsys):
    corpus, out, home = tmp_path / "corpus", tmp_path / "out", tmp_path / "home"
    shutil.copytree(EXAMPLE_DIR, corpus)
    topic = "Volcanic eruptions on Io"
    args = ["report", topic, "--corpus", str(corpus), "--out", str(out), "--data-dir", str(home),
            "--personas", "1", "--turns", "1"]
    assert main(args) == 0
    assert "Nothing about this topic was found" in RunFiles(out, topic).path("report.md").read_text()
    (corpus / "io-volcanoes.md").write_text(
        "---\ntitle: Volcanic Eruptions on Io\n---\n# Volcanic Eruptions on Io\n\n"
        "Io, the innermost large moon of Jupiter, has more volcanic eruptions than any other body in the solar system.\n\n"
        "The volcanic eruptions on Io are driven by tidal heating from Jupiter and its sister moons.\n")
    capsys.readouterr()
    assert main(args) == 0
    assert "(reused" not in capsys.readouterr().out
    report = RunFiles(out, topic).path("report.md").read_text()
    assert "Nothing about this topic was found" not in report and "tidal heating" in report


def test_the_draft_outline_is_made_while_the_personas_converse(parts, tmp_path):
    from agents.lm.extractive import ExtractiveModel

    class Recording(ExtractiveModel):
        def __init__(self, nlp):
            super().__init__(nlp)
            self.events: list[tuple[str, str]] = []

        async def run(self, step, inp):
            self.events.append(("start", step.name))
            try:
                return await super().run(step, inp)
            finally:
                self.events.append(("end", step.name))

    first = Recording(parts.nlp)
    parts.report(FLOOD, tmp_path, first, personas=1, turns=2)
    answers = [i for i, e in enumerate(first.events) if e == ("end", "storm.expert.answer")]
    assert answers and first.events.index(("start", "storm.outline.draft")) < answers[-1]  # not after them
    assert first.events.count(("start", "storm.outline.draft")) == 1
    assert RunFiles(tmp_path, FLOOD).path("direct_gen_outline.txt").read_text().strip()

    RunFiles(tmp_path, FLOOD).clear("article")  # the outline still holds: it is reused, not drafted again
    again = Recording(parts.nlp)
    summary = parts.report(FLOOD, tmp_path, again, personas=1, turns=2)
    assert "outline" in summary.reused and ("start", "storm.outline.draft") not in again.events


def test_the_survey_puts_the_passages_found_by_the_topic_itself_in_the_table(parts, tmp_path):
    excluded = asyncio.run(parts.retriever.search(FLOOD, k=1))[0].passage.url
    expected = asyncio.run(parts.retriever.search(FLOOD, k=8, flt=SearchFilter(exclude_urls=[excluded])))
    bare = parts.report(FLOOD, tmp_path / "bare", parts.extractive(), personas=1, turns=1, survey_k=0)
    wide = parts.report(FLOOD, tmp_path / "wide", parts.extractive(), personas=1, turns=1, survey_k=8,
                        exclude_urls=[excluded])
    files = RunFiles(tmp_path / "wide", FLOOD)
    survey = json.loads(files.path("survey_results.json").read_text())
    # the search for the topic, never the excluded source, in its order
    assert [r["passage_id"] for r in survey] == [h.passage.passage_id for h in expected] and len(survey) == 8
    table = json.loads(files.path("raw_search_results.json").read_text())
    assert {r["url"] for r in survey} <= set(table) and excluded not in table
    assert json.loads(RunFiles(tmp_path / "bare", FLOOD).path("survey_results.json").read_text()) == []
    # the survey is part of the conversations' checkpoint: read back as written, redone when k changes
    again = parts.report(FLOOD, tmp_path / "wide", parts.extractive(), personas=1, turns=1, survey_k=8,
                         exclude_urls=[excluded])
    assert "conversations" in again.reused and again.sources == wide.sources
    other = parts.report(FLOOD, tmp_path / "wide", parts.extractive(), personas=1, turns=1, survey_k=3,
                         exclude_urls=[excluded])
    assert "conversations" not in other.reused and "personas" in other.reused
    assert len(json.loads(files.path("survey_results.json").read_text())) <= 3


def test_outline_knobs_from_a_file_plan_the_outline_and_redo_only_what_follows_it(tmp_path, capsys):
    corpus, out, home = EXAMPLE_DIR, tmp_path / "out", tmp_path / "home"
    _report(corpus, out, home, capsys)
    outline = RunFiles(out, FLOOD).path("storm_gen_outline.txt")
    default = [line for line in outline.read_text().splitlines() if line.startswith("#")]
    assert len(default) > 2
    knobs = tmp_path / "knobs.json"
    knobs.write_text(json.dumps({"max_headings": 2}))

    reused, _ = _report(corpus, out, home, capsys, "--outline-params", str(knobs))
    assert reused == ["personas", "conversations"]  # the research holds; the outline and what follows are redone
    assert 1 <= len([line for line in outline.read_text().splitlines() if line.startswith("#")]) <= 2
    again, _ = _report(corpus, out, home, capsys, "--outline-params", str(knobs))
    assert again == list(STAGES)
    back, _ = _report(corpus, out, home, capsys)  # the defaults again: their outline as it was
    assert back == ["personas", "conversations"]
    assert [line for line in outline.read_text().splitlines() if line.startswith("#")] == default

    for wrong, said in (({"max_headings": 0}, "max_headings"), ({"max_heading": 3}, "max_heading"),
                        ([1, 2], "OutlineParams")):
        knobs.write_text(json.dumps(wrong))
        assert main(["report", FLOOD, "--corpus", str(corpus), "--out", str(out), "--data-dir", str(home),
                     "--outline-params", str(knobs)]) == 2
        err = capsys.readouterr().err
        assert "--outline-params" in err and said in err, err
    knobs.write_text("{not json")
    assert main(["report", FLOOD, "--corpus", str(corpus), "--out", str(out), "--data-dir", str(home),
                 "--outline-params", str(knobs)]) == 2
    assert "not a JSON object" in capsys.readouterr().err
