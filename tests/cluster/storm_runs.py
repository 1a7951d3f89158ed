"""Shared by the distributed-run tests: the topics, the in-process reference run, artifact snapshots."""

from __future__ import annotations

import shutil
from pathlib import Path

from agents.storm.artifacts import CALL_HISTORY, RUN_CONFIG
from agents.storm.flow import ReportOptions
from agents.wiki.changes import SOURCES
from cluster.cli import main
from retrieval.config import StoreSettings

TOPICS = ["Flood rider waiting period", "Small business policy revisions", "Cyber add-on coverage"]
OPTIONS = ReportOptions(personas=2, turns=2)
TIMING_FILES = {CALL_HISTORY, RUN_CONFIG}  # call ids and times differ from run to run


def copy_home(settings: StoreSettings, target: Path) -> StoreSettings:
    """A private copy of the ingested data dir: the embedded store has one owner at a time."""
    shutil.copytree(settings.data_dir, target, symlinks=True)
    return StoreSettings.resolve(str(target))


def in_process(settings: StoreSettings, collection: str, out_dir: Path, topics=TOPICS,
               options: ReportOptions = OPTIONS) -> None:
    """`raystorm report` as a user runs it on one machine: the in-process pipeline, topic after topic."""
    topics_file = out_dir.parent / f"{out_dir.name}-topics.txt"
    topics_file.write_text("\n".join(topics) + "\n", encoding="utf-8")
    code = main(["report", "--topics", str(topics_file), "--collection", collection, "--data-dir", settings.data_dir,
                 "--out", str(out_dir), "--personas", str(options.personas), "--turns", str(options.turns)])
    assert code == 0, f"raystorm report exited with {code}"


def artifacts(out_dir: Path) -> dict[str, str]:
    """Every artifact's text by its path under `out_dir`, leaving out the files with timings."""
    return {str(p.relative_to(out_dir)): p.read_text(encoding="utf-8") for p in sorted(out_dir.rglob("*"))
            if p.is_file() and p.name not in TIMING_FILES}


def flow_files(files: dict[str, str]) -> dict[str, str]:
    """`files` without what `raystorm report` adds after the flow (report.sources.json: the evidence graph's
    word on the cited documents, `cluster.commands.diff.after_run`). A run through the Python API
    (`run_reports_distributed`, `report_topics`) writes the flow's files only."""
    return {k: v for k, v in files.items() if not k.endswith("/" + SOURCES)}
