"""`wiki build|check|update` on the bundled corpus: claims pinned to lines, then the sources edited,
moved and deleted under them."""

from __future__ import annotations

import json
import socket

from agents.wiki.check import check_folder
from cluster.cli import main

WAITING = "bulletin-2022-11-flood-rider-waiting-period"
LINE = "The waiting period for the Flood Rider is 14 days from the date of purchase."


def _build(data, out, *extra):
    assert main(["wiki", "build", "-c", "hb", "--out", str(out), "--data-dir", str(data), *extra]) == 0


def _claims(out, page):
    return json.loads((out / f"{page}.claims.json").read_text())["claims"]


def _waiting_claim(out):
    return next(c for c in _claims(out, WAITING) if c["text"].startswith("The waiting period for the Flood Rider"))


def test_build_pins_each_statement_to_its_exact_lines(ingested, tmp_path):
    data, corpus = ingested
    out = tmp_path / "wiki"
    _build(data, out)
    claim = _waiting_claim(out)
    ev = claim["evidence"][0]
    lines = (corpus / f"{WAITING}.md").read_text().splitlines()
    assert LINE in lines[ev["line_start"] - 1] and ev["line_start"] == ev["line_end"]
    assert ev["source"] == "https://docs.harborline.example/bulletins/2022-11"
    page = (out / f"{WAITING}.md").read_text()
    assert f"[^{claim['id']}]: https://docs.harborline.example/bulletins/2022-11#L{ev['line_start']}" in page
    # superseded evidence is stated as history on the page, never as the rule in force
    old = " ".join(c["text"] for c in _claims(out, "bulletin-2021-04-personal-lines-deductible-schedule"))
    assert "Until January 1, 2023 (Bulletin 2021-04, superseded by Bulletin 2022-11): Coverage under" in old
    assert check_folder(out).counts == {"ok": sum(len(_claims(out, p.name[:-12])) for p in
                                                  out.glob("*.claims.json")), "relocated": 0, "stale": 0,
                                        "unresolved": 0}


def test_claims_become_graph_nodes_citing_their_passages(ingested, tmp_path):
    from retrieval.config import StoreSettings
    from retrieval.graph.navigate import expand, locate
    from retrieval.graph.store import GraphStore
    from retrieval.store import PassageStore

    data, _ = ingested
    out = tmp_path / "wiki"
    _build(data, out)
    _build(data, out)  # a rebuild replaces the wiki's claim nodes, never doubles them
    store = PassageStore(StoreSettings.resolve(data_dir=str(data), qdrant_url=None))
    try:
        graph = GraphStore(store).load("hb")
    finally:
        store.close()
    claim_id = f"claim:{WAITING}.md#{_waiting_claim(out)['id']}"
    assert sum(1 for n in graph.nodes.values() if n.kind == "claim") == check_folder(out).counts["ok"]
    cited = expand(graph, claim_id, ["cites"]).edges
    assert len(cited) == 1 and graph.nodes[cited[0].other].line_start == 18
    assert cited[0].edge.via == "claim evidence"
    assert any(f.node.id == claim_id for f in locate(graph, "waiting period Flood Rider 14 days", k=5))


