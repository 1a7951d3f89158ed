"""Writing the article: sections in parallel from the information table, one citation
index for the whole article, the lead, and the de-duplicating polish.

Every first-level section retrieves from the table with its own heading and its
subsections' headings, so the outline decides what each section is written from.
A writer cites its own numbered snippets; `assemble` maps those numbers to the
article's index (one number per source URL, in order of first use) and drops any
that point nowhere.
"""

from __future__ import annotations

import asyncio
import re
from typing import Callable, Protocol, Sequence

from pydantic import BaseModel, Field

from agents.lm.steps import LanguageModel
from agents.lm.text.sentences import sentences
from agents.storm.citations import CitationRegistry, cited_numbers, cut_unfinished, keep_valid, remap, strip_citations
from agents.storm.options import SECTION_SNIPPETS
from agents.storm.records import Article, ArticleSection, Citation, Outline
from agents.storm.steps_article import (
    LeadInput,
    PolishInput,
    PolishSection,
    SectionDigest,
    SectionInput,
    SubsectionSources,
    WriteLead,
    WriteSection,
)
from agents.storm.steps_research import NumberedSource
from retrieval.graph.current import current_first  # superseded evidence is read after the rule in force
from retrieval.snippets import Snippet

LEAD_SNIPPETS = 12
DEEPER = 3  # a section with nothing to say from its k snippets is tried again with DEEPER * k
SUBSECTION_SNIPPETS = 4  # each subsection also retrieves its own best snippets, as STORM's writer does


class SnippetSearch(Protocol):
    """What section writers retrieve through: the run's information table, local or an actor."""

    async def search(self, queries: Sequence[str], k: int) -> list[Snippet]: ...


async def search_groups(table: SnippetSearch, groups: Sequence[tuple[Sequence[str], int]]) -> list[list[Snippet]]:
    """`table.search(queries, k)` for each group, in order: in one call where the table takes several
    (`search_many`: one actor call for a table on a corpus actor, one batch request to the store), else all
    at once."""
    search_many = getattr(table, "search_many", None)
    if search_many is not None:
        return await search_many([(list(queries), k) for queries, k in groups])
    return list(await asyncio.gather(*(table.search(queries, k) for queries, k in groups)))


class SectionDraft(BaseModel):
    """One section as its writer wrote it: `[n]` point into `sources` (1-based)."""

    heading: str
    text: str
    sources: list[Snippet] = Field(default_factory=list)


def numbered(snippets: Sequence[Snippet]) -> list[NumberedSource]:
    return [NumberedSource(n=i, title=s.title, section=" > ".join(s.heading_path), text=s.text)
            for i, s in enumerate(snippets, start=1)]


def section_queries(topic: str, heading: str, subsections: Sequence[str]) -> list[str]:
    return [f"{topic} {heading}", *(f"{topic} {heading} {sub}" for sub in subsections)]


def tidy_section_text(text: str, heading: str) -> str:
    """A writer's text as a section body: no repeated heading, subheadings at level 3, no
    references list, and no sentence left unfinished at the end."""
    out: list[str] = []
    for line in text.strip().splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            title = stripped.lstrip("#").strip()
            if title.lower() == heading.lower():
                continue
            if re.fullmatch(r"(references|sources|citations)", title.lower()):
                break
            out.append(f"### {title}")
        else:
            out.append(line.rstrip())
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    return cut_unfinished(body)


async def write_section(topic: str, outline: Outline, index: int, table: SnippetSearch, models: LanguageModel,
                        k: int = SECTION_SNIPPETS) -> SectionDraft:
    """One section from its k best snippets; if the writer finds nothing in them to say under the
    heading, from DEEPER times as many (a planned section is not given up on its first search)."""
    draft = await _write_from(topic, outline, index, table, models, k)
    if draft.text.strip() or len(draft.sources) < k:  # written, or the table holds no more
        return draft
    return await _write_from(topic, outline, index, table, models, k * DEEPER)


async def _write_from(topic: str, outline: Outline, index: int, table: SnippetSearch, models: LanguageModel,
                      k: int) -> SectionDraft:
    section = outline.sections[index]
    fused, *own = await search_groups(table, [
        (section_queries(topic, section.heading, section.subsections), k),
        *(([f"{topic} {section.heading} {sub}"], SUBSECTION_SNIPPETS) for sub in section.subsections)])
    snippets = current_first(fused)
    # a subsection is never asked for without sources of its own: its own search's snippets join the rest
    ids = {s.point_id: i for i, s in enumerate(snippets)}
    by_sub: list[SubsectionSources] = []
    for sub, hits in zip(section.subsections, own):
        numbers = []
        for s in current_first(hits):
            if s.point_id not in ids:
                ids[s.point_id] = len(snippets)
                snippets.append(s)
            numbers.append(ids[s.point_id] + 1)
        by_sub.append(SubsectionSources(heading=sub, sources=numbers))
    if not snippets:
        return SectionDraft(heading=section.heading, text="")
    others = [s.heading for j, s in enumerate(outline.sections) if j != index]
    others += [x for j, s in enumerate(outline.sections) if j != index for x in s.subsections]
    out = await models.run(WriteSection, SectionInput(
        topic=topic, heading=section.heading, subsections=section.subsections, other_headings=others,
        sources=numbered(snippets), by_subsection=by_sub))
    text = keep_valid(tidy_section_text(out.text, section.heading), len(snippets))
    return SectionDraft(heading=section.heading, text=text, sources=list(snippets))


async def write_sections(topic: str, outline: Outline, table: SnippetSearch, models: LanguageModel,
                         k: int = SECTION_SNIPPETS, on_done: Callable[[SectionDraft], None] | None = None
                         ) -> list[SectionDraft]:
    """Every first-level section at once; the drafts come back in outline order."""
    async def one(i: int) -> SectionDraft:
        draft = await write_section(topic, outline, i, table, models, k)
        if on_done:
            on_done(draft)
        return draft

    return list(await asyncio.gather(*(one(i) for i in range(len(outline.sections)))))


