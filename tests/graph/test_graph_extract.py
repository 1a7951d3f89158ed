"""Edge extraction from front matter, header lines and notes, on small written files (no store needed)."""

from __future__ import annotations

from retrieval.graph.extract import document_record
from retrieval.graph.view import EvidenceGraph
from retrieval.loaders import load_paths
from retrieval.splitter import split_document


def _graph(tmp_path, files: dict[str, str]) -> EvidenceGraph:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    docs = [d for d in load_paths([tmp_path]) if hasattr(d, "segments")]
    return EvidenceGraph(document_record(d, split_document(d)) for d in docs)


def test_front_matter_and_superseded_notes(tmp_path):
    graph = _graph(tmp_path, {
        "old.md": "---\ntitle: Manual MS-1\nurl: https://m.example/ms-1\n---\n# Manual MS-1\n\n"
                  "> SUPERSEDED by Manual MS-2\n\n## Scope\n\nGloves are optional.\n",
        "new.md": "---\ntitle: Manual MS-2\nurl: https://m.example/ms-2\neffective: 2024-05-01\n"
                  "amends: Manual MS-0\n---\n# Manual MS-2\n\n## Scope\n\nGloves are required.\n",
        "other.md": "---\ntitle: Rulebook RB-7\nsupersedes: RB-6\n---\n# Rulebook RB-7\n\n"
                    "Effective immediately, a sentence and not a field.\n",
    })
    typed = {(e.type, e.source, e.target, e.via) for e in graph.edges if e.type != "refers_to"}
    assert typed == {
        ("supersedes", "https://m.example/ms-2", "https://m.example/ms-1", "header line"),
        ("amends", "https://m.example/ms-2", "ref:MS-0", "front matter"),
        ("supersedes", str(tmp_path / "other.md"), "ref:RB-6", "front matter"),
    }
    old = graph.status("https://m.example/ms-1", ["Scope"])
    assert old.state == "superseded" and old.by == ["https://m.example/ms-2"] and old.effective == "2024-05-01"
    assert graph.document(str(tmp_path / "other.md")).effective is None


def test_a_retold_supersession_is_only_a_reference(tmp_path):
    graph = _graph(tmp_path, {
        "a.md": "---\ntitle: Bulletin 2020-01: Fees\n---\n# Bulletin 2020-01: Fees\n\n## Section 1. Fee\n\nThe fee is $5.\n",
        "b.md": "---\ntitle: Bulletin 2021-01: Parking\n---\n# Bulletin 2021-01: Parking\n\n## Section 1. Fee\n\nThe fee is $6.\n",
        "history.md": "# History\n\nIn 2021 Bulletin 2021-01 replaced Bulletin 2020-01. It supersedes the old fee.\n",
    })
    assert [e for e in graph.edges if e.type == "supersedes"] == []
    assert {e.type for e in graph.edges} == {"refers_to"}
    assert graph.status(str(tmp_path / "a.md"), ["Section 1. Fee"]).state == "current"


def test_editions_of_one_title_are_ordered_by_date_or_edition(tmp_path):
    graph = _graph(tmp_path, {
        "m21.md": "---\ntitle: Safety Manual (2021 edition)\n---\n# Safety Manual\n\nHard hats on level 1.\n",
        "m23.md": "---\ntitle: Safety Manual (2023 edition)\n---\n# Safety Manual\n\nHard hats on every level.\n",
        "f10.md": "---\ntitle: Flood Rider (Form FR-10)\neffective: 2012-06-01\n---\n# Flood Rider\n\nOld rider.\n",
        "f12.md": "---\ntitle: Flood Rider (Form FR-12)\neffective: 2019-06-01\n---\n# Flood Rider\n\nNew rider.\n",
        "faq1.md": "---\ntitle: Renters FAQ\n---\n# Renters FAQ\n\nQuestions one.\n",
        "faq2.md": "---\ntitle: Renters FAQ\n---\n# Renters FAQ\n\nQuestions two.\n",
    })
    order = {(graph.nodes[e.source].path[-7:], graph.nodes[e.target].path[-7:]) for e in graph.edges
             if e.via == "edition order"}
    assert order == {("/m23.md", "/m21.md"), ("/f12.md", "/f10.md")}  # two undated FAQs: no order to trust
    assert graph.status(str(tmp_path / "f10.md")).state == "superseded"


