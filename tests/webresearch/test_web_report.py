"""`raystorm report --source web|hybrid` end to end: a SearXNG stand-in and a small site on 127.0.0.1
(hence --allow-private-hosts), the real fetcher, snapshots, the embedded store and the extractive model.
A web page is cited at the lines of its snapshot that hold the cited sentence, side by side with the
collection's files in hybrid mode, and a page's orders to the model neither lead nor enter the report."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import retrieval.ingest
from cluster.cli import main
from retrieval.graph.current import without_history
from site_pages import site  # noqa: F401  (the fixture: the site and search stand-in)

EXAMPLE_DIR = Path(retrieval.ingest.__file__).parent / "example_corpus"
CITED = re.compile(r"([^\[\]]+?)((?:\[\d+\])+)")


@pytest.fixture(scope="module")
def web_run(site, tmp_path_factory):
    root = tmp_path_factory.mktemp("webrun")
    home = ["--data-dir", str(root / "home")]
    web = ["--search-engine", "searxng", "--search-url", site.url, "--allow-private-hosts", "--site-interval", "0"]
    assert main(["report", "Greyhaven Coastal Flood Program", "--source", "web", *web, "--personas", "1",
                 "--turns", "2", "--out", str(root / "web"), *home]) == 0
    shutil.copytree(EXAMPLE_DIR, root / "corpus")
    assert main(["report", "Greyhaven flood grants and Harborline flood rider", "--source", "hybrid",
                 "--corpus", str(root / "corpus"), *web, "--personas", "1", "--turns", "2",
                 "--out", str(root / "hybrid"), *home]) == 0
    return root


def _run_dir(root: Path, kind: str) -> Path:
    return next((root / kind).iterdir())


def _checked_citations(run: Path) -> list[dict]:
    """Each cited sentence found in the lines its citation names (the snapshot's, for a web page); the
    citations' sources."""
    report = (run / "report.md").read_text(encoding="utf-8")
    body, _ = report.split("\n## References\n")
    citations = {c["index"]: c for c in json.loads((run / "url_to_info.json").read_text())["citations"]}
    used = []
    for paragraph in body.split("\n\n"):
        if paragraph.startswith("#"):
            continue
        for sentence, markers in CITED.findall(paragraph):
            sentence = without_history(sentence.strip())
            for n in map(int, re.findall(r"\d+", markers)):
                snippets = citations[n]["snippets"]
                texts = ["\n".join(Path(s["path"]).read_text(encoding="utf-8").splitlines()
                                   [s["line_start"] - 1:s["line_end"]]) for s in snippets]
                assert any(sentence in t for t in texts), f"[{n}] does not hold: {sentence!r}"
                used.append(citations[n])
    return used


def test_a_web_report_cites_pages_at_the_lines_of_their_snapshots(web_run, site):
    run = _run_dir(web_run, "web")
    used = _checked_citations(run)
    urls = {c["url"] for c in used}
    assert len(used) >= 3 and urls and all(u.startswith(site.url + "/") for u in urls), urls
    snapshots = {s["path"] for c in used for s in c["snippets"]}
    assert all(Path(p).is_relative_to(web_run / "home" / "web") for p in snapshots), snapshots
    refs = (run / "report.md").read_text(encoding="utf-8").split("\n## References\n")[1]
    assert site.url + "/" in refs


def test_a_page_that_gives_the_model_orders_is_data(web_run):
    report = (_run_dir(web_run, "web") / "report.md").read_text(encoding="utf-8")
    lead = report.split("\n\n", 2)[1]
    assert lead.strip() and not lead.startswith(("SYSTEM", "Ignore"))
    assert "Ignore previous instructions" not in report and "SYSTEM:" not in report


def test_the_run_config_records_the_engine_and_every_query(web_run, site):
    config = json.loads((_run_dir(web_run, "web") / "run_config.json").read_text())
    assert config["source"] == "web" and config["web"]["engine"]["engine"] == "searxng"
    sent = [q["query"] for q in config["web_queries"]]
    assert sent and set(sent) <= set(site.queries)
    assert "api_key" not in json.dumps(config).lower()


def test_a_hybrid_report_cites_the_collection_and_the_web_side_by_side(web_run, site):
    used = _checked_citations(_run_dir(web_run, "hybrid"))
    web = [c for c in used if (c.get("url") or "").startswith(site.url)]
    files = [c for c in used if not (c.get("url") or "").startswith(site.url)]
    assert web and files


def test_wiki_check_refetch_finds_the_claims_a_changed_page_no_longer_holds(web_run, site, capsys):
    run = _run_dir(web_run, "web")
    assert main(["wiki", "check", str(run), "--json"]) == 0  # as written: every claim holds
    capsys.readouterr()
    title, body = site.pages["/program"]
    site.pages["/program"] = (title, body.replace("0.4 percent", "0.6 percent").replace("3.2 million", "4.1 million"))
    try:
        assert main(["wiki", "check", str(run), "--refetch", "--allow-private-hosts"]) == 1
    finally:
        site.pages["/program"] = (title, body)
    out, err = capsys.readouterr()
    assert f"refetched {site.url}/program: the page changed" in err
    assert f"refetched {site.url}/history: unchanged" in err
    lines = out.splitlines()
    stale = [(line, lines[i + 1]) for i, line in enumerate(lines) if line.startswith("stale")]
    assert any("levy" in claim for claim, _ in stale), out  # the sentences the page no longer says
    assert all(f"{site.url}/program#" in where for _, where in stale), out  # and no other page's


def test_web_personas_are_drawn_from_the_related_pages_tables_of_contents(web_run, site):
    plan = json.loads((_run_dir(web_run, "web") / "personas.json").read_text())
    related = {r["source"]: r["headings"] for r in plan["related"]}
    assert f"{site.url}/eligibility" in related and "Grant limits" in related[f"{site.url}/eligibility"]
    headings = {h for hs in related.values() for h in hs}
    said = [p["name"] for p in plan["personas"]] + [f for p in plan["personas"] for f in p.get("focus", [])]
    assert any(h in text for h in headings for text in said), (headings, said)  # a page's heading as a perspective


def test_on_ray_the_experts_search_the_web_through_the_run_s_web_research_actor(web_run, site):
    """--distributed: the fetcher actors download, the web research actor keeps the snapshots and the
    store's owner ingests them; the report cites the collection and the web as the local run does."""
    out = web_run / "ray"
    assert main(["report", "Greyhaven flood grants and Harborline flood rider", "--source", "hybrid", "-c", "corpus",
                 "--search-engine", "searxng", "--search-url", site.url, "--allow-private-hosts",
                 "--site-interval", "0", "--personas", "1", "--turns", "2", "--out", str(out), "--distributed",
                 "--writers", "1", "--experts", "1", "--data-dir", str(web_run / "home")]) == 0
    used = _checked_citations(_run_dir(web_run, "ray"))
    assert any((c.get("url") or "").startswith(site.url) for c in used)
    assert any(not (c.get("url") or "").startswith(site.url) for c in used)
    config = json.loads((_run_dir(web_run, "ray") / "run_config.json").read_text())
    assert config["source"] == "hybrid" and config["web_queries"]
