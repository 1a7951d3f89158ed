"""Edges found on the bundled corpus: every supersedes/amends relation it states, none invented."""

from __future__ import annotations

from retrieval.graph.navigate import expand, locate, stats

B2104 = "https://docs.harborline.example/bulletins/2021-04"
B2211 = "https://docs.harborline.example/bulletins/2022-11"
FR12 = "https://docs.harborline.example/forms/fr-12"
FE24 = "https://docs.harborline.example/endorsements/fe-24"


def _short(node: str) -> str:
    return node.replace("https://docs.harborline.example/", "")


def test_every_stated_supersession_and_amendment_and_nothing_else(example):
    ws, _ = example
    graph = ws.graph("hb")
    found = {(e.type, _short(e.source), _short(e.target), e.via) for e in graph.edges
             if e.type in ("supersedes", "amends")}
    assert found == {
        ("supersedes", "bulletins/2022-11", "bulletins/2021-04#Section 4. Flood rider deductible", "header line"),
        ("supersedes", "bulletins/2022-11", "bulletins/2021-04#Section 5. Flood rider waiting period", "header line"),
        ("supersedes", "bulletins/2022-11#Rule 1. Waiting period",
         "bulletins/2021-04#Section 5. Flood rider waiting period", "reference text"),
        ("supersedes", "bulletins/2023-07", "ref:Bulletin 2020-02", "header line"),
        ("supersedes", "bulletins/2023-07", "ref:Bulletin 2021-09 §3", "header line"),
        ("amends", "endorsements/fe-24", "forms/fr-12#Deductible and waiting period", "header line"),
        ("supersedes", "claims/memos/cm-24-05", "ref:CM-21-02", "header line"),
        ("supersedes", "forms/fr-12", "ref:FR-10", "reference text"),
        ("supersedes", "forms/hm-3", "ref:HM-2", "reference text"),
        ("supersedes", "forms/cy-2", "ref:CY-1", "reference text"),
        ("supersedes", "forms/sb-5", "ref:SB-1", "reference text"),
        ("supersedes", "help/renters-faq#About the policy/Where did this policy come from?", "ref:TN-2",
         "reference text"),
    }
    # the timeline retells 2022-11's supersession: a reference from it, never a supersession by it
    timeline = [e for e in graph.edges if e.source.startswith("https://docs.harborline.example/about/timeline")]
    assert timeline and {e.type for e in timeline} == {"refers_to"}


def test_edges_record_their_source_lines(example):
    ws, corpus = example
    graph = ws.graph("hb")
    edge = next(e for e in graph.edges if e.type == "supersedes" and e.via == "header line" and e.source == B2211)
    lines = (corpus / "bulletin-2022-11-flood-rider-waiting-period.md").read_text().splitlines()
    assert lines[edge.line_start - 1] == "**Supersedes:** Sections 4 and 5 of Bulletin 2021-04"
    assert edge.effective == "January 1, 2023"


def test_partial_supersession_leaves_other_sections_current(example):
    ws, _ = example
    graph = ws.graph("hb")
    waiting = graph.status(B2104, ["Section 5. Flood rider waiting period"])
    assert waiting.state == "superseded" and waiting.by == [B2211] and waiting.effective == "January 1, 2023"
    assert graph.status(B2104, ["Section 4. Flood rider deductible"]).state == "superseded"
    assert graph.status(B2104, ["Section 2. Dwelling deductible"]).state == "current"
    assert graph.status(B2104).state == "current"
    amended = graph.status(FR12, ["Deductible and waiting period"])
    assert amended.state == "amended" and amended.by == [FE24]
    assert graph.status(FR12, ["What the rider covers"]).state == "current"


def test_inverse_edges_are_derived_not_stored(example):
    ws, _ = example
    graph = ws.graph("hb")
    assert all(e.type in ("supersedes", "amends", "refers_to", "attaches_to", "cites") for e in graph.edges)
    seen = graph.edges_of(f"{B2104}#Section 5. Flood rider waiting period", ["superseded_by"])
    assert {e.source for _, e in seen} == {B2211, f"{B2211}#Rule 1. Waiting period"}


def test_locate_expand_and_stats(example):
    ws, _ = example
    graph = ws.graph("hb")
    top = locate(graph, "Bulletin 2022-11", k=3)
    assert top[0].node.id == B2211
    out = expand(graph, B2104, ["superseded_by"])
    assert {n.other for n in out.edges} == {B2211, f"{B2211}#Rule 1. Waiting period"}
    assert {n.at for n in out.edges} == {f"{B2104}#Section 4. Flood rider deductible",
                                         f"{B2104}#Section 5. Flood rider waiting period"}
    s = stats(graph)
    assert s.nodes["document"] == 14 and s.edges["supersedes"] == 11 and s.edges["amends"] == 1
    assert s.unreached == ["https://docs.harborline.example/about/people"]
