#!/usr/bin/env python3
"""What a chat model is given: every request of a report, recorded and measured.

For each FreshWiki article JSON in DIR: its research corpus is built with the shared
`freshwiki_corpus.py` (the article's structure hidden), `raystorm report` runs on it with a
chat model served by the loopback endpoint (`tests/support/llm_endpoint.py`, every request body
recorded), and the recorded prompts are measured:

- gold_sections_with_evidence: of the gold article's sections that cite a source, the share
  whose evidence (a sentence the section cites, whole, case and punctuation aside) is in the
  outline-refinement prompt (`storm.outline.refine`);
- snippets per planned subsection in the section prompts (`storm.article.section`): the
  sources a prompt assigns to each subsection it asks for (its "Sources by subsection" lines;
  a section without subsections is one unit with all its sources; a prompt that asks for
  subsections but assigns them nothing counts 0 for each): min and mean;
- evidence words per section prompt: the words quoted inside its <document> blocks;
- with `--writer react`: react_observation_share, the share of the characters the tools
  observed (each result's digest lines and the text of each passage it returned, from
  `section_NN.json`) found in the prompt that writes that section.

It prints a row per article and the means, and ends with one JSON line:
{"articles", "gold_sections_with_evidence", "min_snippets_per_subsection",
 "mean_evidence_words_per_section", "react_observation_share"}.

    python -m scripts.audit_prompts ../shared/data/freshwiki --limit 8
    python -m scripts.audit_prompts DIR --root CHECKOUT   # the same audit of another checkout
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.llm_endpoint import start_endpoint

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"

OUTLINE_SCHEMA = "storm_outline_refine"
SECTION_SCHEMA = "storm_article_section"
REACT_WRITE_SCHEMAS = ("storm_article_section", "report_react_write")
_DOC = re.compile(r"<document>(.*?)</document>", re.DOTALL)
_ASSIGNED = re.compile(r"^- (.+?): ((?:\[\d+\]\s*)*)$|^- (.+?): \(none\)$", re.MULTILINE)
SKIP = {"see also", "notes", "references", "external links", "further reading", "bibliography", "sources",
        "citations"}


def squash(text: str) -> str:
    """Text compared without case, punctuation or spacing (a prompt may re-space or escape)."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def gold_evidence(article: dict) -> list[tuple[str, list[str]]]:
    """(heading, the sentences it cites) for each section of the article that cites something."""
    out: list[tuple[str, list[str]]] = []

    def walk(content: list[dict]) -> None:
        for s in content:
            title = s["section_title"].strip()
            if title.lower() in SKIP:
                continue
            cited = [x["sentence"].strip() for x in s.get("section_content", []) if x.get("refs")]
            if cited:
                out.append((title, cited))
            walk(s.get("subsections") or [])

    walk(article["content"])
    return out


def user_text(body: dict) -> str:
    parts = []
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, str) and m.get("role") != "system":
            parts.append(content)
    return "\n".join(parts)


def schema_name(body: dict) -> str | None:
    fmt = body.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name")


def step_of(body: dict) -> str | None:
    """The step a request is for: its schema name, or (text mode) the one its system message names."""
    name = schema_name(body)
    if name:
        return name
    system = " ".join(m.get("content") or "" for m in body.get("messages") or [] if m.get("role") == "system")
    return "storm_outline_refine" if "Improve the draft outline" in system else None


def outline_coverage(bodies: list[dict], gold: list[tuple[str, list[str]]]) -> float | None:
    prompts = [squash(user_text(b)) for b in bodies if step_of(b) == OUTLINE_SCHEMA]
    if not prompts or not gold:
        return None
    seen = " ".join(prompts)
    return sum(any(squash(s) in seen for s in cited) for _, cited in gold) / len(gold)


def section_units(prompt: str) -> list[int]:
    """Snippets per planned unit of one section prompt (see the module docstring)."""
    subs_line = re.search(r"^Subsections: (.*)$", prompt, re.MULTILINE)
    subs = [] if not subs_line or subs_line.group(1).strip() == "(none)" else \
        [x.strip() for x in subs_line.group(1).split(";") if x.strip()]
    sources = len(_DOC.findall(prompt))
    if not subs:
        return [sources]
    block = prompt.split("Sources by subsection:", 1)
    if len(block) < 2:
        return [0 for _ in subs]
    assigned: dict[str, int] = {}
    for m in _ASSIGNED.finditer(block[1].split("\n\n", 1)[0]):
        if m.group(1):
            assigned[m.group(1).strip()] = len(re.findall(r"\[\d+\]", m.group(2)))
        else:
            assigned[m.group(3).strip()] = 0
    return [assigned.get(s, 0) for s in subs]


def evidence_words(prompt: str) -> int:
    return sum(len(d.split()) for d in _DOC.findall(prompt))


def observation_share(run_dir: Path, bodies: list[dict]) -> float | None:
    """The share of the tools' observed characters found in the prompt that wrote each section."""
    writers: dict[str, str] = {}
    for b in bodies:
        if step_of(b) not in REACT_WRITE_SCHEMAS:
            continue
        text = user_text(b)
        head = re.search(r"^Section(?: to write)?: (.+?)(?: \(subsections:.*)?$", text, re.MULTILINE)
        if head:
            writers[head.group(1).strip()] = squash(text)  # the last prompt for a section wins
    total = reached = 0
    for path in sorted(run_dir.glob("section_*.json")):
        section = json.loads(path.read_text(encoding="utf-8"))["section"]
        prompt = writers.get(section["draft"]["heading"].strip(), "")
        units: dict[str, int] = {}
        for r in section["results"]:
            for line in r["digest"].splitlines():
                units.setdefault(squash(line), len(line))
            for f in r["facts"]:
                units.setdefault(squash(f["text"]), len(f["text"]))
        for key, chars in units.items():
            if not key:
                continue
            total += chars
            reached += chars if key in prompt else 0
    return reached / total if total else None


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return done


