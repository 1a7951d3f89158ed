"""The neighbouring-provision trap: a value of the asked type from another provision of the same text.

The documents here are written by hand in a register the generator's templates never use (a water
authority's tariff: a table of late charges per kind of account, one long sentence holding a calendar-day
and two business-day deadlines); tests/answer/test_answer_families.py asks the prose family's bulletin the
same way through `ask`. Each question's right value sits beside values of the same type that answer a neighbouring
provision; the answer layer reads each value in its own clause or table row under its headings
(agents/answer/provision.py)."""

from __future__ import annotations

import pytest

from agents.answer.analysis import analyze
from agents.answer.candidates import Evidence, HopEvidence
from agents.answer.fusion import fuse
from agents.answer.provision import clashes, clause
from agents.answer.values import parse_value, same_value, values_in
from agents.lm.nlp import TextToolkit
from retrieval.documents import PassageText

TITLE = "Harrow Valley Water Authority, Tariff Schedule W-3"
CHARGES = PassageText(title=TITLE, section="Part 4. Charges > Late payment", text=(
    "The charges below apply to every account billed under this schedule.\n\n"
    "| Account | Late charge |\n|---|---|\n"
    "| Residential account, bill unpaid after the due date | one and one-half percent (1.5%) of the overdue "
    "balance each month |\n"
    "| Commercial account, bill unpaid after the due date | three percent (3%) of the overdue balance each "
    "month |\n"))
DISCONNECTION = PassageText(title=TITLE, section="Part 5. Disconnection", text=(
    "Service may be disconnected for nonpayment no sooner than ten (10) calendar days after a written notice\n"
    "is mailed; a customer who disputes the bill has five (5) business days after the notice to ask for a\n"
    "review, and the Authority must decide the review within twenty (20) business days."))
DEPOSIT = PassageText(title=TITLE, section="Part 2. Deposits", text=(
    "A new commercial customer pays a deposit of two hundred dollars ($200) or ten percent (10%) of the "
    "estimated yearly bill, whichever is more."))


@pytest.fixture(scope="module")
def nlp():
    return TextToolkit()


def _fused(nlp, question: str, *passages: PassageText):
    hop = HopEvidence(query=question, answer="\n".join(p.text for p in passages),
                      supporting=list(range(len(passages))))
    ev = Evidence(question=question, answer=hop.answer, hops=[hop], passages=list(passages))
    return fuse(nlp, analyze(nlp, question), ev)


@pytest.mark.parametrize("question, gold, passages", [
    # a table: both rows are late charges in percent; the row names the account
    ("What late charge does Tariff Schedule W-3 set for a commercial account?", "3 percent", (CHARGES,)),
    ("What late charge does Tariff Schedule W-3 set for a residential account?", "1.5 percent", (CHARGES,)),
    # one sentence, three deadlines: the business days to ask for a review, not to decide it
    ("How many business days does a customer have to ask for a review of a disputed bill?", "5 days",
     (DISCONNECTION,)),
    ("How many business days does the Authority have to decide a review?", "20 days", (DISCONNECTION,)),
    # calendar days, not the business days beside them
    ("Within how many calendar days after the notice may service be disconnected for nonpayment?", "10 days",
     (DISCONNECTION,)),
    # a dollar amount, not the percentage in the same sentence
    ("What dollar amount of deposit does a new commercial customer pay at least?", "$200", (DEPOSIT,)),
])
def test_the_value_of_the_asked_provision_wins_over_its_neighbours(nlp, question, gold, passages):
    out = _fused(nlp, question, *passages)
    assert any(same_value(parse_value(gold), v) for v in values_in(out.short_answer)), out


def test_a_clause_is_the_values_row_or_its_coordinated_part():
    text = DISCONNECTION.text
    at = text.index("twenty")
    local = clause(text, at, at + len("twenty (20) business days"))
    assert "Authority must decide" in local.near and "customer" not in local.near
    assert "customer" in local.text and "calendar" not in local.text  # the semicolon ends the clause
    row = CHARGES.text.index("three percent")
    assert clause(CHARGES.text, row, row + 18).text.startswith("| Commercial account")
    assert clashes("How many calendar days ...?", local, "twenty (20) business days")
    assert not clashes("How many business days ...?", local, "twenty (20) business days")
