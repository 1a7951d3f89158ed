"""What a chat model is given (issue 33): the rendered prompts of every step the issue names.

Each test renders what a `ChatModel` would send (`render_input`, the system prompt, the request's
sampling), from real inputs: the example corpus, the real information table, the extractive model
underneath a recorder that keeps every step's input.
"""

from __future__ import annotations

import argparse
import asyncio
import json

import httpx
import pytest

from agents.answer.verify import VerifyAnswer, VerifyInput, VerifyOutput
from agents.lm.arguments import add_llm_arguments, settings_from_args
from agents.lm.models import RoleModels
from agents.lm.output import system_prompt
from agents.lm.settings import LLMSettings, ModelSpec
from agents.lm.text.instructions import DATA_RULE
from agents.report.agent import ChooseTool, write_react_section
from agents.report.steps import (
    InterviewQuestions,
    PlanInput,
    PlanSections,
    SubQuestions,
    WriteReactSection,
    within_budget,
)
from agents.report.tools import ToolContext
from agents.runtime import StageContext
from agents.storm.article import write_lead, write_section
from agents.storm.expert import ExpertAgent
from agents.storm.records import Article, ArticleSection, Citation, ConversationLog, Outline, OutlineSection
from agents.storm.stages import OutlineArgs, make_outline
from agents.storm.steps_article import LeadOutput, SectionDigest, SectionInput, WriteLead, WriteSection
from agents.storm.steps_outline import (
    OUTLINE_EVIDENCE_WORDS,
    DraftOutline,
    RefineOutline,
    RefineOutlineInput,
)
from agents.storm.steps_research import AnswerQuestion, AskQuestion, HistoryTurn, NumberedSource, QuestionInput
from agents.storm.records import Persona
from retrieval.documents import PassageText
from retrieval.snippets import Snippet
from storm_support import completion

FLOOD = "Harborline flood rider"


class Recorder:
    """The extractive model, keeping each step's input: what a chat model would have been shown."""

    def __init__(self, inner):
        self.inner, self.name, self.ledger = inner, "recorder", inner.ledger
        self.seen: list[tuple[type, object]] = []

    async def run(self, step, inp):
        self.seen.append((step, inp))
        return await self.inner.run(step, inp)

    def prompts(self, step) -> list[str]:
        return [step.render_input(i) for s, i in self.seen if s is step]

    def inputs(self, step) -> list:
        return [i for s, i in self.seen if s is step]


async def _snippets(parts, query: str, k: int) -> list[Snippet]:
    return [Snippet.from_passage(h.passage) for h in await parts.retriever.search(query, k=k)]


# --- 1. the outline is refined from everything, not an arbitrary sample ------------------------


