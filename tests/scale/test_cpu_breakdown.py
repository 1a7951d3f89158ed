"""The per-call CPU breakdown of bench_scale: py-spy stacks sorted into parts, a process's CPU shared out."""

from __future__ import annotations

from collections import Counter

from scripts.cpu_breakdown import breakdown, part_of, read_raw

EMBED = ("main (x.py:1);ExpertAgent.answer (agents/storm/expert.py:80);"
         "QueryEncoder.encode (retrieval/query.py:65);Session.run (onnxruntime/capi/x.py:406)")
RENDER = ("main (x.py:1);ChatModel._run (agents/lm/chat.py:140);"
          "_async_transform_recursive (openai/_utils/_transform.py:348)")
PARSE = ("main (x.py:1);ChatModel._run (agents/lm/chat.py:150);parse_output (agents/lm/output.py:90);"
         "BaseModel.model_validate (pydantic/main.py:700)")
IDLE = "main (x.py:1);Worker.main_loop (ray/_private/worker.py:1069)"


def test_a_sample_counts_where_its_operation_starts():
    assert part_of(EMBED) == "query embedding"
    assert part_of(RENDER) == "request rendering"
    assert part_of(PARSE) == "reply parsing"  # pydantic inside the parse is the parse's
    assert part_of("main (x.py:1);BaseModel.__init__ (pydantic/main.py:280)") == "pydantic validation"


def test_a_process_cpu_is_its_python_samples_plus_native_code(tmp_path):
    raw = tmp_path / "Expert-1.txt"
    raw.write_text(f"{EMBED} 30\n{RENDER} 10\n{IDLE} 500\nnot a line\n")
    stacks = read_raw(raw)
    assert breakdown(stacks) == Counter({"query embedding": 30, "request rendering": 10})  # idle left out
    seconds = breakdown(stacks, cpu_s=1.0, rate=100, native="native code in Expert")
    assert round(seconds["query embedding"], 3) == 0.3 and round(seconds["native code in Expert"], 3) == 0.6
    # more samples than CPU (threads waiting for a core): scaled down to the measurement, nothing native
    crowded = breakdown(stacks, cpu_s=0.2, rate=100)
    assert round(sum(crowded.values()), 6) == 0.2 and crowded["native code"] == 0
