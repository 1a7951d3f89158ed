"""What tests (and the benchmarks that need the same stand-ins) import: the loopback OpenAI-compatible
endpoint (`llm_endpoint`, its replies built by `llm_fill`), the answers to Stanford STORM's own prompts
(`storm_prompts`), and the two-hop corpus the multi-hop and answer tests share (`multihop_helpers`).

Imported as `tests.support.NAME` from the repository root (pytest's `pythonpath`; scripts run as
`python -m scripts.NAME`)."""
