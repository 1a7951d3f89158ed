"""`ask` on a document family written unlike the generator's templates (tests/data/regulatory_prose: long
prose bulletins with their definitions far from their use, tables, values in lists, form editions labelled
month/year, rules told apart only by their effective date): a named document or edition is answered from
that one, the value in force from the newest edition, a change between two editions from each, and a
document the collection lacks is said to be missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.answer.values import parse_value, same_value, values_in
from retrieval.graph.references import edition_hint, title_family
from tests.support.ask_cli import ask_json
from tests.support.store_points import ingested_settings

PROSE = Path(__file__).resolve().parents[1] / "data" / "regulatory_prose" / "docs"
COLLECTION = "prose"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return str(ingested_settings(tmp_path_factory, PROSE, COLLECTION).data_dir)


def _ask(home: str, question: str, capsys) -> dict:
    return ask_json(home, COLLECTION, question, capsys)


def _states(answer: dict, gold: str) -> bool:
    return any(same_value(parse_value(gold), v) for v in values_in(answer["short_answer"] or ""))


@pytest.mark.parametrize("question, gold", [
    # the bulletin named, though the other one states the same provision with another value
    ("Under Bulletin B-2019-11, within how many business days must an insurer pay an accepted amount?", "10 days"),
    # ... and beside it a 72-hour and a 30-day deadline of other provisions
    ("Under Vessland Bulletin B-2016-04, within how many business days must an insurer pay a claim it has "
     "accepted?", "15 days"),
    # the edition named by its month/year label, the other edition's table holding $200
    ("In the 03/21 edition of Form HO-7, what is the special limit on money, bank notes, coins and precious "
     "metals?", "$300"),
    ("In the 09/18 edition of Form HO-7, what is the special limit for theft of jewelry, watches and furs?", "$1,500"),
])
def test_a_named_document_or_edition_is_answered_from_that_one(home, capsys, question, gold):
    out = _ask(home, question, capsys)
    assert not out["abstained"] and _states(out, gold), out


@pytest.mark.parametrize("question, gold", [
    # the neighbouring-provision trap (tests/answer/test_answer_provision.py): the bulletin's table holds 18
    # percent on an accepted amount beside 10 percent on an appraisal award
    ("Under Bulletin B-2016-04, what yearly interest is owed on an appraisal award paid late?", "10 percent"),
    # thirty calendar days to decide, beside fifteen business days to pay and 72 hours to acknowledge
    ("Under Bulletin B-2016-04, how long does an insurer have to accept or deny a claim after it receives proof "
     "of loss?", "30 days"),
])
def test_the_value_of_the_asked_provision_not_its_neighbours(home, capsys, question, gold):
    out = _ask(home, question, capsys)
    assert not out["abstained"] and _states(out, gold), out


def test_the_value_in_force_comes_from_the_newest_edition(home, capsys):
    # no bulletin says the 09/18 edition was replaced: its own label orders it before 03/21
    out = _ask(home, "What is the special limit for theft of jewelry, watches and furs under Form HO-7 now?", capsys)
    assert not out["abstained"] and _states(out, "$2,000"), out
    assert all("09-18" not in c["source"] for c in out["answer_support"])


def test_a_change_between_two_editions_gives_both_values_in_order(home, capsys):
    # a percentage deductible beside dollar limits, the additional-living-expense share (20 percent) and the
    # earthquake deductible (10 percent) in the same lists
    out = _ask(home, "How did the hurricane deductible change from the 09/18 edition to the 03/21 edition of "
                     "Form HO-7?", capsys)
    assert not out["abstained"], out
    assert [v.number for v in values_in(out["short_answer"]) if v.kind == "percent"][:2] == [2, 5], out["short_answer"]


def test_a_change_between_two_bulletins_finds_the_provision_in_each(home, capsys):
    # the later bulletin supersedes paragraphs 5 and 6 of the first; the first's background section tells of
    # "the two years before this bulletin", the later one's of "three years under" the first
    out = _ask(home, "How did the payment deadline for accepted claims change between Bulletin B-2016-04 and "
                     "Bulletin B-2019-11?", capsys)
    assert not out["abstained"], out
    said = [v for v in values_in(out["short_answer"]) if v.kind == "duration"][:2]
    assert len(said) == 2 and same_value(said[0], parse_value("15 days")) and same_value(said[1], parse_value(
        "10 days")), out
    assert [Path(c["source"]).stem for c in out["answer_support"]] == ["vessland-bulletin-b-2016-04",
                                                                        "vessland-bulletin-b-2019-11"], out


@pytest.mark.parametrize("question", [
    "Within how many business days did the bulletin that Bulletin B-2019-11 replaced require an insurer to pay "
    "an accepted amount?",
    "What was the payment deadline for accepted claims before Bulletin B-2019-11?",
])
def test_what_a_named_bulletin_replaced_is_answered_from_the_replaced_one(home, capsys, question):
    # the question names the newer bulletin (10 business days) but asks of the one it superseded
    out = _ask(home, question, capsys)
    assert not out["abstained"] and _states(out, "15 days"), out
    assert {Path(c["source"]).stem for c in out["answer_support"]} == {"vessland-bulletin-b-2016-04"}, out


def test_a_bulletin_that_replaced_nothing_says_so(home, capsys):
    out = _ask(home, "What was the payment deadline for accepted claims before Bulletin B-2016-04?", capsys)
    assert out["abstained"] and "B-2016-04" in out["abstain_reason"] and "replaced" in out["abstain_reason"], out


def test_a_document_the_collection_lacks_is_named_as_missing(home, capsys):
    out = _ask(home, "Under Bulletin B-2030-01, within how many business days must an insurer pay an accepted "
                     "amount?", capsys)
    assert out["abstained"] and "B-2030-01" in out["abstain_reason"]


def test_form_editions_labelled_month_and_year_are_one_family_in_date_order():
    old = "Northgate Mutual Homeowners Form HO-7 (edition 09/18)"
    new = "Northgate Mutual Homeowners Form HO-7 (edition 03/21)"
    assert title_family(old) == title_family(new)
    assert edition_hint(old) == "2018-09" < edition_hint(new) == "2021-03"  # not 09 after 03
