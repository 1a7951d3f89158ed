"""`ask` on the fifth hand-written family (tests/data/regulatory_fifth: a port tariff in two numbered editions and
a harbour notice amending the first), written after the fourth family's fixes to measure them out of sample
(docs/evaluation.md). Each test is one kind of failure its first run showed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.answer.values import parse_value, same_value, values_in
from retrieval.graph.references import references_in
from tests.support.ask_cli import ask_json
from tests.support.store_points import ingested_settings

FIFTH = Path(__file__).resolve().parents[1] / "data" / "regulatory_fifth" / "docs"
COLLECTION = "fifth"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return str(ingested_settings(tmp_path_factory, FIFTH, COLLECTION).data_dir)


def _said(answer: dict, kind: str) -> list:
    return [v for v in values_in(answer["short_answer"] or "") if v.kind == kind]


def test_numbered_documents_other_than_bulletins_are_references():
    keys = [r.key for r in references_in("Tariff No. 10 supersedes Tariff No. 9; see Harbour Notice 2022-04, "
                                         "Circular 7/2019 and Notice HN-4.")]
    assert keys == ["TARIFF 10", "TARIFF 9", "NOTICE 2022-04", "CIRCULAR 7/2019", "HN-4"]
    assert references_in("The insurer must give written notice 30 days before it cancels.") == []


def test_a_supersession_wrapped_over_two_lines_is_read(home, capsys):
    # "Tariff No. 10 supersedes" ends one line of the paragraph, "Tariff No. 9 and the harbour notices" starts
    # the next: the older tariff's 25 percent is history, the newer one's 30 percent is in force
    out = ask_json(home, COLLECTION, "What surcharge on wharfage applies to dangerous goods at the Port of Marrow "
                                     "now?", capsys)
    assert not out["abstained"] and same_value(_said(out, "percent")[0], parse_value("30 percent")), out
    assert "25 percent" in (out["history"] or ""), out


@pytest.mark.parametrize("question, was, now", [
    # "€1.20 per tonne for bulk cargo and €18 per container": the bulk rate, not the container's
    ("How did the wharfage charge per tonne of bulk cargo change from Tariff No. 9 to Tariff No. 10?",
     "€1.20", "€1.35"),
    # a rate may be an amount (a berthing rate per metre), not only a percentage
    ("How did the berthing rate for pleasure craft change between Tariff No. 9 and Tariff No. 10?", "€0.90", "€1.10"),
])
def test_a_change_between_two_numbered_tariffs_reads_each(home, capsys, question, was, now):
    out = ask_json(home, COLLECTION, question, capsys)
    said = _said(out, "money")[:2]
    assert not out["abstained"] and len(said) == 2, out
    assert same_value(said[0], parse_value(was)) and same_value(said[1], parse_value(now)), out
