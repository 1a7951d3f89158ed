"""Values as documents write them: numbers, money, percentages, durations and measures, in digits, in words, or both.

"three hundred dollars", "$300", "five (5) percent", "seventy-two (72) hours", "fifty horsepower",
"1.5 million", "10% of Coverage A" are each one `Value`: the text as written (shown to the reader), a number,
a kind (money, percent, duration, size, count, year) and a unit ("usd", "percent", "hour", "horsepower",
"vehicle"), so two writings of one value compare equal (`same_value`) whatever their words. Durations in
exact units (minutes, hours, days, weeks) compare in seconds; months and years in months.

Numbers that are labels, not values, are not values: "Section 4", "Paragraph 12", "Bulletin B-2021-08",
"HO 00 03", "2018-09", the day of a date ("January 1, 2023"). A bare year (1500-2100) is kind "year".
The grammar is English number words and unit words; nothing here knows a document or a question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_WORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True)) + \
    r"|a(?=\s+(?:hundred|thousand|million|billion)\b)"
# a run of number words: "three hundred", "forty-five", "one thousand two hundred and fifty"
_SPELLED = rf"(?:(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*)"
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_SCALE_AFTER = r"(?:\s+(?P<sc{n}>hundred|thousand|million|billion))?"
# the number itself: words, digits, or words with the digits in brackets ("five (5)", "three hundred ($300)")
_NUMERAL = re.compile(
    rf"(?<![\w.,/-])(?P<cur>[$€£])?\s?(?P<num>{_DIGITS}){_SCALE_AFTER.format(n=1)}(?P<pct>\s?%)?(?![\w/]|-\d|[.,]\d)"
    rf"|(?<![\w-])(?P<words>{_SPELLED})(?!\w|-\w+-)"
    rf"(?:\s*\(\s*(?P<cur2>[$€£])?\s?(?P<num2>{_DIGITS}){_SCALE_AFTER.format(n=2)}(?P<pct2>\s?%)?\s*\))?",
    re.IGNORECASE)
_MONEY_WORDS = {"dollar": "usd", "dollars": "usd", "usd": "usd", "euro": "eur", "euros": "eur", "eur": "eur",
                "pound sterling": "gbp", "cent": "cent", "cents": "cent"}
_CURRENCY = {"$": "usd", "€": "eur", "£": "gbp"}
_PERCENT_WORDS = re.compile(r"^\s*(?:\(\s*\d+(?:\.\d+)?\s?%\s*\)\s*)?(?:%|percent\b|per\s?cent\b|percentage points?\b)",
                            re.I)
# time units and their length in seconds (months and years in months: they are not a fixed number of days)
_TIME = {"second": ("second", 1), "minute": ("second", 60), "hour": ("second", 3600), "day": ("second", 86400),
         "week": ("second", 604800), "fortnight": ("second", 1209600), "month": ("month", 1),
         "year": ("month", 12), "decade": ("month", 120)}
_SIZE = {"foot": "foot", "feet": "foot", "ft": "foot", "inch": "inch", "inches": "inch", "mile": "mile",
         "yard": "yard", "meter": "metre", "metre": "metre", "kilometer": "kilometre", "kilometre": "kilometre",
         "km": "kilometre", "cm": "centimetre", "mm": "millimetre", "horsepower": "horsepower", "hp": "horsepower",
         "pound": "pound", "lb": "pound", "lbs": "pound", "kilogram": "kilogram", "kg": "kilogram", "ton": "ton",
         "tonne": "tonne", "gallon": "gallon", "liter": "litre", "litre": "litre", "acre": "acre",
         "hectare": "hectare", "degree": "degree", "mph": "mph", "knot": "knot", "kilowatt": "kilowatt",
         "kw": "kilowatt", "volt": "volt", "watt": "watt", "square foot": "square foot",
         "square feet": "square foot", "square meter": "square metre", "square metre": "square metre",
         "cubic foot": "cubic foot", "cubic feet": "cubic foot"}
# words that may stand between a number and its unit ("sixty consecutive days", "ten business days")
_UNIT_MODIFIERS = frozenset("calendar business working consecutive full additional more further successive "
                            "clear straight continuous whole".split())
# words before a number that make it a label ("Section 4", "Form 12"), not a value
_LABELS = frozenset("section sections paragraph paragraphs rule rules form forms bulletin bulletins item items part "
                    "parts page pages line lines chapter chapters article articles no no. number clause clauses "
                    "schedule appendix exhibit table figure endorsement edition version subsection step tier "
                    "class code chapter title act route level grade phase year".split())  # "in year 2": a label
_MONTHS = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s*$", re.I)
# a paragraph's number: at a line's start (or after a "...: " framing) and before a capitalised word
_ENUMERATION_BEFORE = re.compile(r"(?:^|\n|[:;]|\))\s*\(?$")
_ENUMERATION_AFTER = re.compile(r"[.)]?\s+[A-Z(“\"*]")  # "(1) *In general.*": a heading in emphasis
_WORD_AFTER = re.compile(r"^[\s-]*([A-Za-z][A-Za-z'’]*)(?:\s+([A-Za-z][A-Za-z'’]*))?(?:\s+([A-Za-z][A-Za-z'’]*))?")
_COUNT_STOP = frozenset("a an the and or of to in on at by for with from per than that which who is are was were be "
                        "been as if this these those it its or nor not no but so such each any all every".split())
_BRACKETED = re.compile(rf"\s*\(\s*[$€£]?\s?(?:{_DIGITS})\s?%?\s*\)")
_QUALIFIER = re.compile(r"^\s*of\s+((?:the\s+)?(?:[A-Z][\w-]*|[A-Z])(?:\s+[A-Z0-9][\w-]*){0,3})")


TIME_UNITS = frozenset(_TIME)  # singular unit words, for question analysis
SIZE_UNITS = frozenset(w for w in _SIZE if " " not in w)


@dataclass(frozen=True)
class Value:
    text: str  # as the document writes it
    number: float
    kind: str  # money, percent, duration, size, count, year
    unit: str = ""  # usd, percent, second / month (durations), horsepower, foot, a counted noun, or ""
    start: int = 0
    end: int = 0

    def key(self) -> tuple[str, str, float]:
        """What two writings of one value share: kind, unit and number (durations in seconds or months)."""
        return self.kind, self.unit, round(self.number, 6)


def spelled_number(words: str) -> float | None:
    """ "three hundred" -> 300, "forty-five" -> 45, "one thousand two hundred and fifty" -> 1250; None if the
    words are not one number ("one two")."""
    total, current, last = 0, 0, ""
    for w in re.split(r"[\s-]+", words.lower()):
        if w in ("and", ""):
            continue
        if w == "a":
            if last:
                return None
            w = "one"
        if w in _UNITS or w in _TENS:
            n = _UNITS.get(w, _TENS.get(w, 0))
            if last in ("unit",) or (last == "tens" and w in _TENS) or (last == "tens" and n >= 10):
                return None  # two numbers side by side
            current += n
            last = "tens" if w in _TENS else "unit"
        elif w == "hundred":
            current = (current or 1) * 100
            last = "hundred"
        elif w in _SCALES:
            total += (current or 1) * _SCALES[w]
            current, last = 0, "scale"
        else:
            return None
    return float(total + current)


def _digits(text: str, scale: str | None) -> float:
    return float(text.replace(",", "")) * (_SCALES[scale.lower()] if scale else 1)


def values_in(text: str) -> list[Value]:
    """Every value the text states, in order, each with the words that write it (unit included)."""
    out: list[Value] = []
    for m in _NUMERAL.finditer(text):
        start, end = m.start(), m.end()
        if out and start < out[-1].end:
            continue  # inside the last value ("three hundred dollars ($300)")
        before = text[max(0, start - 24):start]
        if m.group("num"):
            number = _digits(m.group("num"), m.group("sc1"))
            currency, percent = m.group("cur"), m.group("pct")
        else:
            words = m.group("words")
            if words.lower() in ("a", "and"):
                continue
            number = spelled_number(words)
            if number is None:
                continue
            if m.group("num2") and abs(_digits(m.group("num2"), m.group("sc2")) - number) > 1e-9:
                end = m.start("num2") - 1  # "two (3)": the bracket is something else
                end = text.rfind("(", start, end + 1)
                end = start + len(text[start:end].rstrip())
            currency, percent = m.group("cur2"), m.group("pct2")
            if words.lower() == "one" and re.match(r"\s+(of|another|or)\b", text[m.end("words"):], re.I):
                continue  # "one of the insureds": a pronoun
        prev = re.search(r"([\w.§]+)\W*$", before)
        if prev and (prev.group(1).lower().rstrip(".") in _LABELS or prev.group(1) == "§"):
            continue  # "Section 4", "Form 12": a label
        if m.group("num") and not currency and not percent and _ENUMERATION_BEFORE.search(before) \
                and _ENUMERATION_AFTER.match(text[m.end():]):
            continue  # "8.1 The most we will pay ...": a numbered paragraph's label
        if m.group("num") and not currency and _MONTHS.search(before):
            continue  # "January 1, 2023": the day of a date
        if m.group("num") and re.search(r"[A-Z]{1,4}[\s-]?(?:\d+\s)*$", before) and not currency:
            continue  # "HO 00 03", "B-2021-08": a code
        kind, unit = "count", ""
        rest = text[end:]
        if currency:
            kind, unit = "money", _CURRENCY[currency.strip()]
        if percent:
            kind, unit = "percent", "percent"
        word = _WORD_AFTER.match(rest)
        if kind == "count":
            pct = _PERCENT_WORDS.match(rest)
            if pct:
                kind, unit, end = "percent", "percent", end + pct.end()
            elif word:
                # "thirty (30) days' notice": a possessive unit is the unit
                one, two, three = (w.lower().rstrip("'’") if w else "" for w in word.groups())
                skip = one in _UNIT_MODIFIERS and bool(two)
                noun, after = (two, three) if skip else (one, two)
                singular = noun[:-1] if noun.endswith("s") and noun[:-1] in _TIME else noun
                if noun in _MONEY_WORDS:
                    kind, unit = "money", _MONEY_WORDS[noun]
                elif singular in _TIME:
                    base, scale = _TIME[singular]
                    kind, unit, number = "duration", base, number * scale
                elif f"{noun} {after}" in _SIZE:
                    kind, unit = "size", _SIZE[f"{noun} {after}"]
                elif noun in _SIZE or (noun.endswith("s") and noun[:-1] in _SIZE):
                    kind, unit = "size", _SIZE.get(noun, _SIZE.get(noun[:-1], noun))
                if kind != "count":
                    words_used = (word.end(3) if kind == "size" and f"{noun} {after}" in _SIZE and skip else
                                  word.end(2) if skip or (kind == "size" and f"{noun} {after}" in _SIZE) else
                                  word.end(1))
                    end += words_used
                elif noun and noun not in _COUNT_STOP and not word.group(1)[:1].isupper():
                    # the counted noun is kept as the unit, not shown: "4 congressional districts" is "4"
                    unit = noun[:-1] if noun.endswith("s") and len(noun) > 3 else noun
        if kind == "count" and m.group("num") and re.fullmatch(r"1[5-9]\d\d|20\d\d", m.group("num")):
            kind, unit = "year", ""
        bracket = _BRACKETED.match(text[end:])  # "ten percent (10%)", "three hundred dollars ($300)"
        if bracket:
            end += bracket.end()
        if kind == "percent":  # "10% of Coverage A": the base of the share is part of the value
            q = _QUALIFIER.match(text[end:])
            if q:
                end += q.end()
        out.append(Value(text=text[start:end].strip(), number=number, kind=kind, unit=unit, start=start, end=end))
    return out


def parse_value(text: str) -> Value | None:
    """The value a short answer states, when it is one value ("$300", "three hundred dollars", "5%")."""
    found = values_in(text)
    return found[0] if len(found) == 1 else None


def same_value(a: Value, b: Value) -> bool:
    """Two writings of one value: same number and kind, units that agree (a bare count agrees with any unit of
    its kind; "$300" and "300" agree too: a reader writes the number without its unit)."""
    if abs(a.number - b.number) > 1e-6 * max(1.0, abs(a.number)):
        return False
    if a.kind == b.kind:
        return a.unit == b.unit or not a.unit or not b.unit
    return "count" in (a.kind, b.kind) and not (a.unit if a.kind == "count" else b.unit)


def states(text: str, answer: str) -> bool:
    """Whether `text` states the value(s) `answer` states: every value of the answer, normalised, is among
    the text's ("$300" in "three hundred dollars"); False when the answer states no value."""
    wanted = values_in(answer)
    if not wanted:
        return False
    have = values_in(text)
    return all(any(same_value(w, h) for h in have) for w in wanted)


# the kind of value a question's measure asks for (agents.answer.analysis.Measure)
# an amount may be written as a share of another one: a deductible of "2 percent of the Coverage A limit", a
# charge of "eighteen percent (18%) a year"
MEASURE_KINDS = {"amount": ("money", "percent"), "percent": ("percent",), "duration": ("duration",), "size": ("size",),
                 "count": ("count",), "": ("money", "percent", "duration", "size", "count")}


def fits(value: Value, measure: str) -> bool:
    return value.kind in MEASURE_KINDS.get(measure, MEASURE_KINDS[""])
