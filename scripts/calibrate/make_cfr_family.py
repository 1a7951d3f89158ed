"""Build the real-document answer family: annual editions of a US federal regulation, as Markdown.

    python -m scripts.calibrate.make_cfr_family MIRROR OUT_DIR

MIRROR is a git directory of the public repository cfpb/regulations-xml (the Consumer Financial Protection
Bureau's RegML files of its regulations, one file per notice that changed them); the workplace's `fetch`
look-up brings one. US federal regulations are works of the US government and in the public domain
(17 U.S.C. 105); the repository publishes them as such. Nothing of them is kept in this project: this
script writes OUT_DIR/docs/*.md (one file per edition, front matter naming the family, the edition and its
effective date, so the evidence graph orders the editions) and OUT_DIR/questions.json from the questions
written for them in scripts/calibrate/cfr_questions.json. `python -m scripts.bench_answers --family
cfr=OUT_DIR` then measures on it.

Regulation C (12 CFR 1003, Home Mortgage Disclosure) is taken because its asset-size exemption threshold
changes every year in the staff commentary, while the definitions around it hold other dollar amounts
($25 million of loans, $10 million of assets) and counts (100 loans): the neighbouring-provision trap in a
text nobody here wrote. Each edition holds § 1003.2 (Definitions) and its commentary.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "cfr_questions.json"
# notice -> effective date, as the repository's diff file names pair them
EDITIONS = {
    "2011-31712": "2011-12-30",
    "2012-31311": "2012-12-31",
    "2013-31223": "2014-01-01",
    "2014-30404": "2015-01-01",
    "2015-32285": "2016-01-01",
    "2016-30731": "2017-01-01",
}
SECTIONS = ("1003-2", "1003-2-Interp")  # the definitions and their commentary
NS = re.compile(r"\{[^}]*\}")


def _tag(el: ET.Element) -> str:
    return NS.sub("", el.tag)


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def _child(el: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in el if _tag(c) == name), None)


def _paragraphs(el: ET.Element, depth: int, out: list[str]) -> None:
    for c in el:
        tag = _tag(c)
        if tag not in ("paragraph", "interpParagraph"):
            continue
        title, content = _text(_child(c, "title")), _text(_child(c, "content"))
        marker = c.get("marker", "").strip()
        marker = "" if marker == "none" else marker
        if tag == "interpParagraph" and title and not marker and not content:
            out.append(f"\n{'#' * min(6, depth)} {title}\n")  # "2(g) Financial institution." heads its comments
        else:
            head = " ".join(x for x in (marker, f"*{title}*" if title else "") if x)
            line = " ".join(x for x in (head, content) if x)
            if line:
                out.append(f"\n{line}\n")  # each paragraph its own block: its marker keeps the nesting
        _paragraphs(c, depth + 1, out)


def edition_markdown(xml: str, notice: str, effective: str) -> str:
    root = ET.fromstring(xml)
    parts: list[str] = []
    for el in root.iter():
        if _tag(el) in ("section", "interpSection") and el.get("label") in SECTIONS:
            heading = _text(_child(el, "subject")) or _text(_child(el, "title"))
            parts.append(f"\n## {heading}\n")
            _paragraphs(el, 3, parts)
    title = f"Regulation C (12 CFR Part 1003), edition effective {effective}"
    front = (f"---\ntitle: {title}\nfamily: 12 CFR 1003\nedition: {effective}\neffective: {effective}\n"
             f"url: https://www.ecfr.gov/cgi-bin/text-idx?node=pt12.8.1003#{notice}\n---\n")
    body = re.sub(r"\n{3,}", "\n\n", "".join(parts)).strip()
    return f"{front}# {title}\n\nPublished with Federal Register notice {notice}.\n\n{body}\n"


def build(mirror: Path, out: Path) -> int:
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for notice, effective in EDITIONS.items():
        xml = subprocess.run(["git", "--git-dir", str(mirror), "show", f"HEAD:regulation/1003/{notice}.xml"],
                             check=True, capture_output=True, text=True).stdout
        (docs / f"regulation-c-{effective}.md").write_text(edition_markdown(xml, notice, effective), encoding="utf-8")
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    (out / "questions.json").write_text(json.dumps(questions, indent=1, ensure_ascii=False), encoding="utf-8")
    return len(EDITIONS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror", type=Path, help="git directory of cfpb/regulations-xml")
    parser.add_argument("out", type=Path, help="folder to write docs/ and questions.json into")
    args = parser.parse_args(argv)
    n = build(args.mirror, args.out)
    print(f"{n} editions of Regulation C and {len(json.loads(QUESTIONS.read_text())['questions'])} questions "
          f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