def test_the_outline_prompt_shows_every_snippet_whole_and_caps_no_heading_count():
    words = [f"w{i}" for i in range(70)]
    evidence = [PassageText(title=f"Source {i % 9}", text=f"Fact {i}: " + " ".join(words) + f" end{i}.")
                for i in range(50)]
    inp = RefineOutlineInput(topic="T", draft=Outline(sections=[OutlineSection(heading="Background")]),
                             conversation=[], evidence=evidence, max_headings=20)
    prompt = RefineOutline.render_input(inp)
    assert all(e.text in prompt for e in evidence)  # all 50, each to its last word (the old: 40, 60 words)
    assert "max_headings" not in prompt and "at most" not in RefineOutline.instructions
    # past the stated budget, the prompt says what it left out
    many = [PassageText(title=f"S{i}", text=" ".join(words)) for i in range(OUTLINE_EVIDENCE_WORDS // 60)]
    cut = RefineOutline.render_input(inp.model_copy(update={"evidence": [PassageText(title="S", text=f"{i} "
                                                                         + e.text) for i, e in enumerate(many)]}))
    assert f"budget is {OUTLINE_EVIDENCE_WORDS} words" in cut


def test_the_outline_stage_reads_the_corpus_beside_the_research(parts):
    models = Recorder(parts.extractive())
    research = asyncio.run(_snippets(parts, f"{FLOOD} claims", 3))
    ctx = StageContext(models, parts.retriever, None)
    asyncio.run(make_outline(OutlineArgs(topic=FLOOD, log=ConversationLog(conversations=[]), snippets=research), ctx))
    inp = models.inputs(RefineOutline)[0]
    prompt = RefineOutline.render_input(inp)
    assert len(inp.reading) > len(research)  # the topic's and each draft heading's best passages
    assert all(" ".join(r.text.split()) in " ".join(prompt.split()) for r in inp.reading)
    # the extractive outline still counts the research's evidence only
    assert [e.text for e in inp.evidence] == [s.text for s in research]


# --- 2. every subsection has its own sources, and cites them ----------------------------------


def test_each_subsection_is_given_its_own_sources(parts):
    models = Recorder(parts.extractive())
    table = parts.table("prompts-subsections")
    try:
        asyncio.run(table.add(asyncio.run(_snippets(parts, FLOOD, 40))))
        outline = Outline(sections=[OutlineSection(heading="Coverage", subsections=["Waiting period", "Exclusions"])])
        asyncio.run(write_section(FLOOD, outline, 0, table, models, k=3))
    finally:
        asyncio.run(table.drop())
    inp = models.inputs(WriteSection)[0]
    assert [p.heading for p in inp.by_subsection] == ["Waiting period", "Exclusions"]
    assert all(p.sources and all(1 <= n <= len(inp.sources) for n in p.sources) for p in inp.by_subsection)
    prompt = WriteSection.render_input(inp)
    assert "Sources by subsection:\n- Waiting period: [" in prompt and "\n- Exclusions: [" in prompt


def test_a_section_whose_subsection_cites_nothing_is_sent_back():
    inp = SectionInput(topic="T", heading="H", subsections=["A", "B"],
                       sources=[NumberedSource(n=1, title="x", text="a"), NumberedSource(n=2, title="y", text="b")])
    from agents.storm.steps_article import SectionOutput

    good = SectionOutput(text="Intro [1].\n\n### A\n\nOne [1].\n\n### B\n\nTwo [2].")
    bad = SectionOutput(text="Intro [1].\n\n### A\n\nOne [1].\n\n### B\n\nTwo, uncited.")
    assert WriteSection.check(inp, good) is None
    assert "'B' cites no source" in WriteSection.check(inp, bad)


# --- 3. the expert answers fully, with each source's heading path; the writer reads no [n] -----


def test_the_expert_is_asked_for_a_full_answer_from_sources_with_their_headings(parts):
    assert "as informative as possible" in AnswerQuestion.instructions
    assert "five sentences" not in AnswerQuestion.instructions and "say which part" in AnswerQuestion.instructions
    models = Recorder(parts.extractive())
    expert = ExpertAgent("expert", FLOOD, models, parts.retriever)
    asyncio.run(expert.answer("What does the flood rider cover?"))
    inp = models.inputs(AnswerQuestion)[0]
    with_heading = [s for s in inp.sources if s.section]
    assert with_heading and f"{with_heading[0].title} > {with_heading[0].section}" in AnswerQuestion.render_input(inp)


def test_the_writer_reads_the_experts_answers_without_their_citation_markers():
    persona = Persona(name="n", description="p", focus=["a"])
    prompt = AskQuestion.render_input(QuestionInput(topic="T", persona=persona, history=[
        HistoryTurn(question="Q?", answer="The rider adds 30 days [1][2]. It excludes mold [3].")]))
    assert "30 days" in prompt and "[1]" not in prompt and "[3]" not in prompt


# --- 4. the report agent sees what its tools found, and writes with all of it in view ----------


@pytest.fixture(scope="module")
def react_written(example_corpus, example_retriever, nlp):
    from storm_support import Parts

    parts = Parts(example_corpus, example_retriever, nlp)
    models = Recorder(parts.extractive())
    ctx = ToolContext(topic=FLOOD, models=models, retriever=parts.retriever, nlp=parts.nlp)
    outline = Outline(sections=[OutlineSection(heading="Background"), OutlineSection(heading="Waiting period")])
    earlier = [SectionDigest(heading="Background", text="The rider was issued in 2021 [1]. It covers basements [2].")]
    section = asyncio.run(write_react_section(ctx, outline, 1, ["Background"], 3, 4, description="How long cover "
                                              "waits, and how that changed.", earlier_text=earlier))
    return models, section


def test_the_section_writer_sees_every_observation_whole_and_each_passage_marked(react_written):
    models, section = react_written
    inp = models.inputs(WriteReactSection)[-1]
    prompt = " ".join(WriteReactSection.render_input(inp).split())
    facts = {f.passage_id: f for r in section.results for f in r.facts}
    assert len(facts) > 12  # the old writer was shown 12 passages at most
    assert all(" ".join(f.text.split()) in prompt for f in facts.values())
    assert all(" ".join(line.split()) in prompt for r in section.results for line in r.digest.splitlines())
    cited = prompt.split("Passages to cite:")[1]
    assert cited.count("[current]") + cited.count("[superseded") == len(inp.sources) == len(facts)
    # the plan's description and the earlier section's text (not only its heading)
    assert "How long cover waits" in prompt and "The rider was issued in 2021." in prompt


def test_the_agent_is_told_what_each_tool_is_for_and_which_it_has_not_used(react_written):
    models, section = react_written
    assert all(t in ChooseTool.instructions for t in ("insight_forge", "panorama_search", "quick_search"))
    inputs = models.inputs(ChooseTool)
    first, later = ChooseTool.render_messages(inputs[0]), ChooseTool.render_messages(inputs[-1])
    assert "Not used yet for this section: quick_search, insight_forge, panorama_search" in first[-1].content
    used = {o.tool for o in inputs[-1].observations}
    assert all(t not in later[-1].content.split("Not used yet")[1] for t in used)
    # observations go back whole: longer than the 600 characters they were cut to
    assert max(len(o.digest) for o in inputs[-1].observations) > 600


def test_sub_questions_and_interview_questions_are_the_models(react_written):
    models, _ = react_written
    asked = models.inputs(SubQuestions)
    assert asked and "Where evidence was found:" in SubQuestions.render_input(asked[0])
    assert InterviewQuestions.role == "interview" and "{topic}" not in InterviewQuestions.instructions


def test_the_plan_describes_every_section():
    outline = Outline(sections=[OutlineSection(heading="History"), OutlineSection(heading="Claims", subsections=["Deadlines"])])
    inp = PlanInput(topic="T", outline=outline)
    from agents.lm.nlp import TextToolkit

    out = PlanSections.extract(inp, TextToolkit())
    assert [p.heading for p in out.sections] == ["History", "Claims"] and all(p.description for p in out.sections)
    assert "Deadlines" in out.sections[1].description
    assert PlanSections.check(inp, out.model_copy(update={"sections": out.sections[:1]})).startswith("no description")


def test_a_budget_cuts_observations_evenly_and_says_so():
    texts = ["a" * 100, "b" * 50_000, "c" * 50_000]
    cut = within_budget(texts, 10_000, "observations")
    assert cut[0] == texts[0] and len(cut[1]) == len(cut[2]) <= 20_000
    assert cut[1].endswith("(cut: the observations exceed the budget of 10000 tokens)")
    assert within_budget(["a" * 40], 10, "x") == ["a" * 40]


# --- 5. the lead: context, notability, key points; up to four paragraphs; citations kept --------


def test_the_lead_sees_the_sections_citations_and_may_cite_them(parts):
    assert "notable" in WriteLead.instructions and "four" in WriteLead.instructions
    snippet = asyncio.run(_snippets(parts, FLOOD, 1))[0]
    article = Article(topic=FLOOD, sections=[ArticleSection(heading="Coverage", text="It covers basements [1].")],
                      citations=[Citation(index=1, url=snippet.url, title=snippet.title, snippets=[snippet])])

    class CitesTheArticle(Recorder):
        async def run(self, step, inp):
            self.seen.append((step, inp))
            other = next(s for s in inp.sources if s.title != snippet.title)
            return LeadOutput(lead=f"{FLOOD} is a rider [1]. It is notable [{other.n}].")

    models = CitesTheArticle(parts.extractive())
    table = parts.table("prompts-lead")
    try:
        asyncio.run(table.add(asyncio.run(_snippets(parts, FLOOD, 8))))
        out = asyncio.run(write_lead(article, table, models))
    finally:
        asyncio.run(table.drop())
    inp = models.inputs(WriteLead)[0]
    prompt = WriteLead.render_input(inp)
    assert "It covers basements [1]." in prompt and "Sources the sections cite:\n[1]" in prompt
    assert all(s.n > 1 for s in inp.sources)  # numbered after the article's own
    assert out.lead == f"{FLOOD} is a rider [1]. It is notable [2]."
    assert out.citations[1].index == 2 and out.citations[1].title != snippet.title
    assert WriteLead.check(inp, LeadOutput(lead="A rider [1].")) is None


# --- sampling per role, the data rule, VerifyAnswer's numbering --------------------------------


def test_each_role_samples_as_its_work_wants_overridable_and_recorded():
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    settings = settings_from_args(parser.parse_args(["--llm", "m@http://llm.test/v1",
                                                     "--role-llm", "article:temperature=0.3,max_tokens=900"]))
    assert settings.sampling["question_asker"].temperature == 1.0 and settings.sampling["question_asker"].top_p == 0.9
    assert settings.sampling["article"].temperature == 0.3 and settings.sampling["article"].max_tokens == 900
    assert json.loads(settings.model_dump_json())["sampling"]["polish"]["max_tokens"] == 4000  # run_config.json
    bodies: list[dict] = []

    def server(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return completion(json.dumps({"question": "What?"}) if "ask" in json.dumps(bodies[-1]["response_format"])
                          else json.dumps({"sections": []}), model="m")

    models = RoleModels.from_settings(settings, http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)))
    persona = Persona(name="n", description="p", focus=["a"])
    asyncio.run(models.run(AskQuestion, QuestionInput(topic="T", persona=persona)))
    asyncio.run(models.run(DraftOutline, DraftOutline.Input(topic="T")))
    ask, outline = bodies
    assert (ask["temperature"], ask["top_p"], ask["max_tokens"]) == (1.0, 0.9, 500)
    assert (outline["temperature"], outline["max_tokens"]) == (1.0, 2000)
    assert models.for_role("article") is models.for_role("outline")  # one model, one concurrency limit


def test_the_data_rule_is_given_only_where_documents_may_be_quoted():
    assert DATA_RULE not in system_prompt(DraftOutline) and DATA_RULE not in system_prompt(InterviewQuestions)
    assert DATA_RULE in system_prompt(AnswerQuestion) and DATA_RULE in system_prompt(SubQuestions)


def test_verify_answer_numbers_the_passages_as_its_indices_read():
    inp = VerifyInput(question="Who?", short_answer="Ada", passages=[
        PassageText(title="A", text="Bob."), PassageText(title="B", text="Ada wrote it.")])
    prompt = VerifyAnswer.render_input(inp)
    assert "[0] A\n" in prompt and "[1] B\n" in prompt and "numbered from 0" in prompt
    assert VerifyAnswer.check(inp, VerifyOutput(supported=True, passages=[1])) is None
    assert "numbered 0 to 1" in VerifyAnswer.check(inp, VerifyOutput(supported=True, passages=[2]))
