"""The answer layer: analysis → candidates → fusion → verification → answer or abstention.

`finish(lm, answer)` takes what a strategy returned (its hops, supporting
passages and written answer) and fills the short answer, its confidence, the
passages that state it, and — when the confidence is below the threshold or
no cited passage contains the answer — an abstention with its reason. Each
step is a typed step, so a chat model runs them when the "answer" stage has one.
"""

from __future__ import annotations

from math import floor

from pydantic import BaseModel, Field

from agents.answer.analysis import AnalyzeInput, AnalyzeQuestion
from agents.answer.candidates import Evidence, HopEvidence
from agents.answer.fusion import FuseAnswer, FuseInput
from agents.answer.verify import VerifyAnswer, VerifyInput, same_value_in
from agents.lm.steps import LanguageModel
from agents.multihop.trace import AgentAnswer, Citation, unique_passages
from retrieval.documents import PassageText

# Below this confidence raystorm abstains: the threshold that maximises answered questions' 2*F1 - 1, chosen by
# scripts/calibrate/calibrate_answers.py --leave-family-out over five dev families (0.45-0.7 per held-out family,
# 0.4 on all; scripts/bench_answers.py chooses 0.4 for each document family held out, and above it the answers of
# every family were right at least 0.58 of the time).
MIN_CONFIDENCE = 0.4
OTHER_PASSAGES = 5  # retrieved passages read beside the supporting ones


class AnswerSettings(BaseModel):
    min_confidence: float = Field(MIN_CONFIDENCE, ge=0.0, le=1.0,
                                  description="abstain below this confidence (0: always answer when verified)")


def evidence_of(answer: AgentAnswer) -> tuple[Evidence, list]:
    """The strategy's evidence as the answer steps read it, and the passages behind its indices."""
    support = unique_passages([p for h in answer.hops for p in h.supporting_passages])
    passages = unique_passages(support + answer.retrieved[:OTHER_PASSAGES])
    index = {p.passage_id: i for i, p in enumerate(passages)}
    hops = [HopEvidence(query=h.query, answer=h.answer,
                        supporting=[index[p.passage_id] for p in h.supporting_passages])
            for h in answer.hops]
    ev = Evidence(question=answer.question, answer=answer.answer, strategy_span=answer.short_answer or "",
                  hops=hops, passages=[PassageText.of(p) for p in passages])
    return ev, passages


async def finish(lm: LanguageModel, answer: AgentAnswer, settings: AnswerSettings | None = None,
                 value: str | None = None) -> AgentAnswer:
    """`value`: the question asks for a value of this measure ('' any) whatever its wording ("how did X
    change between editions A and B" asks each edition for one); None: as the question's analysis says."""
    settings = settings or AnswerSettings()
    ev, passages = evidence_of(answer)
    analysis = await lm.run(AnalyzeQuestion, AnalyzeInput(question=answer.question))
    if value is not None:
        analysis = analysis.model_copy(update={"answer_type": "number", "options": [],
                                               "measure": value or (analysis.measure
                                                                    if analysis.answer_type == "number" else "")})
    fused = await lm.run(FuseAnswer, FuseInput(evidence=ev, analysis=analysis))
    out = answer.model_copy(update={"answer_type": analysis.answer_type, "confidence": fused.confidence,
                                    "strategy_span": answer.short_answer,
                                    "guess": fused.short_answer or None})
    if not fused.short_answer:
        return _abstain(out, fused.reason or "no passage states the answer")
    cited = [i for i in fused.passages if 0 <= i < len(passages)] or list(range(len(passages)))
    # a value verifies against its other writings ("$300" in "three hundred dollars"), on any model
    check = same_value_in([ev.passages[i] for i in cited], fused.short_answer)
    if not check.supported:
        check = await lm.run(VerifyAnswer, VerifyInput(
            question=answer.question, short_answer=fused.short_answer, yes_no=analysis.answer_type == "yes_no",
            passages=[ev.passages[i] for i in cited]))
    if not check.supported:
        return _abstain(out, f"no cited passage contains '{fused.short_answer}'")
    if fused.confidence < settings.min_confidence:
        about = ", ".join(analysis.entities)
        what = f"{analysis.asks_for} ({about})" if about and analysis.asks_for else analysis.asks_for or about
        return _abstain(out, f"no passage clearly states {what or 'the answer'}: the best candidate, "
                             f"'{fused.short_answer}', has confidence {floor(fused.confidence * 100) / 100:.2f}, below "
                             f"{settings.min_confidence:.2f} ({fused.reason})")
    stating = [cited[i] for i in check.passages if 0 <= i < len(cited)] or cited
    return out.model_copy(update={"short_answer": fused.short_answer, "abstained": False, "abstain_reason": None,
                                  "answer_support": [Citation.of(n, passages[i]) for n, i in
                                                     enumerate(stating, start=1)]})


def _abstain(answer: AgentAnswer, reason: str) -> AgentAnswer:
    return answer.model_copy(update={"short_answer": None, "abstained": True, "abstain_reason": reason,
                                     "answer_support": []})
