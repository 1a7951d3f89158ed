"""Words, stopwords, stems: the token layer under keywords and lexical similarity."""

from __future__ import annotations

import re
from functools import lru_cache

from retrieval.cjk import CJK_RUN, bigrams, has_cjk, split_cjk
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


def word_count(text: str) -> int:
    """How many words `text` has, for length limits: its space-separated pieces, and for Chinese or
    Japanese (unspaced) one word per two characters, about their words' mean length."""
    if not has_cjk(text):
        return len(text.split())
    characters = sum(len(run) for run in CJK_RUN.findall(text))
    return len(CJK_RUN.sub(" ", text).split()) + (characters + 1) // 2


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
    """(surface form as written, stem) for each meaningful word of `text`, in order.

    A CJK run gives its character bigrams (`retrieval.cjk`), each its own stem: the words of
    Chinese and Japanese are not spaced, and BM25 cuts them the same way."""
    out: list[tuple[str, str]] = []
    for word in WORD.findall(text):
        if has_cjk(word):  # "2024年7月起" -> "2024", "7", bigrams of each run
            for cjk, piece in split_cjk(word):
                # a lone character goes, as a one-letter word does: mostly a particle or a unit ("は", "年")
                out += [(b, b) for b in bigrams(piece) if len(b) > 1] if cjk else content_words(piece)
            continue
        lower = word.lower().replace("’", "'")
        if lower in ALL_STOPWORDS:
            continue
        parts = [word] if any(c.isdigit() for c in word) else re.split(r"[-'’./&]", word)
        for part in parts:
            if len(part) > 1 and part.lower() not in ALL_STOPWORDS:
                out.append((part, stem(part.lower())))
    return out
