"""The value in force before its history: a section that states a superseded rule states the rule that
replaced it first.

A superseded passage reaches a writer framed as history ("Until January 1, 2023 (Bulletin 2021-04,
superseded by Bulletin 2022-11): ..."), so it is never stated as the rule in force; but a writer may
still pick the history and leave out the rule that replaced it (the bundled report's "Flood deductible"
section once gave only the superseded $1,500). This pass runs on the finished article with no model
call: for each sentence stated as history it looks for the same provision in the superseding document,
among the article's own sources and then in the run's information table, and puts that document's
sentence, copied word for word and cited, right before the history. A section that already says it
before the history is left as it is.
"""

from __future__ import annotations

import re
from typing import Sequence

from agents.answer.values import values_in
from agents.lm.text.sentences import sentences
from agents.lm.text.tokens import content_tokens
from agents.storm.article import SnippetSearch, CitationIndex
from agents.storm.citations import cited_numbers, strip_citations
from agents.storm.evidence import stands_alone, usable
from agents.storm.records import Article
from retrieval.graph.current import is_history, short_title, without_history
from retrieval.snippets import Snippet

# A sentence of the newer document states the same provision when it shares at least this share of the
# history sentence's content words (numbers aside: the values are what changed). The deductible and the
# waiting period of the bundled corpus share 0.54 and 0.62 with their replacements; the other sentences of
# the same passages 0.15-0.38 ("Coverage begins at 12:01 a.m. on the fifteenth day").
SAME_PROVISION = 0.4
TABLE_K = 8  # snippets read from the table for a provision the article's own sources do not state
_BY = re.compile(r"superseded by ([^()]+)\)")


def _words(text: str) -> set[str]:
    return {t for t in content_tokens(strip_citations(text)) if not any(c.isdigit() for c in t)}


def provision_overlap(history: str, candidate: str) -> float:
    """The share of the history sentence's content words (numbers left out) that `candidate` uses too."""
    old = _words(without_history(history))
    return len(old & _words(candidate)) / len(old) if old else 0.0


def _value_kinds(text: str) -> set[str]:
    return {v.kind for v in values_in(strip_citations(text))}


def replaced_by(sentence: str, article_index: CitationIndex) -> list[str]:
    """The short titles of the documents that superseded what `sentence` states; [] when it is not history.

    A sentence copied from a superseded passage carries the framing itself; a model's own sentence is
    history when every snippet of every source it cites was read as history."""
    if is_history(sentence):
        return [t.strip() for m in _BY.finditer(sentence) for t in m.group(1).split(",") if t.strip()]
    snippets = [s for n in cited_numbers(sentence) if n in article_index.citations
                for s in article_index.citations[n].snippets]
    if not snippets or not all(is_history(s.text) for s in snippets):
        return []
    return list(dict.fromkeys(t.strip() for s in snippets for m in _BY.finditer(s.text)
                              for t in m.group(1).split(",") if t.strip()))


def _current_sentences(snippet: Snippet) -> list[str]:
    if is_history(snippet.text):
        return []
    return [s for s in (usable(x) for x in sentences(snippet.text)) if s and stands_alone(s)]


def best_current(history: str, newer: Sequence[str], snippets: Sequence[Snippet]) -> tuple[str, Snippet] | None:
    """The sentence of a `newer` document's snippet that states the provision `history` states, or None.

    It must share SAME_PROVISION of the history's words and, where the history states a value, state a
    value of the same kind (a duration for a duration)."""
    wanted = set(newer)
    kinds = _value_kinds(without_history(history))
    best: tuple[float, str, Snippet] | None = None
    for snippet in snippets:
        if short_title(snippet.title) not in wanted:
            continue
        for candidate in _current_sentences(snippet):
            if kinds and not kinds & _value_kinds(candidate):
                continue
            score = provision_overlap(history, candidate)
            if score >= SAME_PROVISION and (best is None or score > best[0]):
                best = (score, candidate, snippet)
    return (best[1], best[2]) if best else None


def _states_current(history: str, sentence: str, newer: Sequence[str], index: CitationIndex) -> bool:
    """Whether an earlier `sentence` of the section already states the rule in force for `history`."""
    if is_history(sentence) or provision_overlap(history, sentence) < SAME_PROVISION:
        return False
    titles = {short_title(index.citations[n].title) for n in cited_numbers(sentence) if n in index.citations}
    return bool(titles & set(newer))


async def state_current(article: Article, table: SnippetSearch) -> Article:
    """The article with the rule in force stated before each superseded one it names (see the module)."""
    index = CitationIndex(article.citations)
    sections = []
    for section in article.sections:
        text = await _section(section.text, index, table)
        sections.append(section.model_copy(update={"text": text}))
    return article.model_copy(update={"sections": sections, "citations": index.all()})


async def _section(text: str, index: CitationIndex, table: SnippetSearch) -> str:
    blocks = [b for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    said: list[str] = []  # the section's sentences so far
    inserted: set[str] = set()
    out: list[str] = []
    for block in blocks:
        if block.lstrip().startswith("#"):
            out.append(block)
            continue
        kept: list[str] = []
        for sentence in sentences(block):
            plain = strip_citations(sentence).strip()
            if plain in inserted:
                continue  # said just before the history it belongs to
            newer = replaced_by(sentence, index)
            if newer and not any(_states_current(sentence, s, newer, index) for s in said):
                found = await _find(sentence, newer, index, table)
                if found is not None:
                    words, snippet = found
                    current = f"{words}[{index.cite(snippet)}]"
                    kept.append(current)
                    said.append(current)
                    inserted.add(strip_citations(words).strip())
            kept.append(sentence)
            said.append(sentence)
        if kept:
            out.append(" ".join(kept))
    return "\n\n".join(out)


async def _find(history: str, newer: list[str], index: CitationIndex, table: SnippetSearch
                ) -> tuple[str, Snippet] | None:
    own = [s for c in index.citations.values() if short_title(c.title) in newer for s in c.snippets]
    found = best_current(history, newer, own)
    if found is None:
        hits = await table.search([strip_citations(without_history(history))], TABLE_K)
        found = best_current(history, newer, hits)
    return found
