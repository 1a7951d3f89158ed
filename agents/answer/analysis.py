"""Question analysis: what kind of thing the question asks for, and what it names.

The answer type steers everything after it: which entities of the evidence are
candidates (a date for "when", a name for "who"), how candidates are fused
(consensus, an explicit comparison for "which of A or B", a yes/no decided from
the evidence) and what an abstention says ("no passage states ...").
Offline the type comes from the question's wh-words and shape; a chat model runs
the same step.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from agents.answer.values import SIZE_UNITS, TIME_UNITS, fits, parse_value
from agents.lm.nlp import TextToolkit
from agents.lm.steps import Step
from agents.lm.text.entities import EntityKind

AnswerType = Literal["person", "place", "date", "number", "yes_no", "comparison", "list", "free_text"]
# What a number answer measures: a duration ("30 days"), a sum of money ("$1,000"), a count ("4", "2,913,123"),
# a size in units of length, area, weight ... ("6.8 inches"), a share ("12%").
Measure = Literal["", "duration", "amount", "count", "size", "percent"]

# The entity kinds a candidate of each type may be.
TYPE_KINDS: dict[str, tuple[EntityKind, ...]] = {
    "person": ("name",), "place": ("name",), "date": ("date",), "number": ("quantity", "number"),
    "list": ("name",), "free_text": ("name", "reference", "code"), "comparison": ("name",), "yes_no": (),
}
_AUXILIARY = re.compile(r"^\s*(is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.I)
_LIST = re.compile(r"\b(list|name all|which \w+ (are|were) (both|all))\b", re.I)
_CHOICE = re.compile(r"\b(which|who|what)\b.*\bor\b", re.I)
_ASK_WORDS = frozenset("who whom whose what which when where why how is are was were do does did has have had "
                       "can could will would should in on of at for by".split())
# The asking clause is the last one ("Memo CM-24-05 names a bulletin; who signed it?").
_CLAUSES = re.compile(r"[;:]\s+|(?<=[a-z0-9\"”')]{2}[.!?])\s+(?=[A-Z])")  # not after "Mr." or "E."
_WH = r"who|whom|whose|what|which|when|where|how"
# A question word that opens the clause, after at most a preposition ("In which city", "From what date").
_FRONTED = re.compile(rf"^\W*(?:(?:in|at|on|from|by|for|to|of|during|since|until|after|before|with|into|within|"
                      rf"above|below|over|under|beyond|up to)\s+)?"
                      rf"({_WH})\b", re.I)
# A question word left in place, its phrase running to the end ("... released by what label?", "based where?").
_IN_PLACE = re.compile(rf"^.*\b({_WH})\b((?:[\s,]+[\w'’&-]+){{0,8}})[\s?.]*$", re.I)
_WHAT = re.compile(r"\b(what)\b", re.I)  # rarely a relative pronoun, unlike who, which, where, when
_ANY_WH = re.compile(r"\b(which|name)\b", re.I)
# Relative timing: "When does coverage begin after the rider is purchased?" asks for a duration.
_RELATIVE_TIME = re.compile(r"\b(begin|begins|start|starts|end|ends|expire|expires|apply|applies|lapse|lapses|"
                            r"kick in|take effect|takes effect)\b.*\b(after|before|following|from)\b", re.I)
# A source or scope named before the question proper ("Under Bulletin B-2016-04, ...", "According to the 2018
# edition of Form HO-3, ..."): no question word in it, a comma after it.
_SCOPE = re.compile(rf"^\W*(?:under|according to|in|per|pursuant to|as of|for|based on|as (?:set|stated) (?:in|by))\s+"
                    rf"[^?]{{1,100}}?,\s*(?=(?:(?:in|within|for|at|by|on|under|to|from|after|before)\s+)?(?:{_WH})\b)",
                    re.I)
_COUNTED_TIME = re.compile(r"\s+many\s+(?:business|calendar|working|full|consecutive|additional|further|banking|"
                           r"school|court)\s+(?:days?|weeks?|months?|years?|hours?)\b", re.I)
_TIME_UNITS = frozenset("second seconds minute minutes hour hours day days week weeks month months year years "
                        "decade decades business-day business-days".split())
# Words that end the wh-phrase's noun phrase ("what city [are the offices ...]").
_PHRASE_END = frozenset("of for under in on at to by with from into about as than that which who whom whose where "
                        "when why how is are was were be been do does did has have had can could will would should "
                        "may might must shall the a an his her its their this these those now today currently presently "
                   "then before after until since prior per".split())
_SKIP = re.compile(r"^(?:(?:is|was|are|were|'s)\s+)?(?:(?:the|a|an)\s+)?(?:(?:kind|type|sort|name|one)\s+of\s+"
                   r"(?:the\s+|a\s+|an\s+)?)?(?:of\s+(?:the\s+)?)?", re.I)
# Head nouns of the wh-phrase, by the answer they ask for (singular; a plural "s"/"es" is stripped).
_HEADS: dict[str, tuple[AnswerType, Measure]] = {}
for _words, _typed in [
    ("year date month decade century day", ("date", "")),
    ("period duration wait waiting lifespan tenure delay runtime deadline", ("number", "duration")),
    ("deductible limit sublimit fee cost price premium amount payment payout charge fine salary wage budget "
     "revenue debt payable copay copayment coinsurance reimbursement allowance rent tax toll fare worth asset capital "
     "income earning penalty surcharge deposit", ("number", "amount")),
    ("population capacity attendance enrollment enrolment membership", ("number", "count")),
    ("height length distance weight speed temperature snowfall rainfall precipitation elevation altitude "
     "depth width", ("number", "size")),
    ("percentage percent share interest", ("number", "percent")),
    # a rate may be a percentage (interest, tax) or an amount (a berthing rate per metre, a mileage rate)
    ("age figure value threshold floor cap ceiling minimum maximum rate most least", ("number", "")),
    (" ".join(SIZE_UNITS), ("number", "size")),
    (" ".join(TIME_UNITS - {"day", "month", "year", "decade"}), ("number", "duration")),
    ("city country county state town location region place continent province island village river district "
     "nation territory capital birthplace headquarters neighborhood neighbourhood suburb municipality borough "
     "street address lake mountain sea ocean", ("place", "")),
    ("person man woman actor actress author writer player singer director president king queen politician "
     "composer artist founder rapper senator governor mother father son daughter wife husband spouse brother "
     "sister child leader coach musician painter poet novelist producer screenwriter footballer athlete "
     "candidate chairman emperor prince princess pope bishop minister officer commander scientist "
     "inventor architect engineer designer presenter journalist editor comedian dj drummer guitarist "
     "vocalist philosopher economist mayor ceo signer signatory", ("person", "")),
]:
    for _w in _words.split():
        _HEADS[_w] = _typed
# "deductible applies", "plane dropped", "author wrote": a verb after the head noun
_VERBAL = re.compile(r"(ed|es|s|ing)$|^(wrote|won|made|became|began|took|gave|led|ran|met|held|built|sang|fought|"
                     r"found|left|bought|sold|taught|drew|grew|knew|flew|threw|saw|came|went|got|had|did|"
                     r"brought|thought|told|said|wore|rose|fell|shot|hit|set|put|beat|bore|broke|chose|spoke|stole)$")
_HOW = {"many": "count", "much": "amount", "long": "duration", "old": "", "far": "", "tall": "", "big": "",
        "large": "", "high": "", "often": "count", "soon": "duration", "early": "duration"}
# Words naming a bound on a measure ("length limit", "horsepower threshold", "time limit"): the word before
# them says what is measured; "maximum number" is a count.
_BOUNDS = frozenset("limit limits cap caps ceiling floor threshold minimum maximum max min".split())
_MEASURED_BY: dict[str, Measure] = {"time": "duration", "number": "count", "dollar": "amount"}
# "... as a percentage?", "... in dollars?", "... in days?": the unit the answer is asked in
_ASKED_IN = re.compile(r"\b(?:as an?|in)\s+(percentage|percent|share|dollars|days|hours|weeks|months|years|"
                       r"minutes)\b", re.I)


class QuestionAnalysis(BaseModel):
    """The answer type, the entities the question names, and for a comparison its two options."""

    answer_type: AnswerType
    measure: Measure = Field("", description="number answers: duration, amount (of money), count, size (in units), "
                                             "percent, or '' for any")
    head: str = Field("", description="the word(s) naming what is asked, e.g. 'spouse', 'waiting period'")
    entities: list[str] = Field(default_factory=list, description="the things the question names")
    options: list[str] = Field(default_factory=list, description="comparison: the two things compared")
    asks_for: str = Field("", description="the asked-for attribute in the question's words, e.g. 'birth date'")


class AnalyzeInput(BaseModel):
    question: str


class AnalyzeQuestion(Step[AnalyzeInput, QuestionAnalysis]):
    name: ClassVar[str] = "answer.analyze"
    role: ClassVar[str] = "answer"
    Input = AnalyzeInput
    Output = QuestionAnalysis
    instructions: ClassVar[str] = (
        "Classify the question by the kind of answer it wants: person, place, date, number, yes_no, "
        "comparison (which of two named things), list, or free_text. List the entities the question names "
        "(as written). For a comparison, give the two things compared as `options`. In `asks_for`, name "
        "the attribute asked for in a few of the question's words, and in `head` the word(s) of the question "
        "naming what is asked ('spouse', 'waiting period'). A question about a duration, a sum of money "
        "(a deductible, a limit, a fee), a count or a size is a number: give what it measures in `measure` "
        "(duration, amount, count, size, percent)."
    )

    @classmethod
    def check(cls, inp: AnalyzeInput, out: QuestionAnalysis) -> str | None:
        if out.answer_type == "comparison" and len(out.options) != 2:
            return "a comparison names exactly two options: give both in `options`, or pick another type"
        return None

    @classmethod
    def extract(cls, inp: AnalyzeInput, nlp: TextToolkit) -> QuestionAnalysis:
        return analyze(nlp, inp.question)


def analyze(nlp: TextToolkit, question: str) -> QuestionAnalysis:
    q = " ".join(question.split())
    entities = question_entities(nlp, q)
    options = choice_options(nlp, q)
    measure: Measure = ""
    kind, measure, head = asked_type(q)
    if options and (_CHOICE.search(q) or _AUXILIARY.search(q)):
        kind, measure = "comparison", ""
    elif _AUXILIARY.search(q):
        kind, measure = "yes_no", ""
    elif _LIST.search(q):
        kind, measure = "list", ""
    named = {w.lower() for e in entities for w in e.split()}
    return QuestionAnalysis(answer_type=kind, measure=measure, entities=entities,
                            head=" ".join(w for w in head if w not in named),
                            options=options if kind == "comparison" else [],
                            asks_for=asked_attribute(nlp, q, entities))


def asked_type(question: str) -> tuple[AnswerType, Measure, list[str]]:
    """The answer type from the question word of the asking clause and the head noun of its phrase:
    "who" a person, "where" a place, "when" a date, "how many/much/long" a number (count, amount,
    duration), "what/which X" by X ("what year" a date, "what waiting period" a duration, "which city" a
    place); and that phrase's words ("Who is the spouse of X?" -> spouse)."""
    clause = [c for c in _CLAUSES.split(question) if c.strip()]
    asking = next((c for c in reversed(clause) if re.search(rf"\b({_WH})\b", c, re.I)), question)
    # "Under Bulletin B-2016-04, within how many ...": the source named up front is not the asking clause
    asking = _SCOPE.sub("", asking, count=1)
    m = _FRONTED.match(asking) or _WHAT.search(asking) or _IN_PLACE.search(asking) or _ANY_WH.search(asking)
    if not m:
        return "free_text", "", []
    word, rest = m.group(1).lower(), asking[m.end(1):]
    head = head_phrase(rest)
    if word in ("who", "whom", "whose"):
        return "person", "", head
    if word == "where":
        return "place", "", []
    if word == "when":
        return ("number", "duration", []) if _RELATIVE_TIME.search(rest) else ("date", "", [])
    if word == "how":
        how = re.match(r"\s+(\w+)(?:\s+(\w+))?", rest)
        if not how or how.group(1).lower() not in _HOW:
            return "free_text", "", []
        if how.group(1).lower() == "long" and (how.group(2) or "").lower() == "ago":
            return "date", "", []
        if how.group(1).lower() == "many" and (how.group(2) or "").lower() in _TIME_UNITS:
            return "number", "duration", []
        if how.group(1).lower() == "many" and _COUNTED_TIME.match(rest):
            return "number", "duration", []  # "how many business days", "how many calendar months"
        if how.group(1).lower() == "far" and re.match(r"\s+far\s+(?:in advance|ahead|beforehand)", rest, re.I):
            return "number", "duration", []  # "how far in advance must notice be given"
        return "number", _HOW[how.group(1).lower()], head[1:]  # type: ignore[return-value]
    kind, measure = _typed_head(head)
    asked_in = _ASKED_IN.search(rest)
    if kind == "number" and asked_in:
        unit = asked_in.group(1).lower()
        measure = {"percentage": "percent", "percent": "percent", "share": "percent",
                   "dollars": "amount"}.get(unit, "duration")
    return kind, measure, head


