"""`ask` on the sixth hand-written family (tests/data/regulatory_sixth: an employer's benefits summary for two
plan years), written after the fifth family's fixes to measure them out of sample (docs/evaluation.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.answer.editions import edition_ask
from agents.answer.values import parse_value, same_value, values_in
from tests.support.ask_cli import ask_json
from tests.support.store_points import ingested_settings

SIXTH = Path(__file__).resolve().parents[1] / "data" / "regulatory_sixth" / "docs"
COLLECTION = "sixth"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return str(ingested_settings(tmp_path_factory, SIXTH, COLLECTION).data_dir)


@pytest.mark.parametrize("question, kind, editions", [
    ("What was the family deductible of the medical plan in Plan Year 2022?", "named", ["2022"]),
    ("In the 2022 benefits summary, what share of charges did the plan pay?", "named", ["2022"]),
    ("How did the copay change from Plan Year 2022 to Plan Year 2024?", "change", ["2022", "2024"]),
    ("Who founded the company in 1990?", "", []),
])
def test_a_document_of_a_yearly_series_is_named_by_its_year(question, kind, editions):
    assert (edition_ask(question).kind, edition_ask(question).editions) == (kind, editions)


def test_two_values_joined_by_and_are_two_provisions(home, capsys):
    # "seven (7) days for an injury and fourteen (14) days for an illness"
    out = ask_json(home, COLLECTION, "Under the Plan Year 2024 summary, how long is the short-term disability "
                                     "elimination period for an injury?", capsys)
    said = [v for v in values_in(out["short_answer"] or "") if v.kind == "duration"]
    assert not out["abstained"] and same_value(said[0], parse_value("7 days")), out