class CitationIndex:
    """The article's citations while they are being numbered."""

    def __init__(self, citations: Sequence[Citation] = ()):
        # one number per source (URL and file): files that share a URL are cited apart
        self.registry = CitationRegistry([c.snippets[0].source_key if c.snippets else c.url
                                          for c in sorted(citations, key=lambda c: c.index)])
        self.citations = {c.index: c.model_copy(deep=True) for c in citations}

    def cite(self, snippet: Snippet) -> int:
        n = self.registry.number(snippet.source_key)
        c = self.citations.setdefault(n, Citation(index=n, url=snippet.url, title=snippet.title))
        if all(s.point_id != snippet.point_id for s in c.snippets):
            c.snippets.append(snippet)
        return n

    def renumber(self, text: str, sources: Sequence[Snippet]) -> str:
        return remap(text, lambda n: self.cite(sources[n - 1]) if 1 <= n <= len(sources) else None)

    def all(self) -> list[Citation]:
        return [self.citations[i] for i in sorted(self.citations)]


def assemble(topic: str, drafts: Sequence[SectionDraft]) -> Article:
    """The sections with one citation index; sections with nothing written are left out."""
    index = CitationIndex()
    sections = [ArticleSection(heading=d.heading, text=index.renumber(d.text, d.sources))
                for d in drafts if d.text.strip()]
    return Article(topic=topic, sections=sections, citations=index.all())


async def write_lead(article: Article, table: SnippetSearch, models: LanguageModel, k: int = LEAD_SNIPPETS) -> Article:
    """The article with its lead; new sources the lead cites join the index after the others."""
    if not article.sections:
        return article
    # the topic as a whole, and what its first sections are about
    snippets = current_first(
        await table.search([article.topic, *(f"{article.topic} {s.heading}" for s in article.sections[:3])], k))
    # the sections keep their citations, and the lead may cite the same sources by the same numbers; the
    # new snippets are numbered after the article's last citation
    last = max((c.index for c in article.citations), default=0)
    cited = [NumberedSource(n=c.index, title=c.title, section=" > ".join(c.snippets[0].heading_path),
                            text=c.snippets[0].text) for c in article.citations if c.snippets]
    sources = [x.model_copy(update={"n": x.n + last}) for x in numbered(snippets)]
    out = await models.run(WriteLead, LeadInput(
        topic=article.topic, sections=[SectionDigest(heading=s.heading, text=s.text) for s in article.sections],
        sources=sources, cited=cited))
    index = CitationIndex(article.citations)
    known = {c.n for c in cited}
    lead = remap(cut_unfinished(out.lead.strip()),
                 lambda n: n if n in known else index.cite(snippets[n - last - 1]) if last < n <= last + len(snippets)
                 else None)
    return article.model_copy(update={"lead": lead, "citations": index.all()})


async def polish(article: Article, models: LanguageModel) -> Article:
    """Each section without the sentences an earlier section already says, all sections at once: a
    section is compared with what the sections above it say before their own polish (a sentence
    dropped there repeats something further up, which this section is compared with too). The lead
    is left out of the comparison: it sums up the sections, so it may say again what they say.

    A section that would be left with nothing (everything it says, a section above says too) is
    not given up: a second pass puts the sections the first emptied first, so a sentence two sections
    share stays in the one that has nothing else, and the sections above lose it instead (one whose
    every sentence an emptied section says is dropped in its place: the article never says a
    sentence twice). On FreshWiki, dropping the emptied sections had cost heading recall and precision."""
    last = max((c.index for c in article.citations), default=0)
    first = await _polish_in_order(article, models, list(range(len(article.sections))), last)
    emptied = [i for i, s in enumerate(article.sections) if s.text.strip() and not first[i]]
    texts = first
    if emptied:
        order = emptied + [i for i in range(len(article.sections)) if i not in emptied]
        texts = await _polish_in_order(article, models, order, last)
    sections = [ArticleSection(heading=s.heading, text=t) for s, t in zip(article.sections, texts) if t]
    return article.model_copy(update={"sections": sections})


async def _polish_in_order(article: Article, models: LanguageModel, order: list[int], last: int) -> list[str]:
    """Each section's polished text (by section index; "" for one with nothing left), each compared
    with what the sections before it in `order` say."""
    earlier: dict[int, list[str]] = {}
    said: list[str] = []
    for i in order:
        earlier[i] = list(said)
        said += [strip_citations(x) for x in _sentences(article.sections[i].text) if not x.startswith("#")]
    outs = await asyncio.gather(*(
        models.run(PolishSection, PolishInput(topic=article.topic, heading=s.heading, text=s.text, earlier=earlier[i]))
        for i, s in enumerate(article.sections)))
    return [keep_valid(tidy_section_text(out.text, s.heading), last).strip()
            for s, out in zip(article.sections, outs)]


def _sentences(text: str) -> list[str]:
    return sentences(text) if text.strip() else []


def cited_indices(article: Article) -> list[int]:
    """The citation numbers the article's text uses, ascending."""
    texts = [article.lead, *(s.text for s in article.sections)]
    return sorted({n for t in texts for n in cited_numbers(t)})


def article_text(article: Article, with_lead: bool = True) -> str:
    """STORM's article text: the lead, then `# Section` blocks."""
    parts = [article.lead.strip()] if with_lead and article.lead.strip() else []
    parts += [f"# {s.heading}\n\n{s.text.strip()}" for s in article.sections]
    return "\n\n".join(parts) + ("\n" if parts else "")
