"""Follow-up questions: rewriting from earlier turns (chains over the bundled Harborline corpus and the
two-hop test corpus), `ask --history FILE` and `ask --chat` on the real two-hop corpus."""

from __future__ import annotations

import io
import json

import pytest

from agents.answer.followup import Turn, rewrite
from agents.lm.nlp import TextToolkit
from tests.support.multihop_helpers import COLLECTION, ingest_two_hop

NLP = TextToolkit()

# (earlier turns, follow-up, standalone question expected)
CHAINS = [
    # bundled corpus (retrieval/example_corpus)
    ([Turn(question="Who signed Bulletin 2022-11?", short_answer="Delphine Varga", answer_type="person")],
     "When did she sign it?", "When did Delphine Varga sign Bulletin 2022-11?"),
    ([Turn(question="Who signed Bulletin 2022-11?", guess="Delphine Varga", answer_type="person")],
     "Which company employed her before Harborline?", "Which company employed Delphine Varga before Harborline?"),
    ([Turn(question="Who signed Bulletin 2022-11?", short_answer="Delphine Varga", answer_type="person")],
     "What about Bulletin 2023-07?", "Who signed Bulletin 2023-07?"),
    ([Turn(question="Who issued flood claims memo CM-24-05?", short_answer="Tomasz Ellery", answer_type="person")],
     "In what year did he join Harborline?", "In what year did Tomasz Ellery join Harborline?"),
    ([Turn(question="What is the ransomware sublimit of the CY-2 Cyber Add-On?", short_answer="$250,000",
           answer_type="number")],
     "Which bulletin changed it?", "Which bulletin changed CY-2 Cyber Add-On?"),
    # two-hop test corpus (tests/data/two_hop)
    ([Turn(question="Who designed the Kestrel Street Bridge?", short_answer="Oona Marchetti", answer_type="person")],
     "Where was she born?", "Where was Oona Marchetti born?"),
    ([Turn(question="Who rebuilt the Heron Lane Swing Bridge?", short_answer="Caspar Lindqvist",
           answer_type="person"),
      Turn(question="What instrument did he play?", standalone="What instrument did Caspar Lindqvist play?",
           short_answer="cello", answer_type="free_text")],
     "What is his birth year?", "What is Caspar Lindqvist's birth year?"),
    ([Turn(question="Which firm supplied the stone for the Abbey Mill Bridge?",
           short_answer="Hathersage Quarry Company", answer_type="free_text")],
     "Where is it based?", "Where is Hathersage Quarry Company based?"),
    ([Turn(question="Which bulletin withdrew the tenant form that the Renters Policy RP-1 replaced?",
           short_answer="Bulletin 2015-05", answer_type="free_text")],
     "Who signed it?", "Who signed Bulletin 2015-05?"),
]


@pytest.mark.parametrize("turns, follow_up, standalone", CHAINS)
def test_follow_ups_are_rewritten_from_earlier_turns(turns, follow_up, standalone):
    assert rewrite(NLP, follow_up, turns) == standalone


def test_a_question_that_stands_alone_is_left_as_it_is():
    turns = CHAINS[0][0]
    assert rewrite(NLP, "What is the ransomware sublimit of the CY-2 Cyber Add-On?", turns) == \
        "What is the ransomware sublimit of the CY-2 Cyber Add-On?"
    assert rewrite(NLP, "When did she sign it?", []) == "When did she sign it?"  # nothing to resolve from


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return str(ingest_two_hop(tmp_path_factory.mktemp("followup-home")).data_dir)


def test_ask_history_rewrites_shows_and_records_the_turn(home, tmp_path, capsys):
    from cluster.cli import main

    history = tmp_path / "dialogue.json"
    args = ["-c", COLLECTION, "--strategy", "chain", "--data-dir", home, "--history", str(history)]
    assert main(["ask", "Who designed the Kestrel Street Bridge?", *args]) == 0
    capsys.readouterr()
    assert main(["ask", "Where was she born?", *args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["asked"] == "Where was she born?" and out["question"] == "Where was Oona Marchetti born?"
    turns = json.loads(history.read_text())["turns"]
    assert [t["standalone"] for t in turns] == ["Who designed the Kestrel Street Bridge?",
                                                "Where was Oona Marchetti born?"]
    history.write_text("[1, 2]")
    assert main(["ask", "Where was she born?", *args]) == 2
    assert "not a raystorm dialogue" in capsys.readouterr().err


def test_ask_chat_answers_turn_by_turn(home, monkeypatch, capsys):
    from cluster.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("Who rebuilt the Heron Lane Swing Bridge?\n"
                                                 "What instrument did he play?\n\n"))
    assert main(["ask", "--chat", "-c", COLLECTION, "--strategy", "chain", "--data-dir", home]) == 0
    out = capsys.readouterr().out
    assert out.count("Answer (chain):") == 2
    assert "(rewritten from the dialogue: What instrument did Caspar Lindqvist play?)" in out
    assert main(["ask", "Who?", "--chat", "-c", COLLECTION, "--data-dir", home]) == 2
    assert "--chat reads the questions from the terminal" in capsys.readouterr().err
