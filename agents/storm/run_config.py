"""What run_config.json records: everything needed to rerun a report, and no secret.

Store settings carry no API key (it is read from the environment at use) and LLM
settings name models and endpoints only, so the whole record can be written as is.
"""

from __future__ import annotations

from importlib import metadata

from pydantic import BaseModel, Field

from agents.lm.settings import LLMSettings
from agents.storm.options import ReportOptions
from agents.web.records import WebQuery, WebSource
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
    source: str = Field("corpus", description="corpus, web or hybrid")
    web: WebSource | None = Field(None, description="the search engine and fetch settings (web and hybrid)")
    web_queries: list[WebQuery] = Field(default_factory=list, description="every query sent to the engine")
    raystorm: str = Field(default_factory=_version)
