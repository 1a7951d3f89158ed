"""The recogniser of Stanford STORM's prompts (`tests/support/storm_prompts.py`) that lets the stand-in endpoint run STORM.

The prompts here are minimal hand-made copies of what knowledge-storm 1.1 sends through DSPy 2.4:
the instruction sentence STORM's signature starts with, `---`, then the filled-in fields and the
prefix of the field the model writes. Each reply is checked the way STORM parses it: DSPy cuts a
chain-of-thought reply at the next field's prefix, personas are `N. name: description` lines, queries
`- query` lines, outlines `#` lines, and every `[n]` must name a source the prompt numbered.
"""

from __future__ import annotations

import re

import pytest

from tests.support import llm_endpoint
from tests.support.storm_prompts import answer_storm_prompt, sentences, storm_kind

TOPIC = "Flood Rider (Form FR-12)"
SNIPPET_1 = ("# Flood Rider (Form FR-12)\n**Issued:** March 2019\nThe Flood Rider adds protection against flood "
             "to a Harborline homeowners or renters policy. Form FR-12 is the 2019 edition of the rider.")
SNIPPET_2 = ("- **2022** — Bulletin 2022-11 shortens the flood waiting period to 14 days from the date of purchase.\n"
             "- **2023** — The flood deductible rises to 2,500 dollars for every new policy.")


def prompt(instruction: str, query: str, guidelines: str | None = None) -> list[dict]:
    parts = [instruction] + ([f"Follow the following format.\n\n{guidelines}"] if guidelines else []) + [query]
    return [{"role": "user", "content": "\n\n---\n\n".join(parts)}]


def cot_value(reply: str, prefix: str) -> str:
    """What DSPy keeps of a chain-of-thought reply: the text after `\\n<prefix>` (else it asks again)."""
    assert f"\n{prefix}" in reply, reply
    return reply.split(f"\n{prefix}", 1)[1].strip()