def test_a_document_that_marks_itself_superseded_is_read_as_superseded(tmp_path):
    # three ways a document says it no longer holds, none in a header field or a separate bulletin
    graph = _graph(tmp_path, {
        "dock-2019.md": "---\ntitle: Port of Averill Dock Rules (2019 edition)\n---\n# Dock Rules\n\n"
                        "This form is no longer in use; replaced by the 2023 edition.\n\n"
                        "## Mooring\n\nA vessel may stay at the visitor pontoon for 48 hours.\n",
        "dock-2023.md": "---\ntitle: Port of Averill Dock Rules (2023 edition)\n---\n# Dock Rules\n\n"
                        "## Mooring\n\nA vessel may stay at the visitor pontoon for 72 hours.\n",
        "dock-2021.md": "---\ntitle: Port of Averill Dock Rules (2021 edition)\n---\n# Dock Rules\n\n"
                        "## Mooring\n\nA vessel may stay at the visitor pontoon for 60 hours.\n",
        "notice-1.md": "---\ntitle: Harbour Notice HN-1\n---\n# Harbour Notice HN-1\n\n"
                       "**Superseded — see Harbour Notice HN-4.**\n\n## Fees\n\nBerthing costs 9 crowns a night.\n",
        "notice-4.md": "---\ntitle: Harbour Notice HN-4\n---\n# Harbour Notice HN-4\n\n## Fees\n\n"
                       "Berthing costs 11 crowns a night.\n",
        "notice-2.md": "---\ntitle: Harbour Notice HN-2\n---\n# Harbour Notice HN-2\n\n## Pilots\n\n"
                       "This notice was superseded by Harbour Notice HN-4 on 1 May. Pilots board at the buoy.\n",
        "notice-5.md": "---\ntitle: Harbour Notice HN-5\n---\n# Harbour Notice HN-5\n\n"
                       "This notice replaces Harbour Notice HN-3. A damaged fender is replaced at the owner's cost.\n",
    })

    def status(name, hp=()):
        return graph.status(str(tmp_path / name), list(hp))

    # "replaced by the 2023 edition": that edition, though the 2021 one comes between them
    assert status("dock-2019.md", ["Dock Rules", "Mooring"]).by == [str(tmp_path / "dock-2023.md")]
    assert status("notice-1.md", ["Fees"]).by == [str(tmp_path / "notice-4.md")]  # "Superseded — see ..."
    assert status("notice-2.md", ["Pilots"]).by == [str(tmp_path / "notice-4.md")]  # passive: from HN-4, not to it
    assert status("notice-4.md", ["Fees"]).state == "current"
    assert status("dock-2023.md", ["Dock Rules", "Mooring"]).state == "current"
    # the active voice stays what it was: HN-5 supersedes HN-3, and a fender replaced marks nothing
    assert status("notice-5.md").state == "current"
    assert {(e.source, e.target) for e in graph.edges if e.type == "supersedes" and "notice-5" in e.source} == {
        (str(tmp_path / "notice-5.md"), "ref:HN-3")}


def test_a_document_that_revokes_or_rescinds_another_supersedes_it(tmp_path):
    graph = _graph(tmp_path, {
        "circular-3.md": "---\ntitle: Circular 3/2018\n---\n# Circular 3/2018\n\n## Fees\n\nA permit costs 40 crowns.\n",
        "circular-9.md": "---\ntitle: Circular 9/2021\n---\n# Circular 9/2021\n\nThis circular revokes Circular\n"
                         "3/2018 with effect from 1 March 2021.\n\n## Fees\n\nA permit costs 55 crowns.\n",
        "order-5.md": "---\ntitle: Directive 5/2020\n---\n# Directive 5/2020\n\n## Pilots\n\nPilots board at the buoy.\n",
        "order-7.md": "---\ntitle: Directive 7/2022\n---\n# Directive 7/2022\n\nThis directive rescinds Directive 5/2020.\n",
    })
    # "revokes Circular" ends one line and "3/2018" starts the next: one sentence, read whole
    assert graph.status(str(tmp_path / "circular-3.md"), ["Fees"]).by == [str(tmp_path / "circular-9.md")]
    assert graph.status(str(tmp_path / "order-5.md"), ["Pilots"]).by == [str(tmp_path / "order-7.md")]
    assert graph.status(str(tmp_path / "circular-9.md"), ["Fees"]).state == "current"