def audit_one(article: Path, work: Path, root: Path, tools: Path, writers: list[str]) -> dict:
    name = article.stem
    corpus = work / "corpora" / name
    if not (corpus / "gold_outline.json").is_file():
        run([sys.executable, str(tools / "freshwiki_corpus.py"), str(article), str(corpus)], cwd=ROOT)
    meta = json.loads((corpus / "gold_outline.json").read_text())
    gold = gold_evidence(json.loads(article.read_text()))
    collection = "fw-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    row: dict = {"topic": meta["topic"], "gold_sections": len(gold)}
    for writer in writers:
        bodies_path = work / "requests" / f"{name}.{writer}.jsonl"
        bodies_path.parent.mkdir(parents=True, exist_ok=True)
        bodies_path.unlink(missing_ok=True)
        with start_endpoint(bodies_path=bodies_path, log_path=work / "requests" / f"{name}.{writer}.log") as ep:
            done = run([sys.executable, "-m", "cluster.cli", "report", meta["topic"], "--corpus",
                        str(corpus / "docs"), "--collection", collection, "--data-dir", str(work / "home"),
                        "--out", str(work / "runs" / writer), "--exclude-url", meta["url"], "--writer", writer,
                        "--llm", "standin", "--llm-base-url", ep.url, "--no-llm-cache", "--force"], cwd=root)
        run_dir = Path(done.stdout.strip().splitlines()[0]).parent
        bodies = [json.loads(x)["body"] for x in bodies_path.read_text().splitlines() if x.strip()]
        row[f"{writer}_requests"] = len(bodies)
        if writer == "storm":
            row["outline"] = outline_coverage(bodies, gold)
            prompts = [user_text(b) for b in bodies if step_of(b) == SECTION_SCHEMA]
            units = [n for p in prompts for n in section_units(p)]
            row["min_snip"] = min(units) if units else None
            row["mean_snip"] = statistics.mean(units) if units else None
            row["words"] = statistics.mean(evidence_words(p) for p in prompts) if prompts else None
        else:
            row["react_share"] = observation_share(run_dir, bodies)
    return row


def _mean(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.mean(values) if values else None


def _fmt(x, digits: int = 3) -> str:
    return "-" if x is None else (f"{x:.{digits}f}" if isinstance(x, float) else str(x))


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="a folder of FreshWiki article JSON files")
    parser.add_argument("--root", type=Path, default=ROOT, help="the raystorm checkout to run (default: this one)")
    parser.add_argument("--tools", type=Path, default=SHARED / "tools", help="where freshwiki_corpus.py is")
    parser.add_argument("--work", type=Path, help="keep corpora, store, runs and requests here (default: a temp dir)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N articles (0: all)")
    parser.add_argument("--writer", default="storm,react", help="storm, react, or storm,react")
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"{args.data}: not a folder of FreshWiki article JSON files")
    articles = sorted(args.data.glob("*.json"))[: args.limit or None]
    if not articles:
        sys.exit(f"no article JSON files in {args.data}")
    if not (args.tools / "freshwiki_corpus.py").is_file():
        sys.exit(f"no freshwiki_corpus.py in {args.tools}: pass --tools DIR")
    writers = [w.strip() for w in args.writer.split(",") if w.strip()]
    if not writers or any(w not in ("storm", "react") for w in writers):
        sys.exit(f"--writer {args.writer}: use storm, react or storm,react")
    work = args.work or Path(tempfile.mkdtemp(prefix="audit-prompts-"))
    print(f"{len(articles)} articles, checkout {args.root.resolve()}, work dir {work}")
    header = (f"{'topic':<40} {'gold':>4} {'outline ev':>10} {'min snip':>8} {'mean snip':>9} "
              f"{'words/sec':>9} {'react obs':>9}")
    print(header)
    print("-" * len(header))
    rows = []
    for article in articles:
        row = audit_one(article, work, args.root.resolve(), args.tools, writers)
        rows.append(row)
        print(f"{row['topic'][:40]:<40} {row['gold_sections']:>4} {_fmt(row.get('outline')):>10} "
              f"{_fmt(row.get('min_snip')):>8} {_fmt(row.get('mean_snip'), 1):>9} {_fmt(row.get('words'), 0):>9} "
              f"{_fmt(row.get('react_share')):>9}", flush=True)
    mins = [r["min_snip"] for r in rows if r.get("min_snip") is not None]
    summary = {"articles": len(rows), "gold_sections_with_evidence": _mean(rows, "outline"),
               "min_snippets_per_subsection": min(mins) if mins else None,
               "mean_snippets_per_subsection": _mean(rows, "mean_snip"),
               "mean_evidence_words_per_section": _mean(rows, "words"),
               "react_observation_share": _mean(rows, "react_share")}
    print("-" * len(header))
    print(f"{'mean':<40} {'':>4} {_fmt(summary['gold_sections_with_evidence']):>10} "
          f"{_fmt(summary['min_snippets_per_subsection']):>8} {_fmt(summary['mean_snippets_per_subsection'], 1):>9} "
          f"{_fmt(summary['mean_evidence_words_per_section'], 0):>9} {_fmt(summary['react_observation_share']):>9}")
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in summary.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
