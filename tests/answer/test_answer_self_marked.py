"""A document that says in its own text that it no longer holds ("Superseded — see Harbour Notice HN-4.",
"This notice was superseded by ...") is read as superseded by the evidence graph, so `ask` answers "current"
from the newer one and reads the older as history. The notices are written here by hand, titled apart (no
edition label, date or shared title orders them): only the old notice's own mark says which holds."""

from __future__ import annotations

import json

import pytest

from agents.answer.values import parse_value, same_value, values_in
from tests.support.store_points import ingested_settings

COLLECTION = "harbour"
NOTICES = {
    "hn-1-visitor-berths.md": (
        "---\ntitle: Averill Harbour Notice HN-1, Visitor Berths\n---\n"
        "# Averill Harbour Notice HN-1, Visitor Berths\n\n"
        "**Superseded — see Harbour Notice HN-4.**\n\n"
        "## Stays at the visitor pontoon\n\n"
        "A visiting yacht may stay at the visitor pontoon for at most forty-eight (48) hours, after which the\n"
        "harbour master may move it to the outer moorings. Berthing is paid at the harbour office.\n"),
    "hn-4-visiting-yachts.md": (
        "---\ntitle: Averill Harbour Notice HN-4, Berthing of Visiting Yachts\n---\n"
        "# Averill Harbour Notice HN-4, Berthing of Visiting Yachts\n\n"
        "## Stays at the visitor pontoon\n\n"
        "From the 2024 season a visiting yacht may stay at the visitor pontoon for at most seventy-two (72)\n"
        "hours. Crews arriving after dark report to the harbour office in the morning.\n"),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    folder = tmp_path_factory.mktemp("harbour-docs")
    for name, text in NOTICES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return str(ingested_settings(tmp_path_factory, folder, COLLECTION).data_dir)


def test_current_comes_from_the_notice_the_old_one_points_to(home, capsys):
    from cluster.cli import main

    capsys.readouterr()
    assert main(["ask", "How long may a visiting yacht currently stay at the visitor pontoon?", "-c", COLLECTION,
                 "--strategy", "chain", "--json", "--data-dir", home]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not out["abstained"], out
    assert any(same_value(parse_value("72 hours"), v) for v in values_in(out["short_answer"])), out
    assert all("hn-1" not in c["source"] for c in out["answer_support"]), out
