"""The steps of Chain-of-RAG (arXiv 2501.14342, as DeepSearcher runs it), each with its extractive form.

Per hop: `FollowUpQuery` → retrieval → `IntermediateAnswer` → `SupportedPassages`;
optionally `Sufficiency` to stop early; at the end `ChainAnswer`. The
instructions follow DeepSearcher's prompts; the `extract` methods are the
offline model: a composed question is walked as its plan of nested relations
(`decompose`, `plan`): each follow-up is the next sub-question with the earlier
steps' answers put in, the walk says when the chain is done and which hop
concludes; off a plan, the follow-up query carries the bridge entity the last
hop found. The intermediate answer is the best-supported sentence.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, Field

from agents.lm.grounding import cited_numbers, citation_problem
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.instructions import numbered_source
from agents.multihop import evidence
from agents.multihop.decompose import decompose
from agents.multihop.plan import walk_plan
from agents.multihop.short_answer import answer_span
from agents.multihop.trace import NO_INFORMATION, found_nothing
from retrieval.documents import PassageText
from retrieval.graph.current import short_title

# The least query coverage (0..1, rank prior excluded) a sentence needs to count as an answer.
MIN_SUPPORT = 0.15


class HopBrief(BaseModel):
    """An earlier hop as later steps see it."""

    query: str
    answer: str
    supporting: list[PassageText] = Field(default_factory=list)


def _numbered(passages: list[PassageText]) -> str:
    return "\n\n".join(numbered_source(i, p.title, p.text) for i, p in enumerate(passages, start=1))


def _chain(hops: list[HopBrief]) -> str:
    def sources(h: HopBrief) -> str:
        return f"\n   from: {'; '.join(p.title for p in h.supporting)}" if h.supporting else ""
    return "\n".join(f"{i}. query: {h.query}\n   answer: {h.answer}{sources(h)}"
                     for i, h in enumerate(hops, start=1)) or "(none yet)"


# --- 1. the follow-up query ------------------------------------------------------------------

class FollowUpInput(BaseModel):
    question: str
    hops: list[HopBrief] = Field(default_factory=list)


class FollowUpOutput(BaseModel):
    query: str = Field(description="one simple search query")


class FollowUpQuery(Step[FollowUpInput, FollowUpOutput]):
    name: ClassVar[str] = "multihop.chain.follow_up"
    role: ClassVar[str] = "plan"
    Input = FollowUpInput
    Output = FollowUpOutput
    instructions: ClassVar[str] = (
        "You answer the main question by searching a document collection step by step. Given the "
        "intermediate queries and answers so far, write ONE new simple follow-up query that helps answer "
        "the main question: usually the next fact the question depends on, naming the entity the last "
        "answer found. The search tool does not understand complex questions, so ask for one thing only. "
        "When the earlier answers did not help, rephrase or decompose the main question."
    )

    @classmethod
    def render_input(cls, inp: FollowUpInput) -> str:
        return f"## Intermediate queries and answers\n{_chain(inp.hops)}\n\n## Main question\n{inp.question}"

    @classmethod
    def extract(cls, inp: FollowUpInput, nlp: TextToolkit) -> FollowUpOutput:
        # a composed question: its next sub-question, the earlier hops' answers put in place
        walk = walk_plan(nlp, decompose(inp.question), inp.hops)
        if walk.next_query is not None:
            return FollowUpOutput(query=walk.next_query)
        if not inp.hops:
            return FollowUpOutput(query=inp.question)
        asked = [inp.question, *(h.query for h in inp.hops)]
        covered = [f"{p.title} {p.text}" for h in inp.hops for p in h.supporting]
        for hop in reversed(inp.hops):  # the newest hop that found something, then older ones
            if found_nothing(hop.answer):
                continue
            named = document_bridge(inp.question, hop)
            bridges = [named] if named and named.lower() not in " ".join(asked).lower() else \
                evidence.bridge_candidates(nlp, inp.question, hop.answer, hop.supporting, asked)
            if bridges:
                # with the words the question still needs; when the passages cover them all, with the
                # question's words less the names of what the hop was about (its titles)
                titles = [p.title for p in hop.supporting]
                rest = evidence.open_terms(nlp, inp.question, covered + [bridges[0]]) or \
                    evidence.open_terms(nlp, inp.question, titles + [bridges[0]])
                return FollowUpOutput(query=" ".join([bridges[0], *rest]))
        # nothing to follow: ask for what the question still needs, in its own words
        rest = evidence.open_terms(nlp, inp.question, covered)
        query = " ".join(rest) if rest else inp.question
        return FollowUpOutput(query=query if query not in asked else inp.question)


# "the bulletin that set X", "which form whose limit ...": the question goes through a document, so the
# document that states the hop's answer is the bridge (by its own name), not a name its passage mentions
_DOCUMENT_ROLE = re.compile(r"\bthe\s+(bulletin|form|memo|memorandum|endorsement|notice|circular|regulation|"
                            r"directive|edition|amendment)\s+(?:that|which|whose)\b",
                            re.I)


def document_bridge(question: str, hop: HopBrief) -> str | None:
    """The short name of the document the hop's answer is stated in, when the question asks through a
    document of that kind and the document's title says it is one ("Bulletin 2022-11")."""
    role = _DOCUMENT_ROLE.search(question)
    if role is None or found_nothing(hop.answer):
        return None
    kind = role.group(1).lower()
    stating = [p for p in hop.supporting if hop.answer and hop.answer in p.text] or hop.supporting[:1]
    return next((short_title(p.title) for p in stating if kind in p.title.lower()), None)


