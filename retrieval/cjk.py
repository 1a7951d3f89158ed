"""Chinese and Japanese text as terms: overlapping character bigrams of each CJK run.

Chinese and Japanese write no spaces between words, so a word tokeniser sees a whole
clause ("图书馆每周二至周日开放") as one word and no query term ever matches it. A
dictionary segmenter would need a model per language; overlapping bigrams need none
and are what Lucene's CJKAnalyzer indexes: most Chinese words are two characters, a
longer word is the chain of its bigrams (so a query for it matches wherever it is
written), and a bigram that straddles two words is a rare term that IDF discounts.
Single characters would match nearly every passage (图, 书 and 馆 each occur in
countless words). A run of one character stays one term.

Used by the BM25 vectors (`retrieval.embeddings.SparseEmbedder`) and by the
extractive model's content tokens (`agents.lm.text.tokens`), so a query and the
documents are cut the same way. Text with no CJK characters passes unchanged.
"""

from __future__ import annotations

import re

# Han (with extension A, compatibility ideographs, 〇 and 々), hiragana, katakana (with the
# prolonged sound mark ー and half-width forms). Hangul is left out: Korean puts spaces between words.
CJK_RUN = re.compile(r"[\u3005\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                     r"\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]+")


def has_cjk(text: str) -> bool:
    return CJK_RUN.search(text) is not None


def bigrams(run: str) -> list[str]:
    """The overlapping character bigrams of a CJK run ("图书馆" -> ["图书", "书馆"]); one character: itself."""
    return [run] if len(run) < 2 else [run[i:i + 2] for i in range(len(run) - 1)]


def split_cjk(word: str) -> list[tuple[bool, str]]:
    """`word` cut into its CJK runs and the text between them, in order: (is_cjk, piece)."""
    pieces: list[tuple[bool, str]] = []
    at = 0
    for m in CJK_RUN.finditer(word):
        if m.start() > at:
            pieces.append((False, word[at:m.start()]))
        pieces.append((True, m.group()))
        at = m.end()
    if at < len(word):
        pieces.append((False, word[at:]))
    return pieces


def spaced_bigrams(text: str) -> str:
    """`text` with each CJK run replaced by its bigrams between spaces, for a tokeniser that splits at
    spaces and punctuation (fastembed's BM25); unchanged when it has no CJK characters."""
    if not has_cjk(text):
        return text
    return CJK_RUN.sub(lambda m: " " + " ".join(bigrams(m.group())) + " ", text)
