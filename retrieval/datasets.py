"""Multi-hop evaluation sets: a folder with `questions.json` and `corpus.json`.

Two layouts are read, the ones MuSiQue and HotpotQA ship in (HippoRAG's samples):

- MuSiQue: the corpus is a list of `{title, text}`; a question lists its
  `paragraphs` and marks the gold ones `is_supporting`.
- HotpotQA: the corpus maps a title to its sentences; a question names its gold
  passages by title in `supporting_facts` (`[title, sentence_index]`).

Any folder like these works. Each corpus entry becomes one `Document` (path =
corpus.json, record = the entry's index, lines = where the entry sits in the
file) holding one segment, so it is normally one passage; `MultihopSet.max_words`
is the passage size that keeps every entry whole. `recall_at_k` is the metric
DeepSearcher reports (see ../shared/data/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, Field

from retrieval import formats
from retrieval.documents import Document, Passage, Segment
from retrieval.errors import RaystormError
from retrieval.splitter import DEFAULT_MAX_WORDS
from retrieval.store import SearchHit


class DatasetError(RaystormError):
    """A multi-hop folder that is missing a file or not in a known layout."""


class GoldPassage(BaseModel):
    title: str
    text: str


class MultihopQuestion(BaseModel):
    """One question with its answer and the gold passages a retriever should find."""

    id: str
    question: str
    answer: str
    aliases: list[str] = Field(default_factory=list)
    gold: Literal["passages", "titles"]  # what recall matches on
    gold_passages: list[GoldPassage] = Field(default_factory=list)  # MuSiQue: the is_supporting paragraphs
    gold_titles: list[str] = Field(default_factory=list)  # HotpotQA: the supporting_facts titles
    hops: int
    sub_questions: list[str] = Field(default_factory=list)  # MuSiQue's question_decomposition, when given

    @property
    def answers(self) -> list[str]:
        return [self.answer, *self.aliases]


class MultihopSet(BaseModel):
    name: str
    folder: str
    corpus_path: str
    questions: list[MultihopQuestion]
    documents: list[Document]

    @property
    def max_words(self) -> int:
        """A passage size (for `Ingestor(max_words=...)`) that keeps every corpus entry one passage."""
        longest = max((len(s.text.split()) for d in self.documents for s in d.segments), default=0)
        return max(DEFAULT_MAX_WORDS, longest)


def load_multihop_set(folder: str | Path) -> MultihopSet:
    root = Path(folder).expanduser().resolve()
    questions_path, corpus_path = root / "questions.json", root / "corpus.json"
    for path in (questions_path, corpus_path):
        if not path.is_file():
            raise DatasetError(f"{path} not found: a multi-hop set is a folder with questions.json and corpus.json")
    corpus_text = _read_text(corpus_path)
    raw_questions = _read_json(questions_path)
    if not isinstance(raw_questions, list):
        raise DatasetError(f"{questions_path}: expected a JSON list of questions")
    return MultihopSet(name=root.name, folder=str(root), corpus_path=str(corpus_path),
                       questions=[_question(q, questions_path, i) for i, q in enumerate(raw_questions)],
                       documents=corpus_documents(corpus_text, str(corpus_path)))


def corpus_documents(text: str, path: str) -> list[Document]:
    """One `Document` per corpus entry (record = its index); entries with no text are left out."""
    pos = len(text) - len(text.lstrip())
    if text[pos : pos + 1] not in ("[", "{"):
        raise DatasetError(f"{path}: expected a JSON list of {{title, text}} or an object title -> sentences")
    line_of = formats.line_index(text)
    documents = []
    try:
        for index, member in enumerate(formats.json_members(text, pos)):
            title, body = _entry(member.key, member.value)
            if not body.strip():
                continue
            documents.append(Document(
                doc_id=Document.make_id(path, index), path=path, record=index, title=title or f"#{index}",
                segments=[Segment(text=body.strip(), line_start=line_of(member.start),
                                  line_end=line_of(member.end - 1))]))
    except ValueError as exc:  # json.JSONDecodeError is one
        raise DatasetError(f"{path}: malformed JSON ({exc})") from exc
    return documents


def _entry(key: str | None, value: Any) -> tuple[str, str]:
    """(title, text) of a corpus entry: `{title, text}` (MuSiQue) or title -> sentences (HotpotQA)."""
    if isinstance(value, dict):
        body = value.get("text") or value.get("paragraph_text") or ""
        return str(value.get("title") or ""), body if isinstance(body, str) else ""
    if isinstance(value, list):
        return key or "", "".join(str(sentence) for sentence in value)
    return key or "", value if isinstance(value, str) else ""


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: unreadable as UTF-8 text ({exc})") from exc


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc})") from exc


def _question(raw: Any, path: Path, index: int) -> MultihopQuestion:
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: question {index} is not a JSON object")
    common = dict(id=str(raw.get("id") or raw.get("_id") or index), question=raw.get("question", ""),
                  answer=str(raw.get("answer", "")), aliases=[str(a) for a in raw.get("answer_aliases") or []])
    if "paragraphs" in raw:
        gold = [GoldPassage(title=p.get("title", ""), text=p.get("paragraph_text") or p.get("text", ""))
                for p in raw["paragraphs"] if p.get("is_supporting")]
        steps = [s.get("question", "") for s in raw.get("question_decomposition") or []]
        return MultihopQuestion(**common, gold="passages", gold_passages=gold, hops=len(steps) or len(gold),
                                sub_questions=steps)
    if "supporting_facts" in raw:
        titles = list(dict.fromkeys(title for title, _ in raw["supporting_facts"]))
        return MultihopQuestion(**common, gold="titles", gold_titles=titles, hops=len(titles))
    raise DatasetError(f"{path}: question {index} has neither `paragraphs` (MuSiQue) nor "
                       "`supporting_facts` (HotpotQA)")


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _title_text(item: SearchHit | Passage | GoldPassage | tuple[str, str]) -> tuple[str, str]:
    if isinstance(item, SearchHit):
        item = item.passage
    if isinstance(item, tuple):
        return _normalise(item[0]), _normalise(item[1])
    return _normalise(item.title), _normalise(item.text)


def recall_at_k(retrieved: Iterable[SearchHit | Passage | GoldPassage | tuple[str, str]],
                question: MultihopQuestion, k: int) -> float:
    """Share of the question's gold passages among the first k retrieved.

    MuSiQue-style gold matches on title and text (whitespace normalised);
    HotpotQA-style gold matches on title.
    """
    top = [_title_text(item) for item in list(retrieved)[:k]]
    if question.gold == "passages":
        gold = {_title_text(g) for g in question.gold_passages}
        found = gold & set(top)
    else:
        gold = {_normalise(t) for t in question.gold_titles}
        found = gold & {title for title, _ in top}
    if not gold:
        raise DatasetError(f"question {question.id} has no gold supporting passages")
    return len(found) / len(gold)