# --- 2. the intermediate answer --------------------------------------------------------------

class IntermediateInput(BaseModel):
    query: str
    passages: list[PassageText]


class IntermediateOutput(BaseModel):
    answer: str = Field(description=f'the answer from the passages only, or exactly "{NO_INFORMATION}"')


class IntermediateAnswer(Step[IntermediateInput, IntermediateOutput]):
    name: ClassVar[str] = "multihop.chain.intermediate_answer"
    role: ClassVar[str] = "read"
    Input = IntermediateInput
    Output = IntermediateOutput
    instructions: ClassVar[str] = (
        "Answer the query from the numbered passages only; do not use outside knowledge and do not guess. "
        f'If the passages do not contain the answer, reply with exactly "{NO_INFORMATION}".'
    )

    @classmethod
    def render_input(cls, inp: IntermediateInput) -> str:
        return f"## Passages\n{_numbered(inp.passages)}\n\n## Query\n{inp.query}"

    @classmethod
    def extract(cls, inp: IntermediateInput, nlp: TextToolkit) -> IntermediateOutput:
        best = best_sentence(nlp, inp.query, inp.passages)
        return IntermediateOutput(answer=best.text if best else NO_INFORMATION)


def best_sentence(nlp: TextToolkit, query: str, passages: list[PassageText]) -> evidence.ScoredSentence | None:
    """The best-supported sentence for `query`, from a passage naming the query's entities when it has any."""
    named = [e.text for e in nlp.entities(query, evidence.BRIDGE_KINDS)]
    allowed = {i for i, p in enumerate(passages)
               if not named or any(evidence.mentions(nlp, evidence.terms(nlp, f"{p.title} {p.text}"), n)
                                   for n in named)}
    for s in evidence.rank_sentences(nlp, query, passages):
        if s.passage in allowed:
            return s if s.coverage >= MIN_SUPPORT else None
    return None


# --- 3. the supporting passages --------------------------------------------------------------

class SupportInput(BaseModel):
    query: str
    answer: str
    passages: list[PassageText]


class SupportOutput(BaseModel):
    indices: list[int] = Field(description="the numbers of the passages that support the answer")


class SupportedPassages(Step[SupportInput, SupportOutput]):
    name: ClassVar[str] = "multihop.chain.supported_passages"
    role: ClassVar[str] = "filter"
    Input = SupportInput
    Output = SupportOutput
    instructions: ClassVar[str] = (
        "Given the numbered passages and a query with its answer, select the passages that support the "
        "answer. Reply with the list of their numbers (may be empty)."
    )

    @classmethod
    def render_input(cls, inp: SupportInput) -> str:
        return f"## Passages\n{_numbered(inp.passages)}\n\n## Query\n{inp.query}\n\n## Answer\n{inp.answer}"

    @classmethod
    def extract(cls, inp: SupportInput, nlp: TextToolkit) -> SupportOutput:
        said = evidence.terms(nlp, f"{inp.query} {inp.answer}")
        keep = [i for i, p in enumerate(inp.passages, start=1)
                if inp.answer in p.text or evidence.mentions(nlp, said, p.title)]
        return SupportOutput(indices=keep)


def guard_indices(indices: list[int], size: int) -> list[int]:
    """The indices that name one of `size` passages, once each, in the order given.

    A model may answer with positions that do not exist (or negative ones, which
    Python would happily read from the end); those are dropped, never used.
    """
    seen: set[int] = set()
    out = []
    for i in indices:
        if 0 <= i < size and i not in seen:
            seen.add(i)
            out.append(i)
    return out


# --- 4. (optional) early stop ----------------------------------------------------------------

class SufficiencyInput(BaseModel):
    question: str
    hops: list[HopBrief]


class SufficiencyOutput(BaseModel):
    sufficient: bool = Field(description="true when the hops so far answer the main question")


