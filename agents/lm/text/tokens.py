"""Words, stopwords, stems: the token layer under keywords and lexical similarity."""

from __future__ import annotations

import re
from functools import lru_cache

from retrieval.stopwords import STOPWORDS

# A word: letters/digits, joined by inner hyphens, apostrophes, dots, slashes,
# ampersands or thousands commas, so "HM-204", "3.5", "1,200", "don't", "U.S" and
# "R&D" stay one token each.
WORD = re.compile(r"\w+(?:(?:[-'’./&]|,(?=\d{3}\b))\w+)*")

# Words too common in questions and reports to say what they are about.
EXTRA_STOPWORDS = frozenset(
    "also among around based can could did does done etc every following found get gets given go goes "
    "however including know known like made make makes many may might much must need new now often "
    "per s t said say says see seen several shall since still tell tells thing things two use used uses "
    "using way ways well whether yes".split()
)
ALL_STOPWORDS = STOPWORDS | EXTRA_STOPWORDS


def words(text: str) -> list[str]:
    """The word tokens of `text`, in order, as written."""
    return WORD.findall(text)


def is_stopword(word: str) -> bool:
    return word.lower().replace("’", "'") in ALL_STOPWORDS


@lru_cache(maxsize=1)
def _stemmer():
    from py_rust_stemmers import SnowballStemmer  # compiled; loaded on first use, not on import

    return SnowballStemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter2) stem of a lowercase word; codes and numbers unchanged."""
    if any(c.isdigit() for c in word):
        return word
    return _stemmer().stem_word(word)


def content_tokens(text: str) -> list[str]:
    """Lowercase stems of the words that carry meaning, in order.

    Stopwords and one-letter words go; a plain hyphenated word splits into its parts
    ("long-term" → "long", "term") while codes keep whole ("hm-204", "covid-19").
    """
    return [s for _, s in content_words(text)]


def content_words(text: str) -> list[tuple[str, str]]:
    """(surface form as written, stem) for each meaningful word of `text`, in order."""
    out: list[tuple[str, str]] = []
    for word in WORD.findall(text):
        lower = word.lower().replace("’", "'")
        if lower in ALL_STOPWORDS:
            continue
        parts = [word] if any(c.isdigit() for c in word) else re.split(r"[-'’./&]", word)
        for part in parts:
            if len(part) > 1 and part.lower() not in ALL_STOPWORDS:
                out.append((part, stem(part.lower())))
    return out
