"""`raystorm ask "QUESTION" --collection NAME [--strategy auto|chain|deep|naive] [--json]`.

Answers in this process (one question needs no cluster): the router (for
`auto`), then the strategy over the collection. Prints the answer, the hop trace
(query → intermediate answer → supporting passages) and the cited passages with
source and line range; `--json` prints the same as one object.
"""

from __future__ import annotations

import argparse
import json
import textwrap

from cluster.commands.common import (add_store_arguments, collection_name, count, info, place_of, run_async,
                                     store_settings)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ask", help="answer a multi-hop question over a collection",
        description="Answer a question hop by hop (Chain-of-RAG), breadth first (DeepSearch) or in one "
                    "search (NaiveRAG); `auto` lets the router choose. Every statement cites a passage "
                    "of the collection.")
    p.add_argument("question", help="the question")
    p.add_argument("--collection", "-c", required=True, type=collection_name)
    p.add_argument("--strategy", choices=["auto", "chain", "deep", "naive"], default="auto",
                   help="auto: the router picks chain for concrete multi-hop facts, deep for broad questions")
    p.add_argument("--max-iter", type=count(1), default=None, metavar="N",
                   help="hops (chain, default 4) or search rounds (deep, default 3)")
    p.add_argument("--early-stop", action="store_true",
                   help="chain: stop as soon as the model judges the hops sufficient")
    p.add_argument("--min-confidence", type=confidence, default=None, metavar="P",
                   help="abstain below this confidence, 0-1 (default: the threshold chosen on the dev sets)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (short_answer, confidence, abstained, abstain_reason, trace)")
    from agents.lm.arguments import add_llm_arguments

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

    if not args.question.strip():
        raise UsageError("the question is empty")
    if args.max_iter is not None and args.strategy == "naive":
        raise UsageError("--max-iter does not apply to naive (one search); drop it or pick another --strategy")
    if args.early_stop and args.strategy not in ("chain", "auto"):
        raise UsageError("--early-stop applies to the chain strategy only (--strategy chain or auto)")
    answer, usage = run_async(_ask(args))
    if args.json:
        # each cited passage: current / superseded / amended, from the evidence graph
        from cluster.commands.graph import citation_statuses

        payload = {**answer.model_dump(mode="json"), "usage": usage}
        for cited, status in zip(payload["citations"], citation_statuses(args, answer.citations)):
            cited["status"] = status
        print(json.dumps(payload, ensure_ascii=False, indent=1))
    else:
        print_answer(answer)
        if usage.get("fallback_summary"):
            print(f"\nLLM calls: {usage['fallback_summary']}")
    return 0


async def _ask(args: argparse.Namespace):
    from agents.lm.arguments import stage_models_from_args
    from agents.lm.nlp import TextToolkit
    from agents.multihop.strategies import MULTIHOP_STAGES, MultihopSettings, ask
    from retrieval.config import data_home
    from retrieval.search import AsyncCorpus, Corpus

    settings = store_settings(args)
    models = stage_models_from_args(args, cache_dir=data_home(settings.data_dir) / "cache" / "llm",
                                    nlp=TextToolkit())
    models.validate_stages(MULTIHOP_STAGES)
    if models.notice:
        info(models.notice)
    multihop = MultihopSettings()
    if args.max_iter is not None:
        multihop.chain.max_iter = multihop.deep.max_iter = args.max_iter
    multihop.chain.early_stop = args.early_stop
    if args.min_confidence is not None:
        multihop.answer.min_confidence = args.min_confidence
    corpus = Corpus(settings, args.collection)
    corpus.check()
    retriever = AsyncCorpus(corpus)
    try:
        answer = await ask(args.question, args.strategy, models, retriever, multihop)
    finally:
        retriever.close()
        await models.close()
    return answer, {**models.ledger.summary().total.model_dump(), "fallback_summary": models.ledger.fallback_summary()}


def print_answer(answer) -> None:
    from agents.multihop.trace import found_nothing

    if answer.route_note:
        print(f"({answer.route_note})")
    if answer.abstained:
        print(f"Cannot answer: {answer.abstain_reason}")
        if answer.guess:
            print(f"  (best guess, not returned: {answer.guess}, confidence {answer.confidence:.2f})")
    elif answer.short_answer:
        print(f"Short answer: {answer.short_answer}  (confidence {answer.confidence:.2f}, {answer.answer_type})")
        for c in answer.answer_support:
            print(f"  stated in [{c.title}] {place_of(c.source, c.path, c.line_start, c.line_end)}")
    print(f"\nAnswer ({answer.strategy}):")
    print(textwrap.indent(textwrap.fill(answer.answer, 100), "  "))
    print("\nHops:")
    for i, hop in enumerate(answer.hops, start=1):
        said = "(nothing found)" if found_nothing(hop.answer) else textwrap.shorten(hop.answer, 160)
        print(f"  {i}. {hop.query}\n     -> {said}")
        for p in hop.supporting_passages:
            print(f"        [{p.title}] {place_of(p.source, p.path, p.line_start, p.line_end)}")
    print("\nSources:")
    if not answer.citations:
        print("  (none)")
    for c in answer.citations:
        print(f"  [{c.n}] {c.title} — {place_of(c.source, c.path, c.line_start, c.line_end)}")
