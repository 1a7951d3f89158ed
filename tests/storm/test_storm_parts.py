"""The pieces: citation markers, the information table, and the extractive steps on small inputs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from retrieval.embeddings import DenseEmbedder
from retrieval.errors import RaystormError
from retrieval.infotable import InformationTable, Snippet, group_by_url, table_name

from agents.storm.citations import CitationRegistry, cited_numbers, cut_unfinished, keep_valid, remap
from agents.storm.evidence import usable
from agents.storm.headings import clean_heading, is_reference_heading
from agents.storm.outline import outline_text, parse_outline
from agents.storm.records import Article, ArticleSection, Citation, Outline, OutlineSection
from agents.storm.steps_article import PolishInput, PolishSection, SectionInput, WriteSection
from agents.storm.steps_outline import DraftOutline, DraftOutlineInput, clean_outline
from agents.storm.steps_research import NOTHING_FOUND, AnswerInput, AnswerQuestion, NumberedSource
from agents.storm.writer import ELIDED, writer_history

# --- citations -------------------------------------------------------------------------------


def test_markers_are_found_in_order_ranges_included():
    assert cited_numbers("A [2]. B [1, 3] and [4-5]. A again [2].") == [2, 1, 3, 4, 5]


def test_remap_renumbers_and_drops_what_points_nowhere():
    text = "Flood is covered [1, 3]. Limits vary [2] . Junk [9]."
    assert remap(text, {1: 4, 2: 1, 3: 7}.get) == "Flood is covered [4][7]. Limits vary [1]. Junk."
    assert keep_valid("A [1]. B [5] [0].", 2) == "A [1]. B."


def test_an_unfinished_last_sentence_is_cut():
    assert cut_unfinished("Done [1]. Also done.[2] And then the") == "Done [1]. Also done.[2]"
    assert cut_unfinished("Complete sentence [3].") == "Complete sentence [3]."
    assert cut_unfinished("no end at all") == ""


def test_the_registry_numbers_sources_in_order_of_first_use():
    r = CitationRegistry(["u1"])
    assert [r.number("u2"), r.number("u1"), r.number("u3")] == [2, 1, 3] and r.get("nope") is None


# --- outline text ------------------------------------------------------------------------------


def test_outline_text_round_trips_and_drops_reference_headings():
    outline = Outline(sections=[OutlineSection(heading="Coverage", subsections=["Limits"]),
                                OutlineSection(heading="References"), OutlineSection(heading="Claims"),
                                OutlineSection(heading="coverage")])
    cleaned = clean_outline(outline, topic="Flood")
    assert outline_text(cleaned) == "# Coverage\n## Limits\n# Claims\n"
    assert parse_outline(outline_text(cleaned)) == cleaned
    assert is_reference_heading("External links") and not is_reference_heading("Reception")
    assert clean_heading("Step 3. Inspection") == "Inspection" and clean_heading("Rule 2. Flood deductible") == "Flood deductible"


def test_the_draft_outline_follows_the_kind_of_topic(nlp):
    film = DraftOutline.extract(DraftOutlineInput(topic="Sardar (2022 film)"), nlp)
    assert {"Plot", "Cast", "Production", "Reception"} <= {s.heading for s in film.sections}
    assert "Theatrical release" in next(s for s in film.sections if s.heading == "Release").subsections
    album = DraftOutline.extract(DraftOutlineInput(topic="Those Once Loyal, the album by Bolt Thrower"), nlp)
    assert "Track listing" in album.headings()


# --- sentences and steps ---------------------------------------------------------------------------


def test_only_prose_sentences_are_usable():
    assert usable("- Vehicles, boats and docks are not covered by the rider.") == "Vehicles, boats and docks are not covered by the rider."
    assert usable("| Dwelling (HM-3 only) | $350,000 |") is None
    assert usable("**Deductible** — The part of a covered loss the policyholder pays.") is None
    assert usable("**2012** — The Flood Rider is introduced as form FR-10.") is not None
    assert usable("Marcus Halloway, President and Chief Executive Officer since 2016") is None  # unfinished


SOURCES = [
    NumberedSource(n=1, title="Flood Rider (Form FR-12)", section="What the rider covers",
                   text="The rider treats flood as a covered peril for the base policy. Loss of use is paid for "
                        "up to six months while the home cannot be lived in because of a covered flood."),
    NumberedSource(n=2, title="Claims Memo CM-24-05: Handling Flood Rider Claims", section="Inspection",
                   text="Field inspection must take place within five business days of first notice. The adjuster "
                        "should measure and photograph the high-water line in every affected room."),
]


def test_the_extractive_answer_copies_cited_sentences(nlp):
    out = AnswerQuestion.extract(AnswerInput(topic="flood coverage", question="What does the flood rider cover?",
                                             sources=SOURCES), nlp)
    assert "The rider treats flood as a covered peril for the base policy.[1]" in out.answer
    assert "[2]" not in out.answer


def test_nothing_relevant_is_said_plainly(nlp):
    out = AnswerQuestion.extract(AnswerInput(topic="flood coverage", question="Who won the 1998 chess olympiad?",
                                             sources=SOURCES), nlp)
    assert out.answer == NOTHING_FOUND


def test_a_section_uses_the_sentences_that_belong_to_it(nlp):
    out = WriteSection.extract(SectionInput(topic="flood coverage", heading="Claims", subsections=["Inspection"],
                                            other_headings=["Coverage"], sources=SOURCES), nlp)
    assert "### Inspection" in out.text and "Field inspection must take place" in out.text
    assert "covered peril" not in out.text  # that one belongs under Coverage


def test_polish_removes_what_the_article_already_said(nlp):
    text = ("The rider treats flood as a covered peril.[1] Field inspection is due within five days.[2]\n\n"
            "### Limits\n\nThe rider treats flood as a covered peril.[3]")
    out = PolishSection.extract(PolishInput(topic="flood", heading="Coverage", text=text,
                                            earlier=["Field inspection is due within five days."]), nlp)
    assert out.text == "The rider treats flood as a covered peril.[1]"


def test_the_writer_sees_four_turns_in_full():
    history = writer_history([(f"q{i}", f"a{i}") for i in range(6)])
    assert [h.answer for h in history] == [ELIDED, ELIDED, "a2", "a3", "a4", "a5"]


# --- the information table -----------------------------------------------------------------------


def _snippet(url: str, text: str, line: int) -> Snippet:
    # one file per URL: files that share a URL are separate sources (issue 14)
    name = url.rsplit("/", 1)[-1]
    return Snippet(url=url, title=name, text=text, path=f"/docs/{name}.md", line_start=line,
                   line_end=line, passage_id=f"p{line}")


def test_a_table_copies_the_vectors_of_corpus_passages(example_corpus):
    c = example_corpus
    snippets = [Snippet.from_passage(h.passage) for h in c.search("flood rider waiting period", k=4)]
    edited = snippets[0].model_copy(update={"text": snippets[0].text + " Amended since."})
    dense = DenseEmbedder(c.settings.dense_model, c.settings.models_dir, cache_size=0)
    model, embedded = dense._load(), []

    def counting_embed(texts, **kwargs):  # the real model, noting what it is asked to embed
        embedded.extend(texts)
        return model.embed(texts, **kwargs)

    dense._model = SimpleNamespace(embed=counting_embed, query_embed=model.query_embed,
                                   embedding_size=c.dense.dimension)
    copied = InformationTable(c.store, table_name("copy test"), dense, c.sparse, source=c.collection)
    fresh = InformationTable(c.store, table_name("fresh test"), c.dense, c.sparse)
    for table in (copied, fresh):
        table.drop()
        assert table.add([*snippets, edited]) == 5
    assert embedded == [edited.embedding_text()]  # only the snippet the corpus has no vectors for
    try:
        client, name = c.store.client, c.dense.vector_name
        stored = {str(p.id): p.vector for p in client.retrieve(c.collection, ids=[s.passage_id for s in snippets],
                                                              with_vectors=True)}
        table_vectors = {str(p.id): p.vector for p in client.retrieve(
            copied.collection, ids=[s.point_id for s in [*snippets, edited]], with_vectors=True)}
        for s in snippets:  # the corpus's own vectors, dense and BM25
            assert np.allclose(table_vectors[s.point_id][name], stored[s.passage_id][name], atol=1e-6)
            assert table_vectors[s.point_id]["bm25"] == stored[s.passage_id]["bm25"]
        # a snippet that no longer reads as its passage is embedded from its own text
        assert not np.allclose(table_vectors[edited.point_id][name], stored[edited.passage_id][name], atol=1e-6)
        assert np.allclose(table_vectors[edited.point_id][name], c.dense.embed([edited.embedding_text()])[0],
                           atol=1e-6)
        for query in ("waiting period", "what the flood rider excludes", "claims"):
            assert [s.point_id for s in copied.search([query], 3)] == [s.point_id for s in fresh.search([query], 3)]
    finally:
        copied.drop()
        fresh.drop()


def test_the_table_is_idempotent_and_merges_snippets_by_url(example_corpus):
    table = InformationTable(example_corpus.store, table_name("parts test"), example_corpus.dense,
                             example_corpus.sparse)
    table.drop()
    a = _snippet("https://x.test/rider", "The flood rider covers the dwelling and its contents.", 3)
    b = _snippet("https://x.test/rider", "Basement contents are excluded from the flood rider.", 9)
    c = _snippet("https://x.test/memo", "Adjusters inspect flood damage within five business days.", 4)
    try:
        assert table.add([a, b, a]) == 2
        assert table.add([a, c]) == 1 and len(table) == 3  # a retried turn writes nothing twice
        info = table.url_to_info()
        assert list(info) == ["https://x.test/memo", "https://x.test/rider"]
        assert [s.line_start for s in info["https://x.test/rider"].snippets] == [3, 9]
        assert table.search(["when do adjusters inspect the damage"], k=1) == [c]
        assert table.search(["basement contents excluded"], k=1) == [b]
        both = table.search(["adjusters inspect damage", "basement contents excluded"], k=5)
        assert sorted(s.text for s in both) == sorted([a.text, b.text, c.text])  # each once
    finally:
        table.drop()
    assert len(table) == 0 and group_by_url([a, b, a])["https://x.test/rider"].snippets == [a, b]


def test_groups_searched_in_one_batch_find_what_each_finds_alone(example_corpus):
    table = InformationTable(example_corpus.store, table_name("batch test"), example_corpus.dense,
                             example_corpus.sparse)
    table.drop()
    snippets = [_snippet("https://x.test/rider", "The flood rider covers the dwelling and its contents.", 3),
                _snippet("https://x.test/rider", "Basement contents are excluded from the flood rider.", 9),
                _snippet("https://x.test/memo", "Adjusters inspect flood damage within five business days.", 4),
                _snippet("https://x.test/memo", "Claims above ten thousand dollars need a second adjuster.", 8)]
    groups = [(["when do adjusters inspect the damage", "second adjuster"], 2), (["   "], 3),
              (["basement contents excluded", "the and of"], 1), (["flood rider dwelling"], 4)]
    try:
        assert table.search_many(groups) == [[], [], [], []]  # nothing stored yet
        table.add(snippets)
        batch = table.search_many(groups)
        client = example_corpus.store.client
        for (queries, k), found in zip(groups, batch, strict=True):
            assert found == table.search(queries, k) and len(found) <= k
            for query in (q for q in queries if q.strip()):  # each query's own hits, as the store ranks them
                r = table._request(query, k)
                one = client.query_points(table.collection, query=r.query, using=r.using, prefetch=r.prefetch,
                                          limit=r.limit)
                (alone,) = client.query_batch_points(table.collection, [r])
                assert [str(p.id) for p in alone.points] == [str(p.id) for p in one.points]
        assert batch[1] == [] and len(batch[2]) == 1 and batch[2][0].text.startswith("Basement")
        with pytest.raises(RaystormError, match="k must be at least 1"):
            table.search_many([(["flood"], 0)])
    finally:
        table.drop()


class _AllAtOnce:
    """The extractive model, answering only once `expected` calls are in flight together."""

    def __init__(self, nlp, expected: int):
        from agents.lm.extractive import ExtractiveModel

        self.inner = ExtractiveModel(nlp)
        self.name = self.inner.name
        self.expected = expected
        self.in_flight = 0
        self.peak = 0
        self.steps: list[str] = []

    async def run(self, step, inp):
        import asyncio

        self.steps.append(step.name)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            for _ in range(200):  # 2 s at most: a sequential caller never gets here with the others
                if self.peak >= self.expected:
                    break
                await asyncio.sleep(0.01)
            return await self.inner.run(step, inp)
        finally:
            self.in_flight -= 1


def _rider_article(coverage: str, claims: str) -> Article:
    """Three sections of a flood rider article (Coverage, Claims, Limits) citing two sources."""
    return Article(topic="flood rider", sections=[
        ArticleSection(heading="Coverage", text=coverage), ArticleSection(heading="Claims", text=claims),
        ArticleSection(heading="Limits", text="The deductible is 2,000 dollars.[2]")],
        citations=[Citation(index=1, url="u1", title="a"), Citation(index=2, url="u2", title="b")])


def test_the_lead_and_each_sections_polish_run_at_once(nlp, example_corpus):
    import asyncio

    from agents.runtime import StageContext
    from agents.storm.stages import FinishArgs, finish_article

    class Table:
        async def search(self, queries, k):
            return [Snippet.from_passage(h.passage) for h in example_corpus.search(queries[0], k=k)]

    repeated = "Field inspection is due within five days of the claim."
    article = _rider_article(f"The rider treats flood as a covered peril.[1] {repeated}[1]",
                             f"{repeated}[2] Photos go with every claim.[2]")
    model = _AllAtOnce(nlp, expected=4)  # the lead and three polishes
    done = asyncio.run(finish_article(FinishArgs(topic="flood rider", article=article, polish=True),
                                      StageContext(models=model, retriever=None, table=Table())))
    assert model.peak == 4 and sorted(model.steps).count("storm.article.polish") == 3
    assert done.lead  # written from the sections as drafted
    claims = next(s for s in done.sections if s.heading == "Claims")
    assert repeated not in claims.text and "Photos go with every claim" in claims.text  # said above: dropped
    assert repeated in done.sections[0].text  # where it was first said, it stays


def test_the_outline_reads_the_same_from_the_dialogue_alone(example_corpus):
    from agents.storm.outline import refine_input
    from agents.storm.records import Conversation, ConversationLog, DialogueTurn, Persona, SearchResult

    hits = [Snippet.from_passage(h.passage) for h in example_corpus.search("flood rider waiting period", k=3)]
    turn = DialogueTurn(user_utterance="How long is the waiting period?", search_queries=["waiting period"],
                        search_results=[SearchResult.from_snippet(s) for s in hits],
                        agent_utterance="It is 30 days [1], with exceptions [2].", cited=[1, 2])
    log = ConversationLog(conversations=[Conversation.of(Persona(name="Adjuster", description="claims"), [turn])])
    slim = log.dialogue_only()
    assert slim.conversations[0].dlg_turns[0].search_results == [] and slim.turns == log.turns
    assert slim.conversations[0].dlg_turns[0].search_queries == ["waiting period"]
    assert log.conversations[0].dlg_turns[0].search_results  # the full log is left as it was
    draft = Outline(sections=[OutlineSection(heading="Waiting period")])
    assert refine_input("Flood rider", draft, slim, hits) == refine_input("Flood rider", draft, log, hits)


def test_a_section_with_nothing_to_say_in_its_snippets_looks_again_deeper(nlp, example_corpus):
    # a planned section was dropped when its first k snippets held no sentence that fits its heading
    import asyncio

    from agents.storm import article

    class Table:  # the real corpus search, noting how deep each search went
        def __init__(self):
            self.depths: list[int] = []

        async def search(self, queries, k):
            self.depths.append(k)
            return [Snippet.from_passage(h.passage) for h in example_corpus.search(queries[0], k=k)]

    topic = "Harborline Mutual flood coverage"
    outline = Outline(sections=[OutlineSection(heading="Staff"), OutlineSection(heading="Flood rider")])
    shallow = asyncio.run(article._write_from(topic, outline, 0, Table(), _Extractive(nlp), 2))
    assert shallow.text == "" and len(shallow.sources) == 2
    table = Table()
    draft = asyncio.run(article.write_section(topic, outline, 0, table, _Extractive(nlp), k=2))
    assert table.depths == [2, 2 * article.DEEPER]
    assert draft.text and len(draft.sources) == 2 * article.DEEPER and max(cited_numbers(draft.text)) > 2
    table = Table()  # a section written on the first search searches once
    assert asyncio.run(article.write_section(topic, outline, 1, table, _Extractive(nlp), k=2)).text
    assert table.depths == [2]


class _Extractive:
    """The extractive model, as a section writer or the polish runs it."""

    def __init__(self, nlp):
        self.nlp = nlp

    async def run(self, step, inp):
        return step.extract(inp, self.nlp)


def test_polish_keeps_a_section_whose_every_sentence_an_earlier_one_says_and_says_nothing_twice(nlp):
    import asyncio

    from agents.storm.article import polish
    shared = "Field inspection is due within five days of the claim."
    other = "The rider treats flood as a covered peril."
    article = _rider_article(f"{other}[1] {shared}[1]", f"{shared}[2]")
    done = asyncio.run(polish(article, _Extractive(nlp)))
    # the first pass emptied Claims: its one sentence moves there, and Coverage keeps the rest
    assert [(s.heading, s.text) for s in done.sections] == [
        ("Coverage", f"{other}[1]"), ("Claims", f"{shared}[2]"), ("Limits", "The deductible is 2,000 dollars.[2]")]
    twins = article.model_copy(update={"sections": [ArticleSection(heading="Coverage", text=f"{shared}[1]"),
                                                    ArticleSection(heading="Claims", text=f"{shared}[2]")]})
    done = asyncio.run(polish(twins, _Extractive(nlp)))
    assert len(done.sections) == 1  # two sections that say one thing: it is said once


def test_run_files_read_as_the_standard_library_writes_them():
    """The run's JSON files come from pydantic-core's encoder; their text is what `json.dumps(indent=2,
    ensure_ascii=False)` writes (non-ASCII kept, control characters escaped, numbers and empty lists alike)."""
    import json

    from agents.storm.artifacts import _json
    from agents.storm.records import Conversation, DialogueTurn, Persona, SearchResult

    result = SearchResult(url="file://a.md#L1-L3", title="Café — “Harbor”", snippets=["tab\there\nline\x01 \\ \"q\""],
                          path="a.md", line_start=1, line_end=3, passage_id="p1", heading_path=[])
    turn = DialogueTurn(user_utterance="Naïve? 三百", search_queries=[], search_results=[result],
                        agent_utterance="It is 300 dollars [1].", cited=[1])
    conversation = Conversation.of(Persona(name="Actuary", description="counts ½ of a claim"), [turn])
    plain = {"score": 0.1, "big": 12345678901234, "neg": -2.5, "none": None, "yes": True, "empty": {}, "list": []}
    assert _json([conversation]) == json.dumps([conversation.model_dump(mode="json")], ensure_ascii=False,
                                               indent=2) + "\n"
    assert _json(plain) == json.dumps(plain, ensure_ascii=False, indent=2) + "\n"
