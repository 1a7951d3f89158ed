"""Multi-hop sets (MuSiQue and HotpotQA layouts) and the Recall@k they are scored with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval.datasets import DatasetError, GoldPassage, MultihopQuestion, load_multihop_set, recall_at_k
from retrieval.documents import Passage
from retrieval.splitter import split_document
from retrieval.store import SearchHit

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"

MUSIQUE_CORPUS = [
    {"title": "Lake Nona", "text": "Lake Nona is a community in Orlando, Florida."},
    {"title": "Orlando", "text": "Orlando is a city in Florida.  Its  mayor is Buddy Dyer."},
    {"title": "Buddy Dyer", "text": "Buddy Dyer studied at Brown University."},
    {"title": "Empty", "text": ""},
]
MUSIQUE_QUESTIONS = [{
    "id": "2hop__1_2", "question": "Who is the mayor of the city Lake Nona is in?",
    "answer": "Buddy Dyer", "answer_aliases": ["John Hugh Dyer"], "answerable": True,
    "question_decomposition": [{"id": 1, "question": "Lake Nona >> located in", "answer": "Orlando"},
                               {"id": 2, "question": "#1 >> mayor", "answer": "Buddy Dyer"}],
    "paragraphs": [
        {"idx": 0, "title": "Lake Nona", "paragraph_text": MUSIQUE_CORPUS[0]["text"], "is_supporting": True},
        {"idx": 1, "title": "Orlando", "paragraph_text": "Orlando is a city in Florida. Its mayor is Buddy Dyer.",
         "is_supporting": True},
        {"idx": 2, "title": "Buddy Dyer", "paragraph_text": MUSIQUE_CORPUS[2]["text"], "is_supporting": False},
    ],
}]
HOTPOT_CORPUS = {
    "Alû": ["Alû is a demon in Mesopotamian mythology.", " Alû has no mouth."],
    "Lilu (mythology)": ["A lilu is a spirit in Akkadian mythology."],
    "Gallu": ["Gallu is a demon of the underworld."],
}
HOTPOT_QUESTIONS = [{
    "_id": "5a77", "question": "If Gallu is a demon Lilu is what?", "answer": "a spirit", "type": "bridge",
    "level": "easy", "supporting_facts": [["Alû", 1], ["Lilu (mythology)", 0], ["Alû", 0]],
    "context": [[title, sentences] for title, sentences in HOTPOT_CORPUS.items()],
}]


def write_set(folder: Path, questions, corpus) -> Path:
    folder.mkdir(parents=True)
    (folder / "questions.json").write_text(json.dumps(questions, indent=1), encoding="utf-8")
    (folder / "corpus.json").write_text(json.dumps(corpus, indent=1, ensure_ascii=False), encoding="utf-8")
    return folder


@pytest.fixture
def musique(tmp_path):
    return load_multihop_set(write_set(tmp_path / "mini_musique", MUSIQUE_QUESTIONS, MUSIQUE_CORPUS))


@pytest.fixture
def hotpot(tmp_path):
    return load_multihop_set(write_set(tmp_path / "mini_hotpot", HOTPOT_QUESTIONS, HOTPOT_CORPUS))


def test_musique_layout(musique):
    assert musique.name == "mini_musique"
    assert [d.title for d in musique.documents] == ["Lake Nona", "Orlando", "Buddy Dyer"]  # no empty entry
    assert [d.record for d in musique.documents] == [0, 1, 2]
    assert {d.path for d in musique.documents} == {musique.corpus_path}
    [q] = musique.questions
    assert (q.id, q.answer, q.aliases, q.hops, q.gold) == ("2hop__1_2", "Buddy Dyer", ["John Hugh Dyer"], 2, "passages")
    assert [g.title for g in q.gold_passages] == ["Lake Nona", "Orlando"]
    assert q.sub_questions == ["Lake Nona >> located in", "#1 >> mayor"]
    assert q.answers == ["Buddy Dyer", "John Hugh Dyer"]


def test_hotpot_layout(hotpot):
    assert [d.title for d in hotpot.documents] == ["Alû", "Lilu (mythology)", "Gallu"]
    assert hotpot.documents[0].segments[0].text == "Alû is a demon in Mesopotamian mythology. Alû has no mouth."
    [q] = hotpot.questions
    assert (q.id, q.gold, q.gold_titles, q.hops, q.gold_passages) == (
        "5a77", "titles", ["Alû", "Lilu (mythology)"], 2, [])


@pytest.mark.parametrize("name", ["musique", "hotpot"])
def test_each_entry_is_one_passage_whose_lines_hold_it(request, name):
    dataset = request.getfixturevalue(name)
    lines = Path(dataset.corpus_path).read_text(encoding="utf-8").splitlines()
    for doc in dataset.documents:
        [passage] = split_document(doc, dataset.max_words)
        source = "\n".join(lines[passage.line_start - 1 : passage.line_end])
        assert passage.title == doc.title and json.dumps(doc.title, ensure_ascii=False) in source
        assert passage.text.split()[0] in source


def test_max_words_keeps_long_entries_whole(tmp_path):
    long_text = " ".join(f"Sentence number {i} is here." for i in range(100))  # 500 words
    dataset = load_multihop_set(write_set(tmp_path / "long", MUSIQUE_QUESTIONS,
                                          [{"title": "Long", "text": long_text}]))
    assert dataset.max_words == 500
    assert len(split_document(dataset.documents[0], dataset.max_words)) == 1
    assert len(split_document(dataset.documents[0])) > 1  # the default size would cut it


def test_recall_matches_musique_gold_on_title_and_text(musique):
    [q] = musique.questions
    lake, orlando, dyer = ((e["title"], e["text"]) for e in MUSIQUE_CORPUS[:3])
    assert recall_at_k([lake, dyer, orlando], q, 1) == 0.5
    assert recall_at_k([lake, dyer, orlando], q, 2) == 0.5
    assert recall_at_k([lake, dyer, orlando], q, 3) == 1.0  # whitespace differences do not matter
    assert recall_at_k([("Other title", lake[1]), dyer], q, 2) == 0.0  # same text, other title
    assert recall_at_k([lake, lake, lake], q, 3) == 0.5  # a passage counts once
    assert recall_at_k([], q, 5) == 0.0


def test_recall_matches_hotpot_gold_on_titles(hotpot):
    [q] = hotpot.questions
    retrieved = [("Alû", "first part"), ("Alû", "second part"), ("Gallu", "x"), ("Lilu (mythology)", "y")]
    assert recall_at_k(retrieved, q, 2) == 0.5
    assert recall_at_k(retrieved, q, 3) == 0.5
    assert recall_at_k(retrieved, q, 4) == 1.0


def test_recall_accepts_hits_and_passages(musique):
    [q] = musique.questions
    passages = [p for d in musique.documents for p in split_document(d, musique.max_words)]
    hits = [SearchHit(rank=i, score=1.0 / i, passage=p) for i, p in enumerate(passages, start=1)]
    assert recall_at_k(hits, q, 1) == recall_at_k(passages, q, 1) == 0.5
    assert recall_at_k(hits, q, 2) == 1.0
    assert isinstance(passages[0], Passage)


def test_recall_needs_gold():
    q = MultihopQuestion(id="x", question="?", answer="", gold="passages", hops=0)
    with pytest.raises(DatasetError, match="no gold"):
        recall_at_k([GoldPassage(title="a", text="b")], q, 1)


def test_ingested_set_scores_full_recall(workspace, musique):
    workspace.ingestor(max_words=musique.max_words).ingest_documents(musique.documents, "mini")
    [q] = musique.questions
    hits = workspace.corpus("mini").search(q.question, k=3)
    assert recall_at_k(hits, q, 3) == 1.0


@pytest.mark.parametrize("problem, files, message", [
    ("missing corpus", {"questions.json": "[]"}, "corpus.json not found"),
    ("bad corpus", {"questions.json": "[]", "corpus.json": '"just a string"'}, "expected a JSON list"),
    ("truncated corpus", {"questions.json": "[]", "corpus.json": '[{"title": "a", "text": "b"}'}, "malformed"),
    ("bad questions", {"questions.json": "{", "corpus.json": "[]"}, "not valid JSON"),
    ("unknown layout", {"questions.json": '[{"question": "?"}]', "corpus.json": "[]"}, "neither `paragraphs`"),
])
def test_bad_folders_say_what_is_wrong(tmp_path, problem, files, message):
    folder = tmp_path / problem.replace(" ", "_")
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        load_multihop_set(folder)


@pytest.mark.skipif(not (SHARED_DATA / "musique").is_dir(), reason="shared evaluation data not present")
@pytest.mark.parametrize("name, documents", [("musique", 1890), ("hotpotqa", 994)])
def test_shared_sets_load(name, documents):
    dataset = load_multihop_set(SHARED_DATA / name)
    assert len(dataset.documents) == documents and len(dataset.questions) == 50
    assert all(q.gold_passages or q.gold_titles for q in dataset.questions)
    assert all(2 <= q.hops <= 4 for q in dataset.questions)