def head_phrase(after_wh: str) -> list[str]:
    """The noun phrase after "what"/"which", lower-case: "is the current waiting period for X" -> current
    waiting period; "kind of plane dropped the bomb" -> plane dropped."""
    text = _SKIP.sub("", after_wh.strip(" ,"), count=1)
    words: list[str] = []
    for w in re.findall(r"[\w'’$%-]+|,", text):
        lw = w.lower()
        if lw in _PHRASE_END or len(words) == 6:
            break
        if lw not in (",", "and"):
            words.append(lw)
    return words


def head_type(words: list[str]) -> AnswerType:
    """The answer type a noun phrase asks for, by its head noun ("birth city" a place, "main director" a person)."""
    return _typed_head(words)[0]


def _typed_head(words: list[str]) -> tuple[AnswerType, Measure]:
    if words and words[0] == "number":  # "what number"; "which filing number" is a code
        return "number", "count"
    if len(words) >= 2 and words[-1] in _BOUNDS | {"number"} and (words[-2] in _BOUNDS or words[-1] in _BOUNDS):
        # "maximum number" a count; "length limit" a size, "time limit" a duration, "special limit" by "limit"
        measured = words[-2] if words[-1] in _BOUNDS else ""
        if words[-1] == "number":
            return "number", "count"
        if measured in _MEASURED_BY:
            return "number", _MEASURED_BY[measured]
        if measured in _HEADS and _HEADS[measured][0] == "number":
            return _HEADS[measured]
    for at in range(len(words) - 1, -1, -1):
        w = words[at]
        for form in (w, w[:-1] if w.endswith("s") else w, w[:-2] if w.endswith("es") else w):
            if form in _HEADS:
                return _HEADS[form]
        if not _VERBAL.search(w):  # a noun after it is the head ("low budget comedy franchise")
            break
    if any(w in ("minimum", "maximum") for w in words[:-1]):  # "the maximum insurable earnings": a number
        return "number", ""
    return "free_text", ""


