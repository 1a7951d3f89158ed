"""Fusion by answer type: consensus over candidates, explicit comparisons, yes/no from the evidence, and
verification; all on the real text toolkit over passages written here."""

from __future__ import annotations

from agents.answer.analysis import analyze
from agents.answer.candidates import Evidence, HopEvidence, gather
from agents.answer.fusion import fuse, probability
from agents.answer.verify import VerifyInput, contained
from agents.lm.nlp import TextToolkit
from agents.multihop.trace import NO_INFORMATION, PassageText

NLP = TextToolkit()
QUESTION = "In which city was the engineer who designed the Kestrel Street Bridge born?"
BRIDGE = PassageText(title="Kestrel Street Bridge",
                     text="The Kestrel Street Bridge was designed by the engineer Oona Marchetti and opened in 1931.")
BORN = PassageText(title="Oona Marchetti",
                   text="Oona Marchetti was born in Tressling, a port city on the northern coast.")
OTHER = PassageText(title="Fenby", text="Fenby is a city where the engineer retired.")


def evidence(passages, hops, span="") -> Evidence:
    return Evidence(question=QUESTION, answer=" ".join(h.answer for h in hops), strategy_span=span,
                    hops=hops, passages=passages)


def test_consensus_picks_what_hops_and_passages_agree_on():
    hops = [HopEvidence(query=QUESTION, answer=BRIDGE.text, supporting=[0]),
            HopEvidence(query="Oona Marchetti born city", answer=BORN.text, supporting=[1])]
    ev = evidence([BRIDGE, BORN, OTHER], hops)
    analysis = analyze(NLP, QUESTION)
    fused = fuse(NLP, analysis, ev)
    assert fused.short_answer == "Tressling"
    assert fused.passages == [1] and 0 < fused.confidence < 1
    names = {c.text for c in gather(NLP, analysis, ev)}
    assert "Oona Marchetti" in names  # the bridge is a candidate, and loses
    # a second passage stating it raises the confidence: agreement is evidence
    again = PassageText(title="Tressling", text="Tressling is the port city where rope for the bridge was made.")
    hops2 = [*hops, HopEvidence(query="port city rope", answer=again.text, supporting=[3])]
    more = fuse(NLP, analysis, evidence([BRIDGE, BORN, OTHER, again], hops2))
    assert more.short_answer == "Tressling" and more.confidence > fused.confidence


def test_a_question_nothing_answers_gets_no_short_answer():
    q = "When was the Kestrel Street Bridge demolished?"
    ev = Evidence(question=q, answer=NO_INFORMATION, hops=[HopEvidence(query=q, answer=NO_INFORMATION)],
                  passages=[BORN])
    fused = fuse(NLP, analyze(NLP, q), ev)
    assert fused.short_answer == "" and fused.confidence == 0.0 and "no passage names a date" in fused.reason


def test_which_of_a_or_b_is_decided_by_the_compared_values():
    q = "Which band was formed first, The Exies or Circus Diablo?"
    exies = PassageText(title="The Exies", text="The Exies are an American rock band formed in 1997 in Los Angeles.")
    diablo = PassageText(title="Circus Diablo", text="Circus Diablo is a rock supergroup formed in 2004.")
    ev = Evidence(question=q, answer="", passages=[diablo, exies])
    fused = fuse(NLP, analyze(NLP, q), ev)
    assert fused.short_answer == "Exies" and "1997" in fused.reason and fused.confidence > 0.5
    later = fuse(NLP, analyze(NLP, q.replace("first", "later")), ev)
    assert later.short_answer == "Circus Diablo"
    # a value missing for one option: an answer, but marked undecided by a lower confidence
    vague = PassageText(title="Circus Diablo", text="Circus Diablo is a rock supergroup.")
    undecided = fuse(NLP, analyze(NLP, q), Evidence(question=q, answer="", passages=[vague, exies]))
    assert undecided.confidence < fused.confidence and "Circus Diablo" in undecided.reason


def test_yes_no_is_decided_from_the_evidence():
    q = "Are Medici and Senet both board games?"
    medici = PassageText(title="Medici (board game)", text="Medici is a board game designed by Reiner Knizia.")
    senet = PassageText(title="Senet", text="Senet is a board game from ancient Egypt.")
    yes = fuse(NLP, analyze(NLP, q), Evidence(question=q, answer="", passages=[medici, senet]))
    assert yes.short_answer == "yes" and set(yes.passages) == {0, 1}
    novel = PassageText(title="Senet", text="Senet is a novel by an Egyptian author.")
    no = fuse(NLP, analyze(NLP, q), Evidence(question=q, answer="", passages=[medici, novel]))
    assert no.short_answer == "no" and "Senet: not stated" in no.reason
    same = "Are Nantong and Jingdezhen situated in the same province?"
    nantong = PassageText(title="Nantong", text="Nantong is a city in the province of Jiangsu.")
    jing = PassageText(title="Jingdezhen", text="Jingdezhen is a city in the province of Jiangxi.")
    assert fuse(NLP, analyze(NLP, same), Evidence(question=same, answer="", passages=[nantong, jing])).short_answer == "no"
    jing2 = PassageText(title="Jingdezhen", text="Jingdezhen is a city in the province of Jiangsu.")
    assert fuse(NLP, analyze(NLP, same), Evidence(question=same, answer="", passages=[nantong, jing2])).short_answer == "yes"


def test_verification_fails_for_an_answer_no_passage_contains():
    ok = contained(VerifyInput(question=QUESTION, short_answer="tressling", passages=[BRIDGE, BORN]))
    assert ok.supported and ok.passages == [1]
    bad = contained(VerifyInput(question=QUESTION, short_answer="Fenby Harbour", passages=[BRIDGE, BORN]))
    assert not bad.supported and bad.passages == []


def test_probability_is_monotone_in_the_evidence():
    base = {"bias": 1.0, "hop_votes": 0.0, "passage_votes": 0.0}
    assert probability({**base, "hop_votes": 1.0}) > probability(base)
