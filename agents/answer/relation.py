"""The relation a (sub-)question asks about, and how near a passage's sentence puts an entity to it.

"Who is the spouse of #1?" asks the relation "spouse"; a sentence answers it
with the entity that follows a word of that relation ("married X", "his wife,
X", "directed by X", "born ... in X"). Question and passage often word a
relation differently ("birthplace" / "born", "death" / "died", "spouse" /
"married"), so each relation word also stands for the few words passages write
for it (`_FORMS`: English morphology and near-synonyms, nothing fitted to a
data set).
"""

from __future__ import annotations

import re

from agents.lm.nlp import TextToolkit
from agents.multihop import evidence

# A question's relation word -> words a passage states it with (all as written; stemmed when used).
_FORMS: dict[str, tuple[str, ...]] = {
    "birth": ("born", "birthplace", "native"), "birthplace": ("born", "birth", "native"),
    "born": ("birth", "birthplace", "native"), "native": ("born", "birth"),
    "death": ("died", "dead"), "died": ("death",), "die": ("died", "death"),
    "spouse": ("married", "wife", "husband", "marriage", "wed"), "wife": ("married", "spouse"),
    "husband": ("married", "spouse"), "married": ("spouse", "wife", "husband"),
    "director": ("directed",), "producer": ("produced",), "author": ("written", "wrote", "novel", "by"),
    "writer": ("written", "wrote"), "wrote": ("written", "author"), "write": ("written", "wrote", "author"),
    "performer": ("by", "performed", "singer", "band"), "composer": ("composed",), "founder": ("founded",),
    "creator": ("created",), "designer": ("designed",), "publisher": ("published",),
    "located": ("in", "situated"), "location": ("located", "in", "situated"), "found": ("native", "located"),
    "formed": ("founded", "established", "formed"), "form": ("formed", "founded"), "team": ("played", "club"),
    "capital": ("capital",), "currency": ("currency",), "language": ("language", "spoken"),
}
_PLACEHOLDER = re.compile(r"#\d+")
_WH_WORDS = frozenset("who whom whose what which when where why how".split())


def relation_terms(nlp: TextToolkit, question: str) -> set[str]:
    """Stems of the relation a question asks about: its content words less the names it gives (and `#n`),
    each with the forms a passage may state it in."""
    text = _PLACEHOLDER.sub(" ", question)
    named: set[str] = set()
    for e in nlp.entities(text, ("name", "reference", "code", "date", "quantity")):
        named |= evidence.terms(nlp, e.text)
    out: set[str] = set()
    for word in nlp.words(text):
        lw = word.lower()
        if lw in _WH_WORDS or nlp.is_stopword(lw):
            continue
        stems = set(nlp.content_tokens(lw))
        if not stems or stems <= named:
            continue
        out |= stems
        for form in _FORMS.get(lw, ()):
            out |= set(nlp.content_tokens(form)) or {form}
    return out


# "(15 March 1834, Wrocław – 5 April 1868, Prague)": born in the first half, died in the second
_LIFESPAN = re.compile(r"\(([^()]*?\d{3,4}[^()]*?)\s[–—-]{1,2}\s([^()]*?\d{3,4}[^()]*)\)")


