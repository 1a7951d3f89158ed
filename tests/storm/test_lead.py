"""The extractive lead sums up what the article says about its topic, not what the sections left out."""

from __future__ import annotations

from agents.storm.citations import strip_citations
from agents.storm.steps_article import LeadInput, SectionDigest, WriteLead
from agents.storm.steps_research import NumberedSource

TOPIC = "Harborline Mutual flood coverage"
CENTRAL = [
    "Harborline Mutual covers flood damage to homes only through its flood rider, form FR-12.",
    "The FR-12 rider adds flood as a covered peril to the Harborline homeowners policy after a waiting period.",
]
PERIPHERAL = [  # about the company, and some about floods, but not what the article is about
    "Tomasz Ellery joined Harborline Mutual in 2009 as a field adjuster and handled hundreds of claims after the "
    "Marrow River flood.",
    "Harborline Mutual obtained a full insurance charter in 1979 and took its present name.",
    "The Harborline Mutual head office in Dunmore was flooded in 1994 and moved to Quay Street.",
    "Harborline Mutual sponsors a rowing regatta on the Marrow River every summer.",
    "Harborline Mutual employs about 300 people, some of them flood adjusters, across three offices.",
    "The founders of Harborline Mutual were fishermen who pooled money against storms.",
]


def _lead_input() -> LeadInput:
    sources = [NumberedSource(n=1, title="Flood rider FR-12", section="", text=" ".join(CENTRAL)),
               *(NumberedSource(n=i, title="Company overview", section="", text=t)
                 for i, t in enumerate(PERIPHERAL, start=2))]
    # the sections say what the central sentences say: the lead sums that up
    sections = [SectionDigest(heading="Coverage", text=f"{CENTRAL[0]}[1] {CENTRAL[1]}[1]"),
                SectionDigest(heading="Waiting period", text=f"{CENTRAL[1]}[1]")]
    return LeadInput(topic=TOPIC, sections=sections, sources=sources)


def test_the_lead_says_what_the_sections_say_about_the_topic(nlp):
    lead = WriteLead.extract(_lead_input(), nlp).lead
    said = strip_citations(lead)
    # the sections' own points come first, though the sections say them already
    assert said.startswith(f"{CENTRAL[0]} {CENTRAL[1]}")
    assert 2 <= len(nlp.sentences(said)) <= 4  # the step's "two to four sentences"


def test_the_lead_keeps_its_citations_and_stands_alone(nlp):
    lead = WriteLead.extract(_lead_input(), nlp).lead
    assert WriteLead.check(_lead_input(), WriteLead.Output(lead=lead)) is None


def test_the_lead_leaves_out_a_chronology_entry_told_in_the_present_tense(nlp):
    # a dated entry about the topic itself, told in the present tense: it would read as if it were true now
    chronology = ("- **1998** — The Kessel River floods Oldbridge. Harborline Mutual homeowners whose homes are "
                  "flooded find that the homeowners policy covers no flood damage, and Harborline Mutual receives "
                  "hundreds of complaints about its flood coverage.\n"
                  "- **2015** — Harborline Mutual adds flood cover for homes through the flood rider, form FR-12.")
    inp = _lead_input()
    inp.sources.append(NumberedSource(n=len(inp.sources) + 1, title="Drainage district chronology", section="",
                                      text=chronology))
    lead = strip_citations(WriteLead.extract(inp, nlp).lead)
    assert "complaints" not in lead and "Kessel" not in lead
    assert lead.startswith(CENTRAL[0])  # the lead is still written