def question_entities(nlp: TextToolkit, question: str) -> list[str]:
    """Named things in the question, the question's own capitalised first word ("Who", "Which") aside."""
    out: list[str] = []
    for e in nlp.entities(question, ("date", "reference", "code", "name", "quantity")):
        text = e.text
        first, _, rest = text.partition(" ")
        if first.lower() in _ASK_WORDS:
            text = rest
        if text and text.lower() not in _ASK_WORDS and text not in out:
            out.append(text)
    return out


def choice_options(nlp: TextToolkit, question: str) -> list[str]:
    """The two things of "... A or B?": the named thing ending just before the last " or " and the
    one starting just after it ("Which came first, the forming of X or the birth of Y?" -> X, Y)."""
    at = question.lower().rfind(" or ")
    if at < 0:
        return []
    before, after = question[:at], question[at + 4:]
    kinds = ("name", "reference", "code", "date")
    left = [e for e in nlp.entities(before, kinds) if len(before[e.end:].split()) <= 1]
    right = [e for e in nlp.entities(after, kinds) if len(after[:e.start].split()) <= 3]
    if not left or not right:
        return []
    return [_trim(left[-1].text), _trim(right[0].text)]


def _trim(text: str) -> str:
    text = re.sub(r"^(the|a|an)\s+", "", text.strip(" ,\"'“”"), flags=re.I)
    return text.strip(" ,\"'“”")


