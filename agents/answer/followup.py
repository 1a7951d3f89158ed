"""Follow-up questions: rewrite "When did he sign it?" into a standalone question from the dialogue.

A dialogue is a list of `Turn`s (the question as asked, its standalone form, the
short answer). Offline, `RewriteFollowUp.extract` resolves co-reference and
ellipsis from the entities of earlier turns: a personal pronoun (he, she, his,
her, him) becomes the newest person-like name (a short answer first, then the
names a question used), a thing pronoun (it, its, this, that) the newest
non-person entity (an answer, then what the question named), "they/their/them" the newest
entity; an elliptical turn ("What about Bulletin 2023-07?", "And the CY-2?")
takes the previous standalone question with its main entity replaced. A chat
model runs the same step.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field, ValidationError

from agents.answer.analysis import question_entities
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from retrieval.errors import UsageError

_PERSON_PRONOUN = re.compile(r"\b(he|she|him|his|her|hers|himself|herself)\b", re.I)
_THING_PRONOUN = re.compile(r"\b(it|its|this|that one|this one)\b", re.I)
_PLURAL_PRONOUN = re.compile(r"\b(they|them|their)\b", re.I)
_ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about)\s+(?:the\s+)?(.+?)\s*\??\s*$", re.I)
_POSSESSIVE = {"his": "'s", "her": "'s", "its": "'s", "their": "'s", "hers": "'s"}


class Turn(BaseModel):
    question: str
    standalone: str = ""  # the question as answered (rewritten when it was a follow-up)
    short_answer: str | None = None
    guess: str | None = None  # the best candidate when raystorm abstained: still what "he" or "it" may mean
    answer_type: str | None = None


class Dialogue(BaseModel):
    turns: list[Turn] = Field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> "Dialogue":
        """The turns in `path` (none when it does not exist yet)."""
        if not path.exists():
            return cls()
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8") or "{}")
        except ValidationError as exc:
            raise UsageError(f"--history {path}: not a raystorm dialogue ({exc.errors()[0]['msg']}); "
                             "give a new file name, or one `raystorm ask --history` wrote") from None

    def save(self, path: Path) -> None:
        path.write_text(self.model_dump_json(indent=1), encoding="utf-8")


class RewriteInput(BaseModel):
    question: str
    turns: list[Turn] = Field(default_factory=list, description="earlier turns, oldest first")


class RewriteOutput(BaseModel):
    standalone: str = Field(description="the question rewritten to stand alone, or the question itself")


class RewriteFollowUp(Step[RewriteInput, RewriteOutput]):
    name: ClassVar[str] = "answer.rewrite"
    role: ClassVar[str] = "plan"
    Input = RewriteInput
    Output = RewriteOutput
    instructions: ClassVar[str] = (
        "Rewrite the last question so that it can be understood without the dialogue: replace pronouns and "
        "references (he, she, it, that bulletin) with what they refer to in the earlier turns, and complete "
        "elliptical questions (\"what about X?\") from the previous question. Change nothing else. If the "
        "question already stands alone, return it unchanged."
    )

    @classmethod
    def extract(cls, inp: RewriteInput, nlp: TextToolkit) -> RewriteOutput:
        return RewriteOutput(standalone=rewrite(nlp, inp.question, inp.turns))


_THING_WORDS = frozenset("bridge street road company river bulletin form policy memo museum university college "
                         "school church hall lane bay park city county state party club band team".split())


def _people_and_things(nlp: TextToolkit, turns: list[Turn]) -> tuple[list[str], list[str]]:
    """Person-like names and other entities of the turns, newest first: short answers typed as people
    (or shaped like a name) are people; what the questions named are things, unless shaped like a name
    and nothing else is a person."""
    people: list[str] = []
    things: list[str] = []
    named_people: list[str] = []
    for turn in reversed(turns):
        answer = turn.short_answer or turn.guess or ""
        # the newest mention is the most salient: a turn's answer, then what its question named
        if answer and (turn.answer_type == "person" or _looks_like_person(answer)):
            people.append(answer)
        elif answer and turn.answer_type not in ("yes_no", "date", "number"):
            things.append(answer)
        for e in question_entities(nlp, turn.standalone or turn.question):
            (named_people if _looks_like_person(e) else things).append(e)
    return people or named_people, things + ([] if not people else named_people)


def _looks_like_person(text: str) -> bool:
    words = text.split()
    return (2 <= len(words) <= 4 and all(w[:1].isupper() and w.replace("-", "").isalpha() for w in words)
            and words[-1].lower() not in _THING_WORDS)


def rewrite(nlp: TextToolkit, question: str, turns: list[Turn]) -> str:
    if not turns:
        return question
    people, things = _people_and_things(nlp, turns)
    ellipsis = _ELLIPSIS.match(question)
    if ellipsis and not re.search(r"\b(who|what|when|where|which|how)\b", ellipsis.group(1), re.I):
        previous = turns[-1].standalone or turns[-1].question
        new = ellipsis.group(1).strip()
        old = question_entities(nlp, previous)
        if old:
            # the earlier entity of the same kind as the new one (a bulletin for a bulletin), else the first
            kind = _kind(nlp, new)
            same = [e for e in old if _kind(nlp, e) == kind and _looks_like_person(e) == _looks_like_person(new)]
            return previous.replace((same or old)[0], new, 1)
    out = question

    def person(m: re.Match) -> str:
        word = m.group(1).lower()
        if not people:
            return m.group(0)
        if word == "his" or (word == "her" and _before_noun(out, m.end())):
            return people[0] + "'s"
        return people[0]

    def thing(m: re.Match) -> str:
        if not things:
            return m.group(0)
        return things[0] + _POSSESSIVE.get(m.group(1).lower(), "")

    def plural(m: re.Match) -> str:
        pool = things or people
        if not pool:
            return m.group(0)
        return pool[0] + _POSSESSIVE.get(m.group(1).lower(), "")

    out = _PERSON_PRONOUN.sub(person, out)
    out = _THING_PRONOUN.sub(thing, out)
    out = _PLURAL_PRONOUN.sub(plural, out)
    return out


def _kind(nlp: TextToolkit, text: str) -> str:
    found = nlp.entities(text)
    return found[0].kind if found else "name"


def _before_noun(text: str, end: int) -> bool:
    """'her' followed by a noun is a possessive ("her employer"), else an object ("hired her")."""
    after = re.match(r"\s+(\w+)", text[end:])
    return bool(after) and after.group(1).lower() not in {
        "to", "in", "on", "at", "for", "by", "and", "or", "as", "before", "after", "with", "from", "about"}
