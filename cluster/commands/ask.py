"""`raystorm ask "QUESTION" --collection NAME [--strategy auto|chain|deep|naive] [--json] [--history FILE]`,
and `raystorm ask --chat -c NAME` for a conversation.

Answers in this process (one question needs no cluster): the router (for
`auto`), then the strategy over the collection. Prints the answer, the hop trace
(query → intermediate answer → supporting passages) and the cited passages with
source and line range; `--json` prints the same as one object. Above it all, the
answer layer's short answer with its confidence, or "Cannot answer" and why.
A follow-up (`--history FILE`, or any turn after the first in `--chat`) is first
rewritten into a standalone question from the earlier turns, which is shown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import textwrap
from math import floor
from pathlib import Path

from cluster.commands.common import (add_store_arguments, collection_name, count, info, place_of, run_async,
                                     store_settings)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ask", help="answer a multi-hop question over a collection",
        description="Answer a question hop by hop (Chain-of-RAG), breadth first (DeepSearch) or in one "
                    "search (NaiveRAG); `auto` lets the router choose. Every statement cites a passage "
                    "of the collection.")
    p.add_argument("question", nargs="?", help="the question (none with --chat)")
    p.add_argument("--collection", "-c", type=collection_name,
                   help="the collection to answer from (not needed with --source web)")
    p.add_argument("--strategy", choices=["auto", "chain", "deep", "naive"], default="auto",
                   help="auto: the router picks chain for concrete multi-hop facts, deep for broad questions")
    p.add_argument("--max-iter", type=count(1), default=None, metavar="N",
                   help="hops (chain, default 4) or search rounds (deep, default 3)")
    p.add_argument("--early-stop", action="store_true",
                   help="chain: stop as soon as the model judges the hops sufficient")
    p.add_argument("--chat", action="store_true",
                   help="a conversation: questions from the terminal, follow-ups rewritten from earlier turns")
    p.add_argument("--history", metavar="FILE.json",
                   help="earlier turns (created if missing, the new turn appended): a follow-up such as "
                        "'When did he sign it?' is rewritten into a standalone question first")
    p.add_argument("--min-confidence", type=confidence, default=None, metavar="P",
                   help="abstain below this confidence, 0-1 (default: the threshold chosen on the dev sets)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (short_answer, confidence, abstained, abstain_reason, trace)")
    from agents.lm.arguments import add_llm_arguments
    from cluster.commands.sources import add_source_arguments

    add_source_arguments(p)
    add_llm_arguments(p)
    add_store_arguments(p)
    p.set_defaults(func=run)


def confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a confidence: give a number from 0 to 1")
    return value


def run(args: argparse.Namespace) -> int:
    from retrieval.errors import UsageError

    if args.chat and args.question is not None:
        raise UsageError("--chat reads the questions from the terminal: drop the question, or drop --chat")
    if args.chat and args.json:
        raise UsageError("--json prints one answer; --chat is a conversation: drop one of them")
    if not args.chat and not (args.question or "").strip():
        raise UsageError("the question is empty: give one, or use --chat for a conversation")
    if args.max_iter is not None and args.strategy == "naive":
        raise UsageError("--max-iter does not apply to naive (one search); drop it or pick another --strategy")
    if args.early_stop and args.strategy not in ("chain", "auto"):
        raise UsageError("--early-stop applies to the chain strategy only (--strategy chain or auto)")
    history = Path(args.history).expanduser() if args.history else None
    if history is not None and history.is_dir():
        raise UsageError(f"--history {args.history}: is a folder; give a .json file (created if missing)")
    return run_async(_session(args, history))


async def _session(args: argparse.Namespace, history: Path | None) -> int:
    from agents.answer.followup import Dialogue

    dialogue = Dialogue.load(history) if history else Dialogue()
    asker = await _Asker.open(args)
    try:
        if not args.chat:
            answer, asked = await asker.turn(args.question, dialogue)
            usage = asker.usage()
            await asker.close()  # before `_show`: --json reads the evidence graph from the same store
            _show(args, answer, asked, usage)
        else:
            print("raystorm chat: ask a question; a follow-up may say he, she, it or \"what about X?\". "
                  "An empty line or Ctrl-D ends.", flush=True)
            while True:
                try:
                    question = (await asyncio.to_thread(input, "\nyou> ")).strip()
                except EOFError:
                    break
                if not question or question.lower() in ("exit", "quit"):
                    break
                answer, asked = await asker.turn(question, dialogue)
                _show(args, answer, asked, None)
                if history:
                    dialogue.save(history)
        if history:
            dialogue.save(history)
    finally:
        await asker.close()
    return 0


class _Asker:
    """One model set and one open corpus for every turn of a session."""

    @classmethod
    async def open(cls, args: argparse.Namespace) -> "_Asker":
        from agents.lm.arguments import role_models_from_args
        from agents.lm.nlp import TextToolkit
        from agents.multihop.strategies import MULTIHOP_ROLES, MultihopSettings
        from cluster.commands.sources import research_retriever, source_of, web_source
        from retrieval.config import data_home
        from retrieval.ingest import Ingestor
        from retrieval.search import Corpus

        self = cls()
        self.args, self.closed = args, False
        settings = store_settings(args)
        self.models = role_models_from_args(args, cache_dir=data_home(settings.data_dir) / "cache" / "llm",
                                             nlp=TextToolkit())
        self.models.validate_roles(MULTIHOP_ROLES)
        if self.models.notice:
            info(self.models.notice)
        self.multihop = MultihopSettings()
        if args.max_iter is not None:
            self.multihop.chain.max_iter = self.multihop.deep.max_iter = args.max_iter
        self.multihop.chain.early_stop = args.early_stop
        if args.min_confidence is not None:
            self.multihop.answer.min_confidence = args.min_confidence
        try:
            source = source_of(args, args.collection is not None)
            web = web_source(args) if source != "corpus" else None
            if args.collection is None:
                args.collection = web.collection  # cited passages' statuses are read from it
            corpus = Corpus(settings, args.collection)
            if source != "web":
                corpus.check()
        except BaseException:
            await self.models.close()
            raise
        ingestor = Ingestor(settings, store=corpus.store, dense=corpus.dense, sparse=corpus.sparse) if web else None
        self.retriever, _ = research_retriever(source, web, corpus, ingestor, data_home(settings.data_dir))
        self.web_only = corpus if source == "web" else None  # its store is closed here, not by the retriever
        return self

    async def turn(self, question: str, dialogue):
        """The answer to `question` read in the context of `dialogue` (rewritten first), and the turn recorded."""
        from agents.answer.followup import RewriteFollowUp, RewriteInput, Turn
        from agents.multihop.strategies import ask

        asked = question
        if dialogue.turns:
            asked = (await self.models.run(RewriteFollowUp, RewriteInput(question=question,
                                                                         turns=dialogue.turns))).standalone
        answer = await ask(asked, self.args.strategy, self.models, self.retriever, self.multihop)
        dialogue.turns.append(Turn(question=question, standalone=asked, short_answer=answer.short_answer,
                                   guess=answer.guess, answer_type=answer.answer_type))
        return answer, question

    def usage(self) -> dict:
        return {**self.models.ledger.summary().total.model_dump(),
                "fallback_summary": self.models.ledger.fallback_summary()}

    async def close(self) -> None:
        from agents.web.hybrid import close_retriever

        if not self.closed:
            self.closed = True
            await close_retriever(self.retriever)
            if self.web_only is not None:
                self.web_only.close()
            await self.models.close()


def _show(args: argparse.Namespace, answer, asked: str, usage: dict | None) -> None:
    if args.json:
        # each cited passage: current / superseded / amended, from the evidence graph
        from cluster.commands.graph import citation_statuses

        payload = answer_json(answer, asked, usage, citation_statuses(args, answer.citations))
        print(json.dumps(payload, ensure_ascii=False, indent=1))
        return
    if answer.question != asked:
        print(f"(rewritten from the dialogue: {answer.question})")
    print_answer(answer)
    if usage and usage.get("fallback_summary"):
        print(f"\nLLM calls: {usage['fallback_summary']}")


def answer_json(answer, asked: str, usage: dict | None, statuses: list[dict | None]) -> dict:
    """An answer as `ask --json` (and the MCP and HTTP faces) give it; `statuses`: each citation's
    current / superseded / amended state from the evidence graph."""
    payload = {**answer.model_dump(mode="json"), "asked": asked, "usage": usage}
    for cited, status in zip(payload["citations"], statuses):
        cited["status"] = status
    return payload


def print_answer(answer) -> None:
    from agents.multihop.trace import found_nothing

    if answer.route_note:
        print(f"({answer.route_note})")
    if answer.abstained:
        print(f"Cannot answer: {answer.abstain_reason}")
        if answer.guess:
            print(f"  (best guess, not returned: {answer.guess}, confidence {floor(answer.confidence * 100) / 100:.2f})")
    elif answer.short_answer:
        print(f"Short answer: {answer.short_answer}  (confidence {answer.confidence:.2f}, {answer.answer_type})")
        for c in answer.answer_support:
            print(f"  stated in [{c.title}] {place_of(c.source, c.path, c.line_start, c.line_end, c.part)}")
        if answer.history:  # the value the one in force replaced
            print(f"  before: {answer.history}")
    print(f"\nAnswer ({answer.strategy}):")
    print(textwrap.indent(textwrap.fill(answer.answer, 100), "  "))
    print("\nHops:")
    for i, hop in enumerate(answer.hops, start=1):
        said = "(nothing found)" if found_nothing(hop.answer) else textwrap.shorten(hop.answer, 160)
        print(f"  {i}. {hop.query}\n     -> {said}")
        for p in hop.supporting_passages:
            print(f"        [{p.title}] {place_of(p.source, p.path, p.line_start, p.line_end, p.part)}")
    print("\nSources:")
    if not answer.citations:
        print("  (none)")
    for c in answer.citations:
        print(f"  [{c.n}] {c.title} — {place_of(c.source, c.path, c.line_start, c.line_end, c.part)}")
