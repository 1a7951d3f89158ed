"""The files of a report run, in `OUT/<topic_slug>/`, STORM-compatible, and reading them back.

A stage is done when its files exist, so a failed run resumes where it stopped.
Every file is written atomically (temp file, then rename), in a stable form (sorted
keys where order carries no meaning, no timestamps), so two runs of the
extractive model write identical files. `llm_call_history.jsonl` is the one file
with timing in it (each call's id, start time and latency).
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel
from pydantic_core import to_json

from agents.storm.article import article_text, cited_indices
from agents.storm.outline import outline_text, parse_outline
from agents.storm.persona import PersonaPlan
from agents.storm.records import (Article, ArticleSection, Citation, Conversation, ConversationLog, Outline,
                                  SearchResult)
from retrieval.saved import DamagedFile, load_json
from retrieval.snippets import InfoEntry, Snippet

STAGES = ("personas", "conversations", "outline", "article", "polish")
FILES = {
    "personas": ("personas.json",),
    "conversations": ("conversation_log.json", "raw_search_results.json", "survey_results.json"),
    "outline": ("direct_gen_outline.txt", "storm_gen_outline.txt"),
    "article": ("storm_gen_article.txt", "url_to_info.json"),
    "polish": ("storm_gen_article_polished.txt", "report.md"),
}
RUN_CONFIG = "run_config.json"
CALL_HISTORY = "llm_call_history.jsonl"


_PLAIN_TOPIC = re.compile(r"[^\W_]+(?: [^\W_]+)*")  # letters and digits of any script, single spaces
_SLUG_MAX = 100


def topic_slug(topic: str) -> str:
    """The topic's folder name, unique to the exact topic.

    A plain topic (letters and digits of any script, single spaces, at most 100 bytes)
    maps one to one: spaces become "_". Any other topic keeps a readable part and
    adds "-" and a hash of the exact text; "-" never occurs in a plain slug, so the
    two kinds cannot collide either."""
    if _PLAIN_TOPIC.fullmatch(topic) and len(topic.encode("utf-8")) <= _SLUG_MAX:
        return topic.replace(" ", "_")
    readable = re.sub(r"[\W_]+", "_", topic).strip("_")
    while len(readable.encode("utf-8")) > _SLUG_MAX - 13:  # folder names are limited in bytes, not letters
        readable = readable[:-1]
    readable = readable.rstrip("_") or "topic"
    return f"{readable}-{hashlib.sha256(topic.encode('utf-8')).hexdigest()[:12]}"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _json(value: Any) -> str:
    """`value` (plain data or pydantic models) as indented JSON: the text `json.dumps(value, indent=2,
    ensure_ascii=False)` writes, made by pydantic-core's encoder (the standard library indents in pure
    Python: ~8x the CPU for a topic's files)."""
    return to_json(value, indent=2, by_alias=False).decode("utf-8") + "\n"