def test_check_finds_relocated_stale_and_unresolved_claims(ingested, tmp_path, capsys):
    data, corpus = ingested
    out = tmp_path / "wiki"
    _build(data, out)
    waiting = corpus / f"{WAITING}.md"
    # moved: two lines inserted above the cited line
    text = waiting.read_text()
    waiting.write_text(text.replace("## Background", "## Note\n\nAdded later.\n\n## Background"))
    report = check_folder(out)
    moved = next(c for c in report.claims if c.text == LINE)
    assert moved.state == "relocated" and report.counts["stale"] == 0 and report.counts["unresolved"] == 0
    assert check_folder(out).counts["relocated"] == 0  # the pointer was updated
    new = _waiting_claim(out)["evidence"][0]
    assert LINE in waiting.read_text().splitlines()[new["line_start"] - 1]
    # stale: the cited line edited in place
    waiting.write_text(waiting.read_text().replace("14 days from the date", "21 days from the date"))
    # unresolved: a cited section of another file deleted; and a whole cited file deleted
    fe24 = corpus / "endorsement-fe-24-flood-waiting-period-exceptions.md"
    fe24_lines = fe24.read_text().splitlines()
    cut = fe24_lines.index("### 2. Continuous renewal")
    fe24.write_text("\n".join(fe24_lines[: cut] + fe24_lines[cut + 4:]) + "\n")
    (corpus / "staff-profiles.md").unlink()
    capsys.readouterr()
    assert main(["wiki", "check", str(out), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    states = {c["text"]: c["state"] for c in result["claims"]}
    assert states[LINE] == "stale"
    assert states["When limits are increased at renewal, the waiting period applies only to the increased part of the limit."] == "unresolved"
    staff = [c for c in result["claims"] if "staff-profiles" in c["page"] or "Staff" in c["page"]]
    assert staff and all(c["state"] == "unresolved" for c in staff)
    untouched = [c for c in result["claims"] if "glossary" in c["page"]]
    assert untouched and all(c["state"] == "ok" for c in untouched)


def test_update_rederives_only_stale_and_unresolved_claims(ingested, tmp_path):
    data, corpus = ingested
    out = tmp_path / "wiki"
    _build(data, out)
    before = check_folder(out).counts["ok"]
    waiting = corpus / f"{WAITING}.md"
    waiting.write_text(waiting.read_text().replace("14 days from the date", "21 days from the date"))
    (corpus / "staff-profiles.md").unlink()
    staff = len(_claims(out, "harborline-mutual-staff-profiles"))
    assert main(["wiki", "update", str(out), "--data-dir", str(data)]) == 0
    after = check_folder(out)
    assert after.counts["stale"] == after.counts["unresolved"] == 0
    assert after.counts["ok"] == before - staff
    texts = [c["text"] for c in _claims(out, WAITING)]
    assert "The waiting period for the Flood Rider is 21 days from the date of purchase." in texts
    assert "Coverage begins at 12:01 a.m. on the fifteenth day." in texts  # the same line, its other claim
    assert "21 days" in (out / f"{WAITING}.md").read_text()
    assert not (out / "harborline-mutual-staff-profiles.md").exists()  # no claim left: the page goes
    from retrieval.config import StoreSettings
    from retrieval.graph.store import GraphStore
    from retrieval.store import PassageStore

    store = PassageStore(StoreSettings.resolve(data_dir=str(data), qdrant_url=None))
    try:
        graph = GraphStore(store).load("hb")
    finally:
        store.close()
    assert sum(1 for n in graph.nodes.values() if n.kind == "claim") == after.counts["ok"]


def _dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_check_makes_no_model_call(ingested, tmp_path, counting_llm, monkeypatch, capsys):
    data, corpus = ingested
    out = tmp_path / "wiki"
    # built by a chat model (the loopback server), so the sidecars name a chat model
    _build(data, out, "--llm", "fake", "--llm-base-url", counting_llm.url, "--no-llm-cache")
    assert counting_llm.requests > 0
    assert json.loads((out / f"{WAITING}.claims.json").read_text())["written_by"].count(counting_llm.url)
    served = counting_llm.requests
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_dead_port()}/v1")  # a dead endpoint
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    ev = _claims(out, WAITING)[0]["evidence"][0]  # whatever the chat model's claim cites: edit it
    lines = (corpus / f"{WAITING}.md").read_text().splitlines()
    lines[ev["line_start"] - 1] += " (edited)"
    (corpus / f"{WAITING}.md").write_text("\n".join(lines) + "\n")
    assert main(["wiki", "check", str(out)]) == 1
    assert "no model call" in capsys.readouterr().out
    assert counting_llm.requests == served


def test_build_never_pins_a_statement_to_lines_that_no_longer_say_it(ingested, tmp_path, capsys):
    data, corpus = ingested
    waiting = corpus / f"{WAITING}.md"
    waiting.write_text(waiting.read_text().replace("14 days from the date", "21 days from the date"))
    capsys.readouterr()
    _build(data, tmp_path / "wiki")  # the store still holds the 14-day text: not ingested again
    assert "statements left out" in capsys.readouterr().out
    texts = [c["text"] for c in _claims(tmp_path / "wiki", WAITING)]
    assert not any("14 days" in t for t in texts)
    assert check_folder(tmp_path / "wiki").counts["stale"] == 0
