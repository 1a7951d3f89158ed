"""The topic expert: an autogen chat agent that answers a writer's question from the corpus.

One turn: the question becomes at most `MAX_QUERIES` search queries, every query
is searched at once through the `Retriever` (a local corpus, or a pool of Corpus
actors), the passages are numbered, and the answer step writes from them with
`[n]` citations. With nothing found it says so rather than invent. An answer cut
off mid-sentence loses the unfinished tail; a marker that points nowhere is
dropped. The reply is a `StructuredMessage[DialogueTurn]`, so the whole turn
(queries, results, citations) travels with it.
"""

from __future__ import annotations

from typing import Sequence

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage
from autogen_core import CancellationToken

from agents.lm.steps import LanguageModel
from agents.storm.citations import cited_numbers, cut_unfinished, keep_valid
from agents.storm.records import DialogueTurn, SearchResult
from agents.storm.steps_research import (
    NOTHING_FOUND,
    AnswerInput,
    AnswerQuestion,
    NumberedSource,
    PlanQueries,
    QueriesInput,
)
from retrieval.query import Retriever, SearchAsk, SearchFilter, search_each
from retrieval.snippets import Snippet

MAX_QUERIES = 3
TurnMessage = StructuredMessage[DialogueTurn]


def turn_message(turn: DialogueTurn, source: str) -> TurnMessage:
    return TurnMessage(content=turn, source=source, format_string="{agent_utterance}")


class ExpertAgent(BaseChatAgent):
    """Answers the last question it was sent; keeps no state between turns."""

    def __init__(self, name: str, topic: str, models: LanguageModel, retriever: Retriever, *,
                 search_k: int = 8, exclude_urls: Sequence[str] = ()):
        super().__init__(name, f"an expert on '{topic}' who answers from the document collection")
        if search_k < 1:
            raise ValueError(f"search_k must be at least 1, got {search_k}")
        self.topic = topic
        self.models = models
        self.retriever = retriever
        self.search_k = search_k
        self.filter = SearchFilter(exclude_urls=list(exclude_urls)) if exclude_urls else None
        self.error: BaseException | None = None  # what stopped it, kept typed (autogen re-raises a string)

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TurnMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        question = next((m.to_text() for m in reversed(messages) if m.source != self.name), "").strip()
        try:
            turn = await self.answer(question)
        except Exception as exc:
            self.error = exc
            raise
        return Response(chat_message=turn_message(turn, self.name))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        pass

    async def answer(self, question: str) -> DialogueTurn:
        """One full turn for `question`, usable without a team too."""
        planned = await self.models.run(PlanQueries, QueriesInput(topic=self.topic, question=question,
                                                                  max_queries=MAX_QUERIES))
        queries = _unique([" ".join(q.split()) for q in planned.queries if q.strip()])[:MAX_QUERIES] or [question]
        found = await self._search(queries)
        results: list[SearchResult] = []
        seen: set[str] = set()
        for hits in found:
            for hit in hits:
                if hit.passage.passage_id not in seen:
                    seen.add(hit.passage.passage_id)
                    results.append(SearchResult.from_snippet(Snippet.from_passage(hit.passage)))
        if not results:
            return DialogueTurn(user_utterance=question, search_queries=queries, agent_utterance=NOTHING_FOUND)
        sources = [NumberedSource(n=i, title=r.title, section=" > ".join(r.heading_path), text=r.snippets[0])
                   for i, r in enumerate(results, start=1)]
        out = await self.models.run(AnswerQuestion, AnswerInput(topic=self.topic, question=question, sources=sources))
        answer = keep_valid(cut_unfinished(out.answer.strip()), len(results)).strip() or NOTHING_FOUND
        return DialogueTurn(user_utterance=question, search_queries=queries, search_results=results,
                            agent_utterance=answer, cited=sorted(cited_numbers(answer)))


    async def _search(self, queries: list[str]):
        """Every query's hits, searched together (`search_each`)."""
        return await search_each(self.retriever, [SearchAsk(q, self.search_k, self.filter) for q in queries])


def _unique(items: list[str]) -> list[str]:
    return [x for i, x in enumerate(items) if x and x not in items[:i]]
