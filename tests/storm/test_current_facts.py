"""The rule in force before its history (agents/storm/current_facts.py), on a water utility's tariff
schedules written unlike the bundled bulletins: long sentences, values in words, a neighbouring
provision with a value of the same kind. The table is a real information table on the session's store."""

from __future__ import annotations

import asyncio

from agents.storm.current_facts import best_current, state_current
from agents.storm.records import Article, ArticleSection, Citation
from retrieval.graph.current import is_history, short_title
from retrieval.snippets import Snippet

OLD = "Schedule W-3 (2019 edition): Residential Water Service"
NEW = "Schedule W-3 (2023 edition): Residential Water Service"
# as retrieval.graph.current frames a superseded passage (titles shortened, no brackets inside)
FRAME = f"Until March 1, 2023 ({short_title(OLD)}, superseded by {short_title(NEW)}): "


def _snippet(title: str, url: str, text: str, line: int, heading: str) -> Snippet:
    return Snippet(url=url, title=title, text=text, path=url.rsplit("/", 1)[-1] + ".md", line_start=line,
                   line_end=line, passage_id=f"{url}#{line}", heading_path=[title, heading])


OLD_LATE = _snippet(OLD, "https://water.example/w3-2019", FRAME + (
    "A customer whose bill remains unpaid on the due date shall pay a late-payment charge of "
    "twenty-five dollars ($25) for each bill so remaining."), 41, "Part 6. Charges for late payment")
NEW_LATE = _snippet(NEW, "https://water.example/w3-2023", (
    "The late-payment charge on a bill that remains unpaid on its due date is forty dollars ($40). The reconnection fee after a shut-off for non-payment is "
    "seventy-five dollars ($75), payable before service is restored."), 52, "Part 6. Charges for late payment")
NEW_NOTICE = _snippet(NEW, "https://water.example/w3-2023", (
    "A customer whose bill remains unpaid on the due date and who does not pay shall be sent a notice of the "
    "late-payment charge for each bill so remaining."), 50, "Part 6. Charges for late payment")
NEW_METER = _snippet(NEW, "https://water.example/w3-2023", (
    "Meters are read every second month. A customer may ask for a special reading, which is charged at "
    "fifteen dollars ($15)."), 30, "Part 3. Meter reading")


def _article(text: str, citations: list[Citation]) -> Article:
    return Article(topic="Residential water charges", sections=[ArticleSection(heading="Charges", text=text)],
                   citations=citations)


def test_the_same_provision_is_chosen_over_a_neighbouring_value_of_the_same_kind():
    history = f"{OLD_LATE.text}[1]"
    # the reminder shares more words with it than the rule does, but states no charge
    found = best_current(history, [short_title(NEW)], [NEW_NOTICE, NEW_METER, NEW_LATE])
    assert found is not None
    sentence, snippet = found
    assert "forty dollars ($40)" in sentence and snippet is NEW_LATE  # not the $75 reconnection fee nor the $15
    # a document other than the one that superseded it is never read for the rule in force
    assert best_current(history, ["Schedule W-9 2023 edition"], [NEW_LATE]) is None


def test_a_section_stating_only_the_history_gets_the_rule_in_force_first(parts):
    table = parts.table("current-facts-own")
    article = _article(f"Meters are read every second month.[2] {OLD_LATE.text}[1]", [
        Citation(index=1, url=OLD_LATE.url, title=OLD, snippets=[OLD_LATE]),
        Citation(index=2, url=NEW_LATE.url, title=NEW, snippets=[NEW_METER, NEW_LATE])])
    try:
        out = asyncio.run(state_current(article, table))
    finally:
        asyncio.run(table.drop())
    text = out.sections[0].text
    current = text.index("The late-payment charge on a bill that remains unpaid on its due date is forty dollars ($40).[2]")
    assert current < text.index("Until March 1, 2023")  # the value in force, then its history
    assert [c.index for c in out.citations] == [1, 2]  # cited by the number the source already had


def test_the_rule_in_force_is_found_in_the_table_when_the_article_does_not_cite_it(parts):
    table = parts.table("current-facts-table")
    asyncio.run(table.add([NEW_METER, NEW_LATE]))
    article = _article(f"{OLD_LATE.text}[1]", [Citation(index=1, url=OLD_LATE.url, title=OLD, snippets=[OLD_LATE])])
    try:
        out = asyncio.run(state_current(article, table))
    finally:
        asyncio.run(table.drop())
    assert out.sections[0].text.startswith(
        "The late-payment charge on a bill that remains unpaid on its due date is forty dollars ($40).[2]")
    assert out.citations[-1].index == 2 and out.citations[-1].snippets == [NEW_LATE]


def test_a_section_already_stating_it_first_and_a_provision_the_newer_edition_lacks_are_left_alone(parts):
    table = parts.table("current-facts-alone")
    stated = ("The late-payment charge on a bill that remains unpaid on its due date is forty dollars ($40).[2] "
              f"{OLD_LATE.text}[1]")
    citations = [Citation(index=1, url=OLD_LATE.url, title=OLD, snippets=[OLD_LATE]),
                 Citation(index=2, url=NEW_LATE.url, title=NEW, snippets=[NEW_LATE])]
    unmatched = _snippet(OLD, OLD_LATE.url, FRAME + (
        "Fire hydrants are flushed by the utility each spring at no charge to customers."),
        60, "Part 9. Hydrants")
    try:
        same = asyncio.run(state_current(_article(stated, citations), table))
        alone = asyncio.run(state_current(_article(f"{unmatched.text}[1]", [
            Citation(index=1, url=OLD_LATE.url, title=OLD, snippets=[unmatched]),
            Citation(index=2, url=NEW_LATE.url, title=NEW, snippets=[NEW_NOTICE, NEW_METER, NEW_LATE])]), table))
    finally:
        asyncio.run(table.drop())
    assert same.sections[0].text == stated
    assert alone.sections[0].text == f"{unmatched.text}[1]"  # nothing of another provision is offered


def test_a_models_own_sentence_citing_only_history_counts_as_history(parts):
    table = parts.table("current-facts-model")
    paraphrase = "Late bills used to cost customers twenty-five dollars each.[1]"
    assert not is_history(paraphrase)
    article = _article(paraphrase, [Citation(index=1, url=OLD_LATE.url, title=OLD, snippets=[OLD_LATE]),
                                    Citation(index=2, url=NEW_LATE.url, title=NEW, snippets=[NEW_LATE])])
    try:
        out = asyncio.run(state_current(article, table))
    finally:
        asyncio.run(table.drop())
    assert out.sections[0].text.index("forty dollars ($40).[2]") < out.sections[0].text.index(paraphrase)


def test_a_section_uses_a_chronology_entry_only_by_its_dated_sentence(nlp):
    # the entry's second sentence has lost its year and would read as what is true now
    from agents.storm.steps_article import SectionInput, WriteSection
    from agents.storm.steps_research import NumberedSource

    chronology = ("- **2014** — The Oldbridge treatment plant floods after a week of rain. Residential water charges "
                  "are suspended for a month, and the utility receives hundreds of complaints about water charges.")
    rule = "The late-payment charge on a residential water bill is forty dollars ($40) for each bill paid late."
    out = WriteSection.extract(SectionInput(
        topic="Residential water charges", heading="Water charges", sources=[
            NumberedSource(n=1, title="Utility chronology", section="", text=chronology),
            NumberedSource(n=2, title=NEW, section="Part 6. Charges for late payment", text=rule)]), nlp)
    assert "forty dollars" in out.text
    assert "are suspended for a month" not in out.text