class RunFiles:
    """The folder of one topic's run."""

    def __init__(self, out_dir: str | os.PathLike, topic: str):
        self.topic = topic
        self.dir = Path(out_dir).expanduser().resolve() / topic_slug(topic)

    def path(self, name: str) -> Path:
        return self.dir / name

    def done(self, stage: str) -> bool:
        return all(self.path(n).is_file() for n in FILES[stage])

    def clear(self, stage: str) -> None:
        for n in FILES[stage]:
            self.path(n).unlink(missing_ok=True)

    # --- personas ---------------------------------------------------------------------------

    def write_personas(self, plan: PersonaPlan) -> None:
        _write(self.path("personas.json"), plan.model_dump_json(indent=2) + "\n")

    def read_json(self, name: str, shape: Any) -> Any:
        """A file of this run validated as `shape` (`DamagedFile` names it when it is not)."""
        return load_json(self.path(name), shape, f"rerun `raystorm report` with --force to rebuild {self.dir.name}")

    def read_text(self, name: str) -> str:
        try:
            return self.path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DamagedFile(self.path(name), f"unreadable ({exc})", "rerun `raystorm report` with --force") from None

    def read_personas(self) -> PersonaPlan:
        return self.read_json("personas.json", PersonaPlan)

    # --- conversations -------------------------------------------------------------------------

    def write_conversations(self, log: ConversationLog, table: dict[str, InfoEntry]) -> None:
        _write(self.path("raw_search_results.json"), _json(url_to_info_json(table)))
        _write(self.path("conversation_log.json"),
               _json(log.conversations))
        _write(self.path("survey_results.json"), _json(log.survey))

    def read_conversations(self) -> ConversationLog:
        return ConversationLog(conversations=self.read_json("conversation_log.json", list[Conversation]),
                               survey=self.read_json("survey_results.json", list[SearchResult]))

    # --- outline -------------------------------------------------------------------------------

    def write_outlines(self, draft: Outline, refined: Outline) -> None:
        _write(self.path("direct_gen_outline.txt"), outline_text(draft))
        _write(self.path("storm_gen_outline.txt"), outline_text(refined))

    def read_outlines(self) -> tuple[Outline, Outline]:
        return parse_outline(self.read_text("direct_gen_outline.txt")), parse_outline(self.read_text("storm_gen_outline.txt"))

    # --- article -------------------------------------------------------------------------------

    def write_article(self, article: Article, table: dict[str, InfoEntry]) -> None:
        _write(self.path("url_to_info.json"), _json(reference_json(article, table)))
        _write(self.path("storm_gen_article.txt"), article_text(article, with_lead=False))

    def read_article(self) -> Article:
        return read_article_text(self.topic, self.read_text("storm_gen_article.txt"),
                                 self.read_json("url_to_info.json", ReferenceFile).citations)

    def write_polished(self, article: Article, table: dict[str, InfoEntry], report: str) -> None:
        """The finished article. A section the writers found nothing for, or that only repeated earlier
        ones, leaves the outline too, so storm_gen_outline.txt always lists report.md's sections."""
        outline = self.path("storm_gen_outline.txt")
        if outline.is_file():
            written = {s.heading for s in article.sections}
            planned = parse_outline(outline.read_text(encoding="utf-8"))
            kept = Outline(sections=[s for s in planned.sections if s.heading in written])
            if kept != planned:
                _write(outline, outline_text(kept))
        _write(self.path("storm_gen_article_polished.txt"), article_text(article))
        _write(self.path("url_to_info.json"), _json(reference_json(article, table)))
        _write(self.path("report.md"), report)
        from agents.wiki.report_claims import report_claims  # report.md's claims: `raystorm wiki check RUN/TOPIC`

        _write(self.path("report.claims.json"), report_claims(article).model_dump_json(indent=1) + "\n")

    def read_polished(self) -> Article:
        return read_article_text(self.topic,
                                 self.read_text("storm_gen_article_polished.txt"),
                                 self.read_json("url_to_info.json", ReferenceFile).citations,
                                 with_lead=True)

    # --- run config and call history -----------------------------------------------------------

    def write_json(self, name: str, value: Any) -> None:
        _write(self.path(name), _json(value))

    def write_text(self, name: str, text: str) -> None:
        _write(self.path(name), text)

    def write_config(self, config: BaseModel) -> None:
        _write(self.path(RUN_CONFIG), config.model_dump_json(indent=2) + "\n")

    def write_history(self, jsonl: str, append: bool) -> None:
        path = self.path(CALL_HISTORY)
        before = path.read_text(encoding="utf-8") if append and path.is_file() else ""
        _write(path, before + jsonl)


def url_to_info_json(table: dict[str, InfoEntry]) -> dict:
    """STORM's url_to_info layout, each snippet's exact place kept beside its text."""
    return {url: {"url": e.url, "title": e.title, "description": e.description,
                  "snippets": [s.text for s in e.snippets],
                  "places": [s.model_dump(mode="json", exclude={"text"}) for s in e.snippets]}
            for url, e in table.items()}


def unified_index(article: Article) -> dict[str, int]:
    """STORM's url → citation number; a URL that several files claim is keyed "URL (path)" per file,
    as in url_to_info, so no citation overwrites another."""
    shared = {c.url for c in article.citations if sum(d.url == c.url for d in article.citations) > 1}
    return {(f"{c.url} ({c.snippets[0].path})" if c.url in shared and c.snippets else c.url): c.index
            for c in article.citations}


