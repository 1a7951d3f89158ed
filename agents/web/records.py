"""What a run records of its web research: the engine and fetch settings (`WebSource`, never a key) and
every query sent (`WebQuery`). Light on purpose: run_config.json reads these without the fetcher."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agents.web.fetch import FetchSettings
from agents.web.providers import SearchEngineSettings

RESULTS_PER_QUERY = 8  # engine results fetched per query (STORM's web expert reads a handful per query)


class WebSource(BaseModel):
    """How a run researches the web, recorded in its config (no key: keys are read from the environment)."""

    engine: SearchEngineSettings
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    results_per_query: int = Field(RESULTS_PER_QUERY, ge=1, le=50)
    collection: str = "web"


class WebQuery(BaseModel):
    """One query sent to the engine, recorded in the run's config: what it found and what was cited from."""

    query: str
    engine: str
    results: list[str] = Field(default_factory=list, description="result URLs in the engine's order")
    skipped: dict[str, str] = Field(default_factory=dict, description="URL -> why it was not used")
    same_text: dict[str, str] = Field(default_factory=dict, description="URL -> the URL whose snapshot "
                                      "has its text, used (and cited) instead")
    seconds: float = 0.0

    def line(self) -> str:
        """A progress line: `web: "query" (engine): 8 results, 6 pages kept, 2 skipped (why), 1.2 s`."""
        kept = len(dict.fromkeys(self.results)) - len(self.skipped)
        same = f" ({len(self.same_text)} the same text as a page fetched before)" if self.same_text else ""
        why = "; ".join(f"{url}: {reason}" for url, reason in list(self.skipped.items())[:2])
        more = "; ..." if len(self.skipped) > 2 else ""
        skipped = f", {len(self.skipped)} skipped ({why}{more})" if self.skipped else ""
        return f'web: "{self.query}" ({self.engine}): {len(self.results)} results, {kept} pages kept{same}{skipped}, {self.seconds:.1f} s'