class Sufficiency(Step[SufficiencyInput, SufficiencyOutput]):
    name: ClassVar[str] = "multihop.chain.sufficiency"
    role: ClassVar[str] = "reflect"
    Input = SufficiencyInput
    Output = SufficiencyOutput
    instructions: ClassVar[str] = (
        "Given the main question and the intermediate queries and answers so far, judge whether they hold "
        "enough information to answer the main question."
    )

    @classmethod
    def render_input(cls, inp: SufficiencyInput) -> str:
        return f"## Intermediate queries and answers\n{_chain(inp.hops)}\n\n## Main question\n{inp.question}"

    @classmethod
    def extract(cls, inp: SufficiencyInput, nlp: TextToolkit) -> SufficiencyOutput:
        # enough when every question word is covered by support and the newest hop's answer
        # names something of the asked-for kind (a date for "when", a name for "who") beyond the chain
        if not inp.hops or found_nothing(inp.hops[-1].answer):
            return SufficiencyOutput(sufficient=False)
        plan = decompose(inp.question)
        if len(plan) > 1:  # a composed question: done once a hop answered its last relation
            return SufficiencyOutput(sufficient=walk_plan(nlp, plan, inp.hops).concluding is not None)
        covered = [f"{p.title} {p.text}" for h in inp.hops for p in h.supporting]
        if evidence.open_terms(nlp, inp.question, covered):
            return SufficiencyOutput(sufficient=False)
        span = answer_span(nlp, inp.question, inp.hops[-1].answer, [h.query for h in inp.hops])
        return SufficiencyOutput(sufficient=span is not None)


# --- 5. the final answer ---------------------------------------------------------------------

class ChainAnswerInput(BaseModel):
    question: str
    hops: list[HopBrief]
    passages: list[PassageText] = Field(description="the supporting passages of all hops, numbered from 1")


class CitedAnswer(BaseModel):
    answer: str = Field(description="the answer, citing passages as [n]")
    citations: list[int] = Field(default_factory=list, description="the passage numbers cited")

    def numbers(self) -> list[int]:
        """The passage numbers the answer cites: its list, then the [n] in its text, once each."""
        return list(dict.fromkeys([*self.citations, *cited_numbers(self.answer)]))


def uncited(out: CitedAnswer, passages: int) -> str | None:
    """What a chat model must fix when its answer cites none of the `passages` (numbered from 1);
    an honest "nothing found" needs no citation."""
    if found_nothing(out.answer):
        return None
    return citation_problem(out.answer, range(1, passages + 1), also_cited=out.citations)


class ChainAnswer(Step[ChainAnswerInput, CitedAnswer]):
    name: ClassVar[str] = "multihop.chain.answer"
    role: ClassVar[str] = "answer"
    Input = ChainAnswerInput
    Output = CitedAnswer
    instructions: ClassVar[str] = (
        "Answer the main question using the intermediate queries and answers and the numbered passages. "
        "Be aware that the intermediate answers may be wrong: check them against the passages. Cite the "
        "passages you use as [n]. Be concise."
    )

    @classmethod
    def render_input(cls, inp: ChainAnswerInput) -> str:
        numbered = "\n\n".join(numbered_source(i, p.title, p.text) for i, p in enumerate(inp.passages, start=1))
        return (f"## Passages\n{numbered}\n\n## Intermediate queries and answers\n{_chain(inp.hops)}\n\n"
                f"## Main question\n{inp.question}")

    @classmethod
    def check(cls, inp: ChainAnswerInput, out: CitedAnswer) -> str | None:
        return uncited(out, len(inp.passages))

    @classmethod
    def extract(cls, inp: ChainAnswerInput, nlp: TextToolkit) -> CitedAnswer:
        found = [h for h in inp.hops if not found_nothing(h.answer)]
        if not found:
            return CitedAnswer(answer=NO_INFORMATION, citations=[])
        # the concluding hop: the one whose answer covers most of what the question still asked
        # before it (later hops win ties); measured on MuSiQue and HotpotQA against "the last hop"
        # and "the last hop with new evidence", which score lower EM and F1
        best, best_score, covered = found[0], -1.0, []
        at = walk_plan(nlp, decompose(inp.question), inp.hops).concluding
        concluding = inp.hops[at] if at is not None else None
        for hop in [] if concluding and not found_nothing(concluding.answer) else found:
            still = evidence.terms(nlp, " ".join(evidence.open_terms(nlp, inp.question, covered)))
            if still:
                score = len(still & evidence.terms(nlp, hop.answer)) / len(still)
                if score >= best_score:
                    best, best_score = hop, score
            covered += [f"{p.title} {p.text}" for p in hop.supporting]
        if concluding and not found_nothing(concluding.answer):
            best = concluding  # a composed question: the hop that asked its last relation
        parts, cited = [], []
        for hop in [best, *(h for h in found if h is not best)]:
            if any(hop.answer in part for part in parts):
                continue
            n = next((i for i, p in enumerate(inp.passages, start=1) if hop.answer in p.text), None)
            if n is None:  # a model's own words (a chat model wrote the hop): the passages the hop relied on
                n = next((i for i, p in enumerate(inp.passages, start=1) for s in hop.supporting
                          if p.text == s.text), None)
            if n is None:
                continue  # nothing here states it: no claim without a source
            parts.append(f"{hop.answer} [{n}]")
            if n not in cited:
                cited.append(n)
        if not parts:
            return CitedAnswer(answer=NO_INFORMATION, citations=[])
        return CitedAnswer(answer=" ".join(parts), citations=cited)
