"""Shared test fixtures. Subfolders add their own in their conftest.py."""

from llm_server import llama_server  # noqa: F401  (session fixture: a real llama.cpp server, or a skip)
