"""The graph follows ingests: incremental rebuild, prune, edition order, `expand` stopping at a branch,
and search hits carrying status with superseded passages ranked last and read as history."""

from __future__ import annotations

from retrieval.graph.navigate import expand
from retrieval.graph.store import GraphStore
from retrieval.search import SearchSettings


# distinct titles: notices of one title would be read as editions of one family (edition order)
_SUBJECT = {"NP-1": "Harbor parking", "NP-2": "Street meters", "NP-3": "Meter rates", "NP-4": "Resident permits",
            "NP-5": "Loading zones"}


def _doc(code: str, body: str, header: str = "", front: str = "") -> str:
    title = f"Notice {code}: {_SUBJECT[code]}"
    return (f"---\ntitle: {title}\nurl: https://city.example/notices/{code}\n{front}---\n"
            f"# {title}\n\n{header}\n\n## Section 1. Fees\n\n{body}\n\n"
            f"## Section 2. Hours\n\nMeters run from 8 a.m. to 6 p.m. under Notice {code}.\n")


def _write(folder, files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


CHAIN = {
    "a.md": _doc("NP-1", "Street parking costs $2 an hour in the harbor district."),
    "b.md": _doc("NP-2", "Street parking costs $3 an hour in the harbor district.",
                 "**Effective:** March 1, 2022\n**Supersedes:** Section 1 of Notice NP-1"),
    "c.md": _doc("NP-3", "Street parking costs $4 an hour in the harbor district.",
                 "**Effective:** May 1, 2024\n**Supersedes:** Notice NP-2"),
}


def test_incremental_rebuild_after_reingest_and_prune(workspace, tmp_path):
    folder = tmp_path / "notices"
    _write(folder, CHAIN)
    workspace.ingest([folder], "city")
    graphs = GraphStore(workspace.store)
    graph = graphs.load("city")
    assert {(e.source[-4:], e.target) for e in graph.edges if e.type == "supersedes"} == {
        ("NP-2", "https://city.example/notices/NP-1#Section 1. Fees"), ("NP-3", "https://city.example/notices/NP-2")}
    before = {r.doc_id: r.digest for r in graphs.records("city")}
    # re-ingesting unchanged files rewrites nothing
    again = graphs.update("city", *_loaded(folder))
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 0, 0, 3)
    # NP-3 no longer supersedes NP-2: only its record changes, and NP-2 becomes current again
    (folder / "c.md").write_text(_doc("NP-3", "Street parking costs $4 an hour in the harbor district.",
                                      "**Effective:** May 1, 2024"), encoding="utf-8")
    workspace.ingest([folder], "city")
    after = {r.doc_id: r.digest for r in graphs.records("city")}
    assert [d for d in after if after[d] != before[d]] == [next(r.doc_id for r in graphs.records("city")
                                                              if r.path.endswith("c.md"))]
    graph = graphs.load("city")
    assert graph.status("https://city.example/notices/NP-2", ["Section 1. Fees"]).state == "current"
    # prune: NP-2 deleted, its record goes, and NP-1's section 1 is current once nothing supersedes it
    (folder / "b.md").unlink()
    workspace.ingest([folder], "city", prune=True)
    graph = graphs.load("city")
    assert sorted(r.node_id[-4:] for r in graph.records) == ["NP-1", "NP-3"]
    assert graph.status("https://city.example/notices/NP-1", ["Section 1. Fees"]).state == "current"


def _loaded(folder):
    from retrieval.loaders import load_paths
    from retrieval.splitter import split_document

    docs = list(load_paths([folder]))
    return docs, [p for d in docs for p in split_document(d)]


def test_expand_follows_a_single_path_and_stops_at_a_branch(workspace, tmp_path):
    folder = tmp_path / "notices"
    files = dict(CHAIN)
    files["d.md"] = _doc("NP-4", "Residents park free on Sundays.", "**Supersedes:** Notice NP-3")
    files["e.md"] = _doc("NP-5", "Loading zones are free for 15 minutes.", "**Supersedes:** Notice NP-3")
    _write(folder, files)
    workspace.ingest([folder], "city")
    graph = workspace.graph("city")
    up = expand(graph, "https://city.example/notices/NP-1", ["superseded_by"], hops=5)
    assert up.path == ["https://city.example/notices/NP-1", "https://city.example/notices/NP-2",
                       "https://city.example/notices/NP-3"]
    assert up.stopped == "branch"
    assert sorted(up.branches) == ["https://city.example/notices/NP-4", "https://city.example/notices/NP-5"]
    down = expand(graph, "https://city.example/notices/NP-4", ["supersedes"], hops=5)
    assert down.path[-1] == "https://city.example/notices/NP-1#Section 1. Fees" and down.stopped == "end"


def test_edition_order_within_a_family(workspace, tmp_path):
    folder = tmp_path / "manual"
    for n, year in ((1, 2019), (2, 2021), (3, 2023)):
        _write(folder, {f"m{n}.md": f"---\ntitle: Safety manual edition {n}\nfamily: safety manual\n"
                                    f"edition: {n}\neffective: {year}-01-01\n---\n# Safety manual\n\n"
                                    f"Hard hats are required on site level {n}.\n"})
    workspace.ingest([folder], "manual")
    graph = workspace.graph("manual")
    order = {(graph.nodes[e.source].title[-1], graph.nodes[e.target].title[-1], e.via) for e in graph.edges}
    assert order == {("2", "1", "edition order"), ("3", "2", "edition order")}


def test_search_marks_status_ranks_current_first_and_frames_history(workspace, tmp_path):
    folder = tmp_path / "notices"
    _write(folder, {k: CHAIN[k] for k in ("a.md", "b.md")})
    workspace.ingest([folder], "city")
    hits = workspace.corpus("city").search("how much does street parking cost an hour", k=6)
    states = [h.status.state for h in hits]
    assert "superseded" in states and states == sorted(states, key=lambda s: s == "superseded")
    old = next(h for h in hits if h.status.state == "superseded")
    assert old.passage.text.startswith("Until March 1, 2022 (Notice NP-1, superseded by Notice NP-2): Street")
    source = (folder / "a.md").read_text().splitlines()[old.passage.line_start - 1]
    assert source == "Street parking costs $2 an hour in the harbor district."  # the citation still points here
    # the same pipeline ignoring the graph: no status, the text as written
    plain = workspace.corpus("city", search=SearchSettings(prefer_current=False)).search(
        "how much does street parking cost an hour", k=6)
    assert all(h.status is None for h in plain)
    assert any(h.passage.text == source for h in plain)