def reference_json(article: Article, table: dict[str, InfoEntry]) -> dict:
    """url_to_info.json: the article's index (`url_to_unified_index`), the table, and what each
    citation number cites."""
    return {
        "url_to_unified_index": unified_index(article),
        "url_to_info": url_to_info_json(table),
        "citations": [c.model_dump(mode="json") for c in article.citations],
    }


class ReferenceFile(BaseModel):
    """The part of url_to_info.json read back: the article's citations."""

    citations: list[Citation] = []


def read_article_text(topic: str, text: str, citations: list[Citation], with_lead: bool = False) -> Article:
    """An `Article` from STORM's article text and url_to_info.json."""
    blocks = re.split(r"(?m)^# (.+)$", text)
    lead = blocks[0].strip() if with_lead else ""
    sections = [ArticleSection(heading=blocks[i].strip(), text=blocks[i + 1].strip())
                for i in range(1, len(blocks) - 1, 2)]
    return Article(topic=topic, lead=lead, sections=sections, citations=citations)


# --- report.md ------------------------------------------------------------------------------


def _ranges(snippets: list[Snippet]) -> str:
    if any(s.part is not None for s in snippets):  # a PDF's page, a slide or a sheet: each its own lines
        by_part: dict = {}
        for s in snippets:
            by_part.setdefault(s.part, set()).add((s.line_start, s.line_end))
        order = sorted(by_part, key=lambda p: (p.number, p.name or "") if p else (0, ""))
        return "; ".join(_ranges_in(by_part[p], "row" if p and p.kind == "sheet" else "line",
                                    f"{markdown_text(p.label())}, " if p else "") for p in order)
    return _ranges_in({(s.line_start, s.line_end) for s in snippets}, "line", "")


def _ranges_in(found: set[tuple[int, int]], unit: str, prefix: str) -> str:
    spans = sorted(found)
    text = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in spans)
    return f"{prefix}{unit}{'s' if len(spans) > 1 or (spans and spans[0][0] != spans[0][1]) else ''} {text}" \
        if spans else ""


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]])")  # the rest are markup only at a line's start
_URL_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


def markdown_text(text: str) -> str:
    """`text` as literal Markdown text: no markup, no raw HTML (a document's title can never become
    a tag or a link in report.md)."""
    text = " ".join(text.split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def source_link(url: str) -> str:
    """An http(s) URL as a link (percent-encoded, so it cannot end early or carry markup); anything
    else (a path, a `javascript:` URL) as plain escaped text."""
    if re.match(r"(?i)https?://", url):
        return quote(url.strip(), safe=_URL_SAFE)
    return markdown_text(url)


def reference_line(c: Citation) -> str:
    first = c.snippets[0] if c.snippets else None
    place = _ranges(c.snippets)
    if first is not None and first.url != first.path:
        name = markdown_text(Path(first.path).name)
        place = f"{name}, {place}" if place else name
    return f"[{c.index}] {markdown_text(c.title)}. {source_link(c.url)}" + (f" ({place})" if place else "")


def report_markdown(article: Article) -> str:
    """The polished article with a References section for every [n] it uses."""
    used = cited_indices(article)
    parts = [f"# {article.topic}"]
    if article.lead.strip():
        parts.append(article.lead.strip())
    for s in article.sections:
        parts.append(f"## {s.heading}\n\n{s.text.strip()}")
    refs = [article.citation(n) for n in used]
    if refs:
        parts.append("## References\n\n" + "\n".join(f"{reference_line(c)}  " for c in refs if c is not None))
    return "\n\n".join(parts).rstrip() + "\n"


def nothing_found_markdown(topic: str, where: str, queries: list[str]) -> str:
    searched = "; ".join(dict.fromkeys(queries)) or topic
    return (f"# {topic}\n\nNothing about this topic was found in {where}, so no report was written.\n\n"
            f"Searched for: {searched}.\n")
