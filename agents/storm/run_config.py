"""What run_config.json records: everything needed to rerun a report, and no secret.

Store settings carry no API key (it is read from the environment at use) and LLM
settings name models and endpoints only, so the whole record can be written as is.
"""

from __future__ import annotations

from importlib import metadata

from pydantic import BaseModel, Field

from agents.lm.settings import LLMSettings
from agents.storm.options import ReportOptions
from retrieval.config import StoreSettings


def _version() -> str:
    try:
        return metadata.version("raystorm")
    except metadata.PackageNotFoundError:
        return "unknown"


class RunConfig(BaseModel):
    topic: str
    collection: str
    corpus: list[str] = Field(default_factory=list, description="paths ingested for the run, if any")
    store: StoreSettings
    llm: LLMSettings
    options: ReportOptions
    raystorm: str = Field(default_factory=_version)
