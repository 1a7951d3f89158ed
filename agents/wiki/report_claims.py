"""A report as a claim set: each cited sentence of report.md, pinned to the lines of the sources it cites."""

from __future__ import annotations

from agents.lm.text.sentences import sentences
from agents.storm.citations import cited_numbers
from agents.storm.records import Article
from agents.wiki.claims import ClaimSet
from agents.wiki.pinning import LineCache, core, make_claim, pin_statement
from retrieval.documents import sha256_text


def report_claims(article: Article, page: str = "report.md", written_by: str = "") -> ClaimSet:
    """Every sentence with a [n] becomes a claim; its evidence is the snippet of source n that holds it
    (narrowed to the lines that do), else every snippet of source n."""
    cache = LineCache()
    by_index = {c.index: c for c in article.citations}
    claims = ClaimSet(kind="report", title=article.topic, page=page, written_by=written_by)
    parts = [("", article.lead)] + [(s.heading, s.text) for s in article.sections]
    for section, text in parts:
        for sentence in sentences(text) if text.strip() else []:
            numbers = [n for n in cited_numbers(sentence) if n in by_index]
            if not numbers:
                continue
            evidence = []
            for n in numbers:
                snippets = by_index[n].snippets
                holding = [s for s in snippets if core(sentence).lower() in " ".join(core(s.text).split()).lower()]
                for s in holding[:1] or snippets:
                    evidence.append(pin_statement(sentence, s.url, s.path, s.line_start, s.line_end,
                                                  s.heading_path, cache, sha256_text(s.text), s.part))
            claim = make_claim(f"r{len(claims.claims) + 1}", sentence, section, evidence)
            if claim:
                claims.claims.append(claim)
    return claims.record_roots()
