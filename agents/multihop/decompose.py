"""A composed question taken apart into the simple questions it nests, innermost first.

MuSiQue-style questions compose relations: "Who is the spouse of the director
of Jump for Glory?" is "director of Jump for Glory" (#1), then "Who is the
spouse of #1?". The extractive chain walks such a plan: each hop asks one
sub-question with the earlier hops' answers put in place of `#n`, takes the
entity of that sub-question's answer type as the hop's answer, and the plan's
length says when the chain has reached the final entity.

What makes a nested relation, read from the question's shape alone:
- a relative clause after a noun: "the city where X was born", "the association
  which published X", "the person who broke ..." (also without the pronoun:
  "the country Signmark is from");
- a possessive on a name: "Big Eye's main director", "Damerjog's country";
- a description inside another one's "of": "the spouse of the director of X".
A clause starts at its head noun and runs to the end of the question (they nest
to the right), or to a comma when it opened after one.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from agents.answer.analysis import AnswerType, analyze, asked_type, head_type
from agents.lm.nlp import TextToolkit

_WH = frozenset("what which who whom whose where when how".split())

_REL = r"where|which|who|whom|whose|that|when"
_ARTICLE = r"(?:[Tt]he|[Aa]n?)"
_FUNCTION = (r"(?!(?:of|in|at|on|by|for|to|from|with|and|or|is|was|are|were|has|had|did|does|do|be|been|"
             r"the|a|an|his|her|its|their|that|which|who|where|when)\b)")
# a noun phrase of lower-case content words (at most three) heading a clause: "city", "live album"
_HEAD = rf"(?:{_FUNCTION}[a-z][\w-]*\s+){{0,2}}?{_FUNCTION}[a-z][\w-]*"
_PREP_REL = r"(?:in|at|on|of|from|by|for|to|with)\s+(?:which|whom)"
_NAME = r"(?:[A-Z][\w.'’-]*|#\d+)(?:\s+(?:(?:of|the|and|for|in|de|von|van)\s+)*(?:[A-Z\d][\w.'’-]*|#\d+))*"
# "the city where ...", "the state, in which ...", "the association which ..."
_RELATIVE = re.compile(rf"\b{_ARTICLE}\s+({_HEAD}),?\s+(?:{_PREP_REL}|{_REL})\s+")
# "the country Signmark is from", "the state the Battle of Mine Creek was fought": a noun, a name, a verb
_REDUCED = re.compile(rf"\b{_ARTICLE}\s+({_HEAD})\s+(?=(?:the\s+)?{_NAME}\s+(?:is|was|are|were|has|had)\b(?!\s+(?:the\s+)?[A-Z]))")
# "Big Eye's main director", "Barry Wesson's team": a capitalised name, "'s", lower-case words
_POSSESSIVE = re.compile(rf"((?:[A-Z][\w.-]*\s+)*[A-Z][\w.-]*)['’]s\s+((?:{_FUNCTION}[a-z][\w-]*\s*){{1,3}})"
                         r"((?:of\s+[a-z][\w-]*)?)")
# "the director of Jump for Glory": a relation of a named thing, inside a longer question
_DESCRIPTION = re.compile(rf"\b[Tt]he\s+({_HEAD})\s+of\s+(?:the\s+)?({_NAME})")
# The question's own predicate ("Who is the spouse of X", "What is the population of X"): not nested.
_PREDICATE = re.compile(r"^\W*(?:(?:(?:in|at|on|from|by|for|to|of)\s+)?(?:who|whom|whose|what|which|when|where|how)"
                        r"(?:\s+[a-z]+)?\s+(?:is|was|are|were)|name|list|identify|give)\s+$", re.I)
# a wh-phrase and its auxiliary: what follows is the question's subject
_SUBJECT = re.compile(r"^\W*(?:(?:in|at|on|from|by|for|to|of)\s+)?(?:who|whom|whose|what|which|when|where|how)"
                      r"(?:\s+[a-z]+){0,2}?\s+(?:did|does|do|was|were|is|are|has|have|had)\s+$", re.I)
_AUX = re.compile(r"\s+(?:is|was|are|were|has|had|have|did|does)\b")
# a verb of the clause's own (past tense or participle): an auxiliary after it starts the sentence's next verb
_VERB = re.compile(r"\b(?:[a-z]+ed|is|was|are|were|born|died|made|won|got|held|built|wrote|grew|began|broke|"
                   r"taken|given|written|known|seen|chosen)\b")
_PLACEHOLDER = re.compile(r"#(\d+)")
# "is located refuse ...": a passive participle, then a bare verb that is not a preposition or an auxiliary
_PASSIVE_THEN_VERB = re.compile(r"\b(?:is|was|are|were)\s+(?:[a-z]+ed|born|made|held|built|found|known)"
                                r"(\s+(?!(?:in|at|on|by|of|from|to|with|near|for|as|and|or|the|a|an|is|was|are|were|"
                                r"has|had|have)\b)[a-z][\w-]*)")


class SubQuestion(BaseModel):
    text: str = Field(description="the sub-question; #n stands for the answer of step n (from 1)")
    answer_type: AnswerType


def decompose(question: str) -> list[SubQuestion]:
    """The plan: simple questions innermost first, the last one the question's own relation.
    A question with no nested relation is a plan of one step, itself."""
    q = " ".join(question.split())
    last_type, _, _ = asked_type(q)
    if analyze(TextToolkit(), q).answer_type in ("comparison", "yes_no"):  # two things side by side: no chain
        return [SubQuestion(text=q, answer_type=last_type)]
    if len(re.findall(r"[a-z0-9)\"”']{2}[.!?]\s+[A-Z]", q)):  # a question set up over several sentences: as is
        return [SubQuestion(text=q, answer_type=last_type)]
    steps: list[str] = []
    outer = _split(q.rstrip(" ?"), steps)
    plan = [SubQuestion(text=s, answer_type=_fragment_type(s)) for s in steps]
    return plan + [SubQuestion(text=outer.strip() + "?", answer_type=last_type)]


def _split(text: str, steps: list[str]) -> str:
    """`text` with every nested relation replaced by `#n`, its steps appended to `steps` innermost first."""
    for find in (_relative, _possessive, _nested_of):
        hit = find(text)
        if hit is None:
            continue
        start, end, inner = hit
        inner_outer = _split(inner, steps)  # the clause may nest further ("the city where the performers of X ...")
        steps.append(inner_outer)
        return _split(f"{text[:start]}#{len(steps)}{text[end:]}", steps)
    return text


def _relative(text: str) -> tuple[int, int, str] | None:
    for pattern in (_RELATIVE, _REDUCED):
        for m in reversed(list(pattern.finditer(text))):  # the innermost (rightmost) clause first
            # the clause ends at a comma, or before an auxiliary that follows its verb ("the city where X
            # was born is located ..."), else at the end of the question
            comma = re.compile(r",\s*(?=[a-z])").search(text, m.end())  # not the comma of "Leland, North Carolina"
            end = comma.start() if comma else len(text)
            for aux in _AUX.finditer(text, m.end(), end):
                if _VERB.search(text[m.end():aux.start()]):
                    end = aux.start()
                    break
            if end == len(text) and _SUBJECT.match(text[:m.start()]):
                # the clause is the subject ("What instrument did [the engineer who rebuilt X] play"):
                # the question's own verb closes it
                verb = re.search(r"(?:\s|^)(?:[A-Z\d][\w.'’-]*|#\d+)(\s+[a-z][\w-]*)$", text[m.end():end])  # after a name
                # ... or after the clause's own passive verb ("[the country where #1 is located] refuse to ...")
                verb = verb or _PASSIVE_THEN_VERB.search(text[m.end():end])
                end = m.end() + verb.start(1) if verb else end
            clause = text[m.end():end].strip(" ,")
            if not re.search(r"[A-Z#\d]", clause) or re.search(r"\b(?:what|how)\b", clause, re.I) \
                    or not (_VERB.search(clause) or re.search(r"\b[a-z]{3,}\b(?=.*\s\S)", clause)):
                continue  # nothing named to look up, the question's own wh-phrase ("... is what?"), or no verb
            inner = re.sub(r"\s*,\s*", " ", text[m.start(1):end].strip(" ,"), count=1)
            return m.start(), end, inner
    return None


def _possessive(text: str) -> tuple[int, int, str] | None:
    for m in _POSSESSIVE.finditer(text):
        owner, owned = m.group(1).split(), m.group(2).split()
        while owner and owner[0].lower() in _WH:
            owner = owner[1:]
        if not owner:
            continue
        end = m.start(2) + len(m.group(2).rstrip())
        rest = text[end:]
        # a word past the first that runs on into more of the sentence is its verb ("team play in ...")
        # ... or the question's last word when the phrase is its subject ("In which city was X's designer born")
        if len(owned) > 1 and not m.group(3) and (
                not re.match(r"\s*(?:$|[?,.]|(?:is|was|are|were|has|had)\b)", rest)
                or _SUBJECT.match(text[:m.start(1)]) and not rest.strip(" ?")):
            owned = owned[:-1]
            end = m.start(2) + len(" ".join(owned))
        if m.group(3) and len(owned) == len(m.group(2).split()):
            owned = [*owned, *m.group(3).split()]
            end = m.end(3)
        name = " ".join(owner)
        return text.find(name, m.start(1)), end, f"{' '.join(owned)} of {name}"
    return None


def _nested_of(text: str) -> tuple[int, int, str] | None:
    for m in _DESCRIPTION.finditer(text):
        if _PREDICATE.match(text[:m.start()]):
            continue  # the question's own relation
        if head_type(m.group(1).split()) == "place" and not m.group(2).startswith("#"):
            continue  # "the village of Clonbrook" is a name, not a relation
        if re.search(r"(?:an|ian|ese|ish|ic)$", m.group(2)) and re.match(r"\s+[a-z]", text[m.end():]):
            continue  # "the daughter of the English nobleman": a name used as an adjective
        if re.match(r",?\s+(?:is|was|are|were)\s+(?:the\s+)?[A-Z]", text[m.end():]):
            continue  # "the late President of X was Chiang Kai-shek": the question names it already
        return m.start(), m.end(), f"{m.group(1)} of {text[m.start(2):m.end()]}"
    return None


def _fragment_type(text: str) -> AnswerType:
    """The answer type of a clause from its head noun ("city where ..." a place, "director of X" a person)."""
    return head_type(re.split(r"\s+(?:of|where|which|who|whom|whose|that|when|in|at|on|from|by)\s+|,", text)[0]
                     .lower().split())


def substitute(text: str, answers: list[str | None]) -> str | None:
    """`text` with each `#n` replaced by step n's answer; None while one of them is missing."""
    missing = False

    def put(m: re.Match) -> str:
        nonlocal missing
        n = int(m.group(1))
        if n > len(answers) or not answers[n - 1]:
            missing = True
            return m.group()
        return answers[n - 1] or ""

    out = _PLACEHOLDER.sub(put, text)
    return None if missing else out