def citations(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", text)}


def cited_sentences(text: str) -> list[tuple[str, int]]:
    return [(s.strip(), int(n)) for s, n in re.findall(r"([^\]]+?)\[(\d+)\]", text)]


def test_related_topics_name_no_urls_so_storm_fetches_nothing():
    reply = answer_storm_prompt(prompt(
        "I'm writing a Wikipedia page for a topic mentioned below. Please identify and recommend some Wikipedia "
        "pages on closely related subjects.", f"Topic of interest: {TOPIC}\nReasoning: Let's think step by step "
        "in order to", "Topic of interest: ${topic}\nReasoning: ...\nRelated Topics: ${related_topics}"))
    related = cot_value(reply, "Related Topics:")
    assert related and "http" not in reply
    assert "Reasoning:" not in related


def test_personas_are_numbered_name_and_description_lines():
    reply = answer_storm_prompt(prompt(
        "You need to select a group of Wikipedia editors who will work together to create a comprehensive article "
        "on the topic.", f"Topic of interest: {TOPIC}\n\nWiki page outlines of related topics for inspiration:\nN/A"
        "\n\nReasoning: Let's think step by step in order to"))
    reasoning, personas = reply.split("\nPersonas:", 1)
    assert not re.search(r"\d+\.\s", reasoning)  # STORM reads every "N. " line of the personas field
    found = [re.search(r"\d+\.\s*(.*)", line).group(1) for line in personas.strip().splitlines()]
    assert len(found) >= 3 and len(set(found)) == len(found)
    assert all(":" in p and TOPIC in p for p in found)


def writer(conv: str, persona: str = "Claims specialist: Focuses on how claims are reported, assessed and paid.") -> str:
    reply = answer_storm_prompt(prompt(
        "You are an experienced Wikipedia writer and want to edit a specific page.",
        f"Topic you want to write: {TOPIC}\n\nYour persona besides being a Wikipedia writer: {persona}\n\n"
        f"Conversation history:\n{conv}\n\nReasoning: Let's think step by step in order to"))
    return cot_value(reply, "Question:")


def test_the_writer_asks_a_new_question_each_turn_from_its_focus():
    first = writer("N/A")
    second = writer(f"You: {first}\nExpert: The rider adds flood protection.")
    third = writer(f"You: {first}\nExpert: The rider adds flood protection.\nYou: {second}\nExpert: Claims are paid.")
    assert all(q.endswith("?") for q in (first, second, third))
    assert len({first, second, third}) == 3
    assert "claims" in second.lower() or "reported" in second.lower()  # from the persona's focus
    assert not any(q.startswith("Thank you so much for your help!") for q in (first, second, third))


def test_queries_are_dash_lines_about_the_question():
    reply = answer_storm_prompt(prompt(
        "You want to answer the question using Google search. What do you type in the search box?",
        f"Topic you are discussing about: {TOPIC}\nQuestion you want to answer: How long is the flood waiting "
        "period?\nQueries:"))
    lines = reply.splitlines()
    assert 1 <= len(lines) <= 3 and all(line.startswith("- ") for line in lines)
    assert "waiting period" in reply


def expert(info: str) -> str:
    return answer_storm_prompt(prompt(
        "You are an expert who can use information effectively. You are chatting with a Wikipedia writer.",
        f"Topic you are discussing about: {TOPIC}\nQuestion:\nHow long is the flood waiting period?\n"
        f"Gathered information:\n{info}\nNow give your response. (Try to use as many different sources as "
        "possible and add do not hallucinate.)\n"))


def test_the_expert_answers_with_sentences_of_the_numbered_snippets():
    reply = expert(f"[1]: {SNIPPET_1}\n\n[2]: {SNIPPET_2}\n\n")
    snippets = {1: sentences(SNIPPET_1), 2: sentences(SNIPPET_2)}
    pairs = cited_sentences(reply)
    assert pairs and citations(reply) <= {1, 2}
    assert all(s in snippets[n] for s, n in pairs)  # copied, and cited to the snippet it came from
    assert "14 days" in reply  # the sentence that answers the question
    assert "**" not in reply


def test_the_expert_says_so_when_no_snippet_has_a_sentence():
    assert expert("[1]: # A heading only\n\n").startswith("I cannot answer this question")


def test_draft_outline_is_heading_lines_storm_writes_sections_for():
    reply = answer_storm_prompt(prompt(
        "Write an outline for a Wikipedia page.\n    Here is the format of your writing:",
        f"The topic you want to write: {TOPIC} claims and procedures\n\nWrite the Wikipedia page outline:"))
    headings = reply.splitlines()
    assert len(headings) >= 3 and all(h.startswith("# ") for h in headings)
    assert headings[0] == "# Claims"  # a heading the topic names comes first
    assert not {h[2:].lower() for h in headings} & {"introduction", "conclusion", "summary"}  # STORM skips those


def test_refined_outline_keeps_the_draft_and_adds_what_the_conversation_asked():
    conv = ("Wikipedia Writer: What does the rider say about waiting periods?\nExpert: Fourteen days.\n"
            "Wikipedia Writer: What does the rider say about claims and adjusters?\nExpert: An adjuster visits.")
    reply = answer_storm_prompt(prompt(
        "Improve an outline for a Wikipedia page. You already have a draft outline that covers the general "
        "information.", f"The topic you want to write: {TOPIC}\n\nConversation history:\n{conv}\n\nCurrent "
        "outline:\n# Overview\n# Claims\n\nWrite the Wikipedia page outline (Use \"#\" Title\" to indicate "
        "section title, \"##\" Title\" to indicate subsection title, ...):\n"))
    lines = reply.splitlines()
    assert [x for x in lines if x.startswith("# ")] == ["# Overview", "# Claims"]
    subs = [x for x in lines if x.startswith("## ")]
    assert any("waiting" in s.lower() for s in subs)
    claims = lines.index("# Claims")
    assert any("adjusters" in x.lower() for x in lines[claims:])  # under the heading it shares a word with


def test_a_section_starts_with_its_heading_and_cites_the_collected_information():
    reply = answer_storm_prompt(prompt(
        "Write a Wikipedia section based on the collected information.",
        f"The collected information:\n[1]\n{SNIPPET_1}\n\n[2]\n{SNIPPET_2}\n\nThe topic of the page: {TOPIC}\n\n"
        "The section you need to write: Waiting period\n\nWrite the section with proper inline citations (Start "
        "your writing with # section title. Don't include the page title or try to write other sections):\n"))
    heading, body = reply.split("\n", 1)
    assert heading == "# Waiting period"
    assert citations(body) <= {1, 2} and citations(body)
    assert cited_sentences(body)[0] == ("2022 — Bulletin 2022-11 shortens the flood waiting period to 14 days "
                                        "from the date of purchase.", 2)


DRAFT = ("# Coverage\n\nThe rider adds flood protection.[1] It is the 2019 edition.[2]\n\n# Waiting period\n\n"
         "The waiting period is 14 days.[3] The rider adds flood protection.[1]")


def test_the_lead_takes_each_sections_first_cited_sentence_once():
    reply = answer_storm_prompt(prompt(
        "Write a lead section for the given Wikipedia page with the following guidelines:",
        f"The topic of the page: {TOPIC}\n\nThe draft page:\n{DRAFT}\n\nWrite the lead section:\n"))
    assert reply == "The rider adds flood protection.[1] The waiting period is 14 days.[3]"


def test_polish_drops_a_repeated_sentence_and_keeps_the_structure():
    reply = answer_storm_prompt(prompt(
        "You are a faithful text editor that is good at finding repeated information in the article.",
        f"The draft article:\n{DRAFT}\n\nYour revised article:\n"))
    assert reply.count("The rider adds flood protection.") == 1
    assert [x for x in reply.splitlines() if x.startswith("#")] == ["# Coverage", "# Waiting period"]
    assert "The waiting period is 14 days.[3]" in reply


@pytest.mark.parametrize("text", [
    "Summarise this passage.\n\n[1] Flood Rider\n<document>\nThe rider adds flood cover.\n</document>",
    "You are an expert.\n\n---\n\nQuestion: what is covered?",  # STORM's words only count in its instruction
    "",
])
def test_other_prompts_are_left_to_the_next_answerer(text):
    assert storm_kind(text) is None
    assert answer_storm_prompt([{"role": "user", "content": text}]) is None
    assert answer_storm_prompt([]) is None


def test_the_endpoint_answers_storm_prompts_through_the_hook(monkeypatch):
    monkeypatch.setattr(llm_endpoint, "PLAIN_TEXT_ANSWERERS", [answer_storm_prompt])
    body = {"model": "standin", "messages": prompt("Write an outline for a Wikipedia page.",
                                                   f"The topic you want to write: {TOPIC}\n\nWrite the Wikipedia page outline:")}
    text, how = llm_endpoint.reply_text(body)
    assert how == "plain:answer_storm_prompt" and text.startswith("# ")


def test_sentences_leave_out_markup_headings_tables_and_labels():
    text = ("**Supersedes:** Sections 4 and 5 of Bulletin 2021-04\nThe waiting period is 14 days from purchase.\n\n"
            "| limit | 10 |\n## Heading\n- **2021** — Bulletin 2021-04 sets one deductible schedule.\n"
            "A paragraph that goes on\nover two lines ends here.")
    assert sentences(text) == ["The waiting period is 14 days from purchase.",
                               "2021 — Bulletin 2021-04 sets one deductible schedule.",
                               "A paragraph that goes on over two lines ends here."]
