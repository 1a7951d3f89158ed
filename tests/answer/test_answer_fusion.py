"""Fusion by answer type: consensus over candidates, explicit comparisons, yes/no from the evidence, and
verification; all on the real text toolkit over passages written here."""

from __future__ import annotations

from agents.answer.analysis import analyze
from agents.answer.candidates import Evidence, HopEvidence, gather
from agents.answer.fusion import calibrated, fuse
from agents.answer.verify import VerifyInput, contained
from agents.lm.nlp import TextToolkit
from agents.multihop.trace import NO_INFORMATION
from retrieval.documents import PassageText

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
    q = "When was the Kestrel Street Bridge opened?"
    repaired = PassageText(title="Kestrel Street Bridge repairs",
                           text="The Kestrel Street Bridge was closed for repairs in 1958.")
    hops = [HopEvidence(query=q, answer=repaired.text, supporting=[0])]
    analysis = analyze(NLP, q)
    alone = fuse(NLP, analysis, Evidence(question=q, answer=repaired.text, hops=hops, passages=[repaired]))
    assert alone.short_answer == "1958"  # the only date there is
    # two hops and two passages agree on another date: it wins, with more confidence than the lone one
    opened = PassageText(title="Kestrel Street Bridge", text="The Kestrel Street Bridge was opened in 1931.")
    traffic = PassageText(title="Wrenmouth traffic", text="Traffic first crossed when the bridge opened in 1931.")
    hops2 = [*hops, HopEvidence(query="Kestrel Street Bridge opened", answer=opened.text, supporting=[1]),
             HopEvidence(query="bridge opened traffic", answer=traffic.text, supporting=[2])]
    ev = Evidence(question=q, answer=opened.text, hops=hops2, passages=[repaired, opened, traffic])
    agreed = fuse(NLP, analysis, ev)
    assert agreed.short_answer == "1931" and agreed.passages == [1, 2]
    assert {c.text for c in gather(NLP, analysis, ev)} == {"1931", "1958"}
    assert agreed.confidence > alone.confidence


def test_a_question_nothing_answers_gets_no_short_answer():
    q = "When was the Kestrel Street Bridge demolished?"
    ev = Evidence(question=q, answer=NO_INFORMATION, hops=[HopEvidence(query=q, answer=NO_INFORMATION)],
                  passages=[BORN])
    fused = fuse(NLP, analyze(NLP, q), ev)
    assert fused.short_answer == "" and fused.confidence == 0.0 and fused.reason == "no passage names a date for Kestrel Street Bridge (demolished)"


def test_which_of_a_or_b_is_decided_by_the_compared_values():
    q = "Which band was formed first, The Exies or Circus Diablo?"
    exies = PassageText(title="The Exies", text="The Exies are an American rock band formed in 1997 in Los Angeles.")
    diablo = PassageText(title="Circus Diablo", text="Circus Diablo is a rock supergroup formed in 2004.")
    ev = Evidence(question=q, answer="", passages=[diablo, exies])
    fused = fuse(NLP, analyze(NLP, q), ev)
    assert fused.short_answer == "Exies" and "1997" in fused.reason and fused.confidence > 0.5
    q2 = q.replace("first", "later")
    later = fuse(NLP, analyze(NLP, q2), Evidence(question=q2, answer="", passages=[diablo, exies]))
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


def test_confidence_rises_with_the_winning_share_and_never_falls_with_its_score():
    # the fit keeps every coefficient >= 0 (scripts/calibrate/calibrate_answers.py); over three kinds of corpus the
    # score's came out 0: the share says what the score would
    assert 0 < calibrated(0.2, 0.5) <= calibrated(0.2, 1.5) < 1
    assert calibrated(0.2, 1.0) < calibrated(0.9, 1.0)


def test_a_duration_or_an_amount_is_answered_with_its_number_and_unit():
    bulletin = PassageText(title="Bulletin 2022-11: Flood Rider Waiting Period", text=(
        "Bulletin 2022-11 was signed by Delphine Varga on 3 October 2022. The waiting period for the Flood Rider "
        "is 14 days from purchase, replacing the 30 days set by Bulletin 2021-04. The flood deductible is $2,000 "
        "per event, up from $1,500."))
    for q, answer in [("What is the current waiting period for the Flood Rider?", "14 days"),
                      ("What is the flood deductible under the Flood Rider now?", "$2,000")]:
        analysis = analyze(NLP, q)
        ev = Evidence(question=q, answer=bulletin.text, passages=[bulletin],
                      hops=[HopEvidence(query=q, answer=bulletin.text, supporting=[0])])
        texts = {c.text for c in gather(NLP, analysis, ev)}
        assert answer in texts and "Bulletin 2021-04" not in texts and "2022" not in texts
        # a duration is a time span, an amount a sum of money: the other numbers are not candidates
        assert all(t.endswith("days") for t in texts) if analysis.measure == "duration" else all(
            t.startswith("$") for t in texts)
        fused = fuse(NLP, analysis, ev)
        assert fused.short_answer in {"14 days", "30 days", "$2,000", "$1,500"} and fused.passages == [0]


def test_candidates_drop_possessives_and_titles_and_keep_a_leading_new():
    q = "Which senator did Scott Buchholz serve as chief of staff to?"
    ev = Evidence(question=q, answer="", passages=[
        PassageText(title="Barnaby Joyce", text="Barnaby Joyce is an Australian politician from New England."),
        PassageText(title="Scott Buchholz", text="Scott Buchholz was chief of staff to Queensland Senator "
                                                  "Barnaby Joyce and later moved to New York's offices.")],
        hops=[HopEvidence(query=q, answer="Scott Buchholz was chief of staff to Queensland Senator Barnaby Joyce "
                                           "and later moved to New York's offices.", supporting=[1])])
    texts = {c.text for c in gather(NLP, analyze(NLP, q), ev)}
    assert "Barnaby Joyce" in texts  # the passage title inside "Queensland Senator Barnaby Joyce"
    assert "New York" in texts and "New York's" not in texts and "York" not in texts



def test_the_plans_concluding_hop_is_a_feature_and_its_bridges_are_no_candidates():
    # the chain walked the question's plan: hop 1 found the engineer, hop 2 (her name put in) the city
    hops = [HopEvidence(query="engineer who designed the Kestrel Street Bridge", answer=BRIDGE.text, supporting=[0]),
            HopEvidence(query="In which city was Oona Marchetti born?", answer=BORN.text, supporting=[1])]
    analysis = analyze(NLP, QUESTION)
    by_text = {c.text: c.features for c in gather(NLP, analysis, evidence([BRIDGE, BORN], hops))}
    assert by_text["Tressling"]["planned"] == 1.0
    # read as a person question, the engineer would be a candidate; she is the bridge, so she is not
    person = analysis.model_copy(update={"answer_type": "person"})
    assert "Oona Marchetti" not in {c.text for c in gather(NLP, person, evidence([BRIDGE, BORN], hops))}
    # the same hops off the plan (other queries): no concluding hop, and the engineer is a candidate again
    off = [HopEvidence(query=QUESTION, answer=BRIDGE.text, supporting=[0]),
           HopEvidence(query="Oona Marchetti city born", answer=BORN.text, supporting=[1])]
    assert gather(NLP, analysis, evidence([BRIDGE, BORN], off))[0].features["planned"] == 0.0
    assert "Oona Marchetti" in {c.text for c in gather(NLP, person, evidence([BRIDGE, BORN], off))}
