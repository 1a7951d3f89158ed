"""A wiki page as markdown, rendered from its claim set: statements under headings, footnotes to lines."""

from __future__ import annotations

import re

from agents.wiki.claims import ClaimSet


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80] or "page"


def render_page(claims: ClaimSet) -> str:
    """`# Title`, one `## Section` per heading the claims come from, each statement with its footnote."""
    out = [f"# {claims.title}", ""]
    if claims.written_by:
        out += [(f"_Compiled by {claims.written_by}; every statement is a claim checked by "
                 f"`raystorm wiki check` against the lines it cites._"), ""]
    section = None
    for claim in claims.claims:
        if claim.section != section:
            section = claim.section
            if section:
                out += ([""] if out[-1] else []) + [f"## {section}", ""]
        out.append(f"- {claim.text} [^{claim.id}]")
    out.append("")
    for claim in claims.claims:
        pointers = "; ".join(f"{e.pointer} (sha256 {e.sha256[:12]})" for e in claim.evidence)
        out.append(f"[^{claim.id}]: {pointers}")
    return "\n".join(out).rstrip() + "\n"
