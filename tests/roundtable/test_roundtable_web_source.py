"""`raystorm roundtable --source web`: the experts search a SearXNG stand-in, the pages they keep are fetched
from a small site on 127.0.0.1 and cited at the lines of their snapshots, and so is the report; the session
goes on on the cluster (`--distributed`), where a WebResearch actor searches and fetches for the experts."""

from __future__ import annotations

import json
from pathlib import Path

from agents.roundtable.records import RoundtableSession
from agents.wiki.check import check_folder
from cluster.cli import main
from tests.webresearch.site_pages import site  # noqa: F401  (the fixture: the site and search stand-in)


def test_a_roundtable_on_the_web_here_then_on_the_cluster(site, ray_session, tmp_path, capsys):  # noqa: F811
    web = ["--search-engine", "searxng", "--search-url", site.url, "--allow-private-hosts", "--site-interval", "0"]
    assert main(["roundtable", "Greyhaven Coastal Flood Program", "--source", "web", *web, "--max-experts", "2",
                 "--turns", "1", "--observe", "--report", "--json", "--data-dir", str(tmp_path)]) == 0
    said = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    _cite_snapshots(said, site.url)
    (folder,) = (tmp_path / "roundtables").iterdir()
    session = RoundtableSession.model_validate_json((folder / "session.json").read_text(encoding="utf-8"))
    assert session.source == "web" and session.collection == "web"
    checked = check_folder(folder)
    assert checked.claims and checked.counts["ok"] == len(checked.claims)
    assert Path(checked.claims[0].page).name == "report.md"

    # the same session goes on on the cluster, the simulated user speaking at once: the WebResearch actor
    # searches the engine for the expert who answers it
    asked = len(site.queries)
    assert main(["roundtable", "--resume", session.id, *web, "--turns", "1", "--observe", "--user-every", "1",
                 "--json", "--distributed", "--experts", "1", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "expert actors" in out.err
    user, turn = [json.loads(line) for line in out.out.splitlines()]
    assert user["turn"] == session.turns + 1 and user["simulated"] and turn["focus"] == user["text"]
    _cite_snapshots([turn], site.url)
    assert set(turn["queries"]) <= set(site.queries[asked:]), "the turn's searches did not reach the engine"


def _cite_snapshots(said: list[dict], url: str) -> None:
    cited = [s for u in said for n in u["cited"] for s in [u["sources"][n - 1]]]
    assert cited and all(s["url"].startswith(url) and "/web/" in s["path"] for s in cited)