def sentence_words(nlp: TextToolkit, sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, stem) of each word, with a life-span parenthesis read as "born ... died ..." (an unstated
    relation word, placed where its half begins)."""
    words = [(m.start(), m.end(), nlp.stem(m.group().lower())) for m in re.finditer(r"\w+", sentence)]
    for m in _LIFESPAN.finditer(sentence):
        words += [(m.start(1), m.start(1), nlp.stem("born")), (m.start(2), m.start(2), nlp.stem("died"))]
    return sorted(words)


def transparent(nlp: TextToolkit, sentence: str, asked: set[str]) -> set[str]:
    """Stems a relation's gap does not count: function words and the question's own words ("The waiting period
    for the Flood Rider is 14 days" states 14 days right after the waiting period of what was asked)."""
    return set(asked) | {nlp.stem(w.lower()) for w in re.findall(r"\w+", sentence) if nlp.is_stopword(w.lower())}


def anchored(words: list[tuple[int, int, str]], start: int, end: int, relation: set[str],
             skip: set[str] = frozenset()) -> float:
    """How directly the entity at [start, end) is stated as the relation's value: 0.5 when a relation word
    comes just before it ("married X", "directed by X": one word between counts as adjacent), 0.5 / gap
    further back, as much when it comes right after it ("Maharashtra state"), little when it comes later
    ("X, ..., its director"). Before the entity, numbers and `skip` (see `transparent`) do not count as words
    between ("born 6 March 1982 in X" puts X one word after "born")."""
    best = 0.0
    for a, b, stem in words:
        if not evidence.related(stem, relation):
            continue
        if b <= start:
            gap = sum(1 for a2, b2, w in words if b <= a2 and b2 <= start and b2 > a2 and not w.isdigit()
                      and w not in skip)
            best = max(best, 0.5 / max(1, gap))
        elif a >= end and b > a:  # a life-span marker only reads forwards
            gap = sum(1 for a2, b2, w in words if end <= a2 and b2 <= a and b2 > a2)  # adjacent as written
            best = max(best, 0.5 if gap == 0 else 0.1 / gap)  # "Maharashtra state"; little for "X, ..., its director"
    return best


# "X or Y", "X, also known as the Y", "X (aka Y": Y is another name of X
# ... and "X (Y Z, W": a name in a parenthesis after X, behind no number ("Gila monster (Heloderma suspectum, HEE-lə")
_ALIAS = re.compile(r"(\w+)\W*(?:\b(?:or|also|simply|known|as|aka|née|formerly|the)\b\W*)+$"
                    r"|(\w+)\s*\((?:[^()\d]*,)?\W*$")


def is_alias(nlp: TextToolkit, before: str, asked: set[str]) -> bool:
    """Whether the entity after `before` is another name of something the question names ("The Gila monster
    (Heloderma suspectum" for a question about Gila monsters)."""
    m = _ALIAS.search(before)
    word = m and (m.group(1) or m.group(2))
    return bool(word) and evidence.related(nlp.stem(word.lower()), asked) and (
        m.group(2) is not None or re.search(r"\b(?:or|known|aka|née|formerly)\b", m.group()) is not None)


_LEADING_NUMBER = re.compile(r"^[$€£¥]?\d[\d,.]*(?:\s*(?:million|billion|trillion))?")


def answer_entities(nlp: TextToolkit, sentence: str, kinds, known: set[str]):
    """`evidence.entity_choices`, with a number whose unit only repeats the question's words as the bare number
    ("4 congressional districts" -> "4" for "how many congressional districts") rather than dropped as known,
    and an ordinal as written ("35th", a rank, not the count 35)."""
    chosen = {}
    for e in evidence.entity_choices(nlp, sentence, kinds, known):
        chosen[e.start] = e
    for e in nlp.entities(sentence, kinds):
        if e.kind not in ("quantity", "number"):
            continue
        ordinal = re.match(r"(?:st|nd|rd|th)\b", sentence[e.end:])
        if ordinal and e.start in chosen:  # "Ranked 35th": a rank, written as one
            chosen[e.start] = e.model_copy(update={"text": e.text + ordinal.group(), "end": e.end + ordinal.end()})
            continue
        m = _LEADING_NUMBER.match(e.text)
        rest = evidence.terms(nlp, e.text[m.end():]) if m else set()
        if m and m.end() < len(e.text) and rest and all(evidence.related(t, known) for t in rest):
            chosen[e.start] = e.model_copy(update={"text": m.group().rstrip(",."), "end": e.start + m.end()})
    return [chosen[k] for k in sorted(chosen)]
