"""`ask` on the fourth hand-written family (tests/data/regulatory_fresh: workers' compensation rules in two
editions, a travel policy wording in two versions whose schedule of benefits is a table), written after the
answer rules were frozen: its first run was the out-of-sample figure (docs/evaluation.md). Each test is one
of the kinds of failure that run showed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.answer.values import parse_value, same_value, values_in
from retrieval.graph.references import edition_hint, title_family
from tests.support.ask_cli import ask_json
from tests.support.store_points import ingested_settings

FRESH = Path(__file__).resolve().parents[1] / "data" / "regulatory_fresh" / "docs"
COLLECTION = "fresh"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return str(ingested_settings(tmp_path_factory, FRESH, COLLECTION).data_dir)


def _values(answer: dict) -> list:
    return values_in(answer["short_answer"] or "")


def test_versions_numbered_in_the_title_are_one_family_in_order():
    v4, v5 = (f"Sentry Travel Insurance, Policy Wording (version {n})" for n in (4, 5))
    assert title_family(v4) == title_family(v5) == "sentry travel insurance policy wording"
    assert (edition_hint(v4), edition_hint(v5)) == ("4", "5")


def test_the_value_in_force_comes_from_the_newer_version(home, capsys):
    # nothing says version 4 was replaced: the version numbers order them
    out = ask_json(home, COLLECTION, "What is the current trip cancellation limit per insured person in the "
                                     "Sentry travel wording?", capsys)
    assert not out["abstained"] and same_value(_values(out)[0], parse_value("$15,000")), out
    assert "$10,000" in (out["history"] or ""), out


def test_a_table_rows_value_is_read_under_its_row_and_column(home, capsys):
    # the schedule's rows share the document's title words ("Travel") and the "delay" of the next row
    out = ask_json(home, COLLECTION, "How did the travel delay benefit limit change from version 4 to version 5 "
                                     "of the Sentry travel wording?", capsys)
    said = [v for v in _values(out) if v.kind == "money"][:2]
    assert not out["abstained"] and len(said) == 2, out
    assert same_value(said[0], parse_value("$250")) and same_value(said[1], parse_value("$300")), out


def test_a_maximum_asks_for_a_number(home, capsys):
    out = ask_json(home, COLLECTION, "Under the 2018 edition of the Claims Administration Rules, what were the "
                                     "maximum insurable earnings?", capsys)
    assert not out["abstained"] and same_value(_values(out)[0], parse_value("$78,000")), out


def test_a_per_item_limit_is_not_an_aggregate_one(home, capsys):
    # the $300 sits in the Notes cell beside the row's $1,000 limit; Section C's "$200 in all" for eyeglasses
    # says "limited" and "Baggage" too, but in all, not for any one item
    out = ask_json(home, COLLECTION, "In version 4 of the Sentry Travel Insurance policy wording, what is the limit "
                                     "for any one item of baggage?", capsys)
    assert not out["abstained"] and same_value(_values(out)[0], parse_value("$300")), out
