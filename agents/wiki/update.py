"""`wiki update`: re-derive only the claims a check finds stale or unresolved.

A stale claim's statement is written again from the lines that now stand where
its evidence was (the same page step, on the same kind of model); an unresolved
claim has nothing left to stand on and leaves the page. Ok and relocated claims
are kept as they are (relocated pointers already moved by the check).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from agents.lm.steps import LanguageModel
from agents.storm.citations import cited_numbers
from agents.storm.steps_research import NumberedSource
from agents.wiki.check import check_claim_set, claim_state
from agents.wiki.claims import ClaimSet, load_sidecars
from agents.wiki.pages import render_page
from agents.wiki.pinning import LineCache, make_claim, pin_statement
from agents.wiki.steps import PageInput, WritePage


class UpdateSummary(BaseModel):
    pages: int = 0
    rewritten: int = 0
    removed: int = 0
    kept: int = 0
    skipped_reports: int = 0
    pages_removed: int = 0


async def rederive(claims: ClaimSet, models: LanguageModel, cache: LineCache) -> tuple[int, int, int]:
    """(rewritten, removed, kept) for one wiki page's claims, updated in place."""
    results, _ = check_claim_set(claims, cache.files)
    kept_claims, rewritten, removed = [], 0, 0
    for claim, checks in results:
        state = claim_state(checks)
        if state in ("ok", "relocated"):
            kept_claims.append(claim)
            continue
        spans = [(ev, c.stale_lines) for ev, c in zip(claim.evidence, checks) if c.stale_lines]
        new = None
        if state == "stale" and spans:
            ev, (a, b) = spans[0]
            lines = cache.lines(ev.path, ev.part) or []
            text = "\n".join(lines[a - 1: b])
            out = await models.run(WritePage, PageInput(subject=claims.title, sources=[
                NumberedSource(n=1, title=claims.title, section=claim.section, text=text)]))
            said = [s for s in out.statements if 1 in cited_numbers(s)]
            # of what the lines say now, the statement closest to what the claim said
            statement = max(said, key=lambda s: (len(_words(s) & _words(claim.text)), -said.index(s)), default=None)
            if statement:
                new = make_claim(claim.id, statement, claim.section, [
                    pin_statement(statement, ev.source, ev.path, a, b, ev.heading_path, cache, part=ev.part)])
        if new:
            kept_claims.append(new)
            rewritten += 1
        else:
            removed += 1
    kept = len(kept_claims) - rewritten
    claims.claims = kept_claims
    return rewritten, removed, kept


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9$%,.]+", text.lower()))


async def update_wiki(folder: Path, models: LanguageModel) -> tuple[UpdateSummary, list[ClaimSet]]:
    """(what changed, the wiki pages' claim sets as they now stand)."""
    summary, cache, pages = UpdateSummary(), LineCache(), []
    for path, claims in load_sidecars(folder):
        if claims.kind != "wiki":
            summary.skipped_reports += 1  # a report is rewritten by rerunning it, not claim by claim
            continue
        rewritten, removed, kept = await rederive(claims, models, cache)
        summary.rewritten += rewritten
        summary.removed += removed
        summary.kept += kept
        page = path.parent / claims.page
        if not claims.claims:  # nothing left to say: the page goes
            path.unlink()
            page.unlink(missing_ok=True)
            summary.pages_removed += 1
            continue
        summary.pages += 1
        pages.append(claims)
        path.write_text(claims.model_dump_json(indent=1) + "\n", encoding="utf-8")
        page.write_text(render_page(claims), encoding="utf-8")
    return summary, pages