def _named(nlp: TextToolkit, text: str) -> bool:
    return bool(nlp.entities(text, ("name", "reference", "code", "date")))


_RELATIVE = re.compile(r"\b(where|who|whom|whose|that|which|when)\b", re.I)


def asked_attribute(nlp: TextToolkit, question: str, entities: list[str]) -> str:
    """The question's head clause in content words, less what it names: the relation the last hop
    must state ("What is the average snowfall in the city where X was formed?" -> "average snowfall city")."""
    head = question
    for m in _RELATIVE.finditer(question):
        if len(question[:m.start()].split()) >= 2:
            head = question[:m.start()]
            break
    named = {w.lower() for e in entities for w in e.split()}
    words = [w for w in nlp.words(head)
             if w.lower() not in named and w.lower() not in _ASK_WORDS and not nlp.is_stopword(w)]
    return " ".join(words[:6])


_TIME_UNIT = re.compile(r"\b(seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?)\b", re.I)
_MONEY = re.compile(r"^[$€£¥]|\b(dollars?|euros?|pounds?|yen|rupees?|francs?|marks?|usd|eur|gbp)\b", re.I)
_SIZE_UNIT = re.compile(r"\d\s?(°|(ft|feet|foot|m|metres?|meters?|km|kilometres?|kilometers?|mi|miles?|inch|inches|in|cm|"
                        r"mm|kg|g|lbs?|pounds|tons?|tonnes?|degrees?|mph|km/h|acres?|hectares?|ha|sq|square|"
                        r"knots?|litres?|liters?|gallons?)\b)", re.I)
_BARE_YEAR = re.compile(r"^(1[5-9]\d\d|20\d\d)$")


def fits_measure(text: str, measure: str) -> bool:
    """Whether a number candidate is of the kind the question measures (by the value grammar when the
    candidate is a value it reads: "three hundred dollars" is an amount, "seventy-two (72) hours" a duration)."""
    value = parse_value(text)
    if value is not None and value.kind != "year":
        return fits(value, measure)
    duration, money, size = bool(_TIME_UNIT.search(text)), bool(_MONEY.search(text)), bool(_SIZE_UNIT.search(text))
    percent = "%" in text or bool(re.search(r"\bper ?cent\b", text, re.I))
    if measure == "duration":
        return duration
    if measure == "amount":
        return money or percent
    if measure == "size":
        return size
    if measure == "percent":
        return percent
    if measure == "count":  # a bare number or a number of things; not a year, a rank, a length or a sum
        return not (duration or money or size or percent or _BARE_YEAR.match(text.strip())
                    or re.match(r"^\d+(st|nd|rd|th)$", text.strip()))
    return True
