"""The actors of one distributed report run, and the plan that sizes and places them.

`ResearchCluster` starts the `LLMGateway` and the `Corpus` pool on the driver's
node (they own the run's ledger and, in embedded mode, the store folder), and
spreads the `PersonaWriter` and `Expert` pools over the cluster. `ClusterPlan`
is the printable value that sizes all of it; its `None`s are sized from the cluster.
"""

from __future__ import annotations

import ray
from pydantic import BaseModel, Field

from actors.calls import call, get
from actors.corpus import CorpusPool
from actors.expert import EXPERT_OPTIONS, ExpertActor
from actors.gateway import GATEWAY_OPTIONS, EndpointLimits, GatewaySettings, LLMGateway
from actors.hopper import HOPPER_OPTIONS, Hopper, HopperRecipe
from actors.models import INJECTED_ENDPOINT, ModelRecipe
from actors.pool import ActorPool, alive_nodes, cluster_cpus
from actors.report_agent import REPORT_AGENT_OPTIONS, ReportAgentActor
from actors.writer import WRITER_OPTIONS, PersonaWriter
from agents.lm.settings import LLMSettings
from agents.report.memory import InterviewAnswer
from agents.web.records import WebSource
from cluster.distributed_checks import check_endpoints
from cluster.runtime import cluster_info, driver_node_id
from retrieval.config import StoreSettings
from retrieval.errors import UsageError

START_TIMEOUT_S = 300.0


class ClusterPlan(BaseModel):
    """How a distributed run is laid out. None: sized from the cluster. Safe to print and to ship."""

    writer_actors: int | None = Field(None, ge=1, description="PersonaWriter actors (default: one per "
                                      "persona, at most the cluster's CPUs, at least 2)")
    expert_actors: int | None = Field(None, ge=1, description="Expert actors (default: the cluster's CPUs, "
                                      "at least 2)")
    corpus_actors: int | None = Field(None, ge=1, description="with a Qdrant server only (embedded: 1); "
                                      "default one per node")
    research_resources: dict[str, float] = Field(default_factory=dict, description="custom resources each "
                                                 "writer and expert asks for, e.g. {'research': 1} to keep them "
                                                 "on nodes started with --resources '{\"research\": 64}'")
    topics_in_flight: int | None = Field(None, ge=1, description="topics researched at once (default all)")
    llm_concurrency: int | None = Field(None, ge=1, description="requests in flight per endpoint, "
                                        "cluster-wide (default: the LLM settings' concurrency)")
    llm_requests_per_minute: float | None = Field(None, gt=0, description="per endpoint, cluster-wide")
    inject_latency_ms: float = Field(0.0, ge=0, description="benchmark knob: a wait per model call, "
                                     "standing in for a remote LLM")
    turn_timeout_s: float = Field(600.0, gt=0, description="one writer or expert turn")
    stage_timeout_s: float = Field(1800.0, gt=0, description="one stage call on an expert actor")
    conversation_attempts: int = Field(3, ge=1, description="tries of a conversation whose writer died")
    restart_wait_s: float = Field(180.0, ge=0, description="how long a conversation keeps waiting, past its "
                                  "tries, while Ray is still restarting its writers (all of them may have "
                                  "been on lost nodes)")
    report_agents: int = Field(0, ge=0, description="ReportAgent actors (--writer react; 0: none started)")
    hoppers: int | None = Field(None, ge=1, description="Hopper actors answering the report agents' "
                                "insight_forge sub-questions (default: as many as report agents, at least 2)")


def placement_line(placement: dict[str, list[str]]) -> str:
    """Where the actors run (`ResearchCluster.wait_ready`'s answer), as one line: node: actors; ..."""
    return "; ".join(f"{node[:8]}: {', '.join(names)}" for node, names in sorted(placement.items()))


class ResearchCluster:
    """The actors of one distributed run: gateway, corpus/table owner, writers, experts."""

    def __init__(self, store: StoreSettings, collection: str, llm: LLMSettings, plan: ClusterPlan,
                 personas_total: int, cache_dir: str | None = None, recipe: ModelRecipe | None = None,
                 web: WebSource | None = None, source: str = "corpus", home: str | None = None):
        """`web`, `source` (web or hybrid), `home` (the data dir, on the driver's disk): research the web too."""
        if cluster_info().client_mode and not store.qdrant_url:
            raise UsageError("over Ray Client (ray://) the actors cannot open this machine's embedded store: "
                             "use a Qdrant server (--qdrant-url), or submit the run as a job (`raystorm submit`) "
                             "so it runs where the data is")
        self.plan = plan
        cpus = cluster_cpus()
        recipe = recipe or ModelRecipe(llm=llm)
        if recipe.http_client_factory is None:  # (an injected client reaches no network: nothing to check)
            check_endpoints([spec.base_url for spec in llm.specs if spec.base_url], plan.research_resources)
        self.placement: dict[str, list[str]] = {}  # node id -> actor names, once `wait_ready` has seen them
        recipe = recipe.model_copy(update={"llm": llm, "inject_latency_s": plan.inject_latency_ms / 1000.0,
                                           "gateway_cache": bool(cache_dir and llm.cache)})
        self.recipe = recipe
        driver = driver_node_id()
        default_limits = EndpointLimits(concurrency=plan.llm_concurrency or llm.concurrency,
                                        requests_per_minute=plan.llm_requests_per_minute)
        endpoints = {}
        if recipe.inject_latency_s and not plan.llm_concurrency:
            # a stand-in endpoint: as many in flight as the run asks for, unless limited explicitly
            endpoints[INJECTED_ENDPOINT] = EndpointLimits(concurrency=10_000)
        gateway_options = GATEWAY_OPTIONS.model_copy(update={"pin_node": driver})
        self.gateway = LLMGateway.options(**gateway_options.ray_options()).remote(
            GatewaySettings(default=default_limits, endpoints=endpoints, cache_dir=cache_dir))
        corpus_size = plan.corpus_actors or alive_nodes()
        self.source = source if web is not None else "corpus"
        self.corpus = CorpusPool(store, collection, size=corpus_size, pin_node=driver, check=self.source != "web")
        self.web = None
        self.retriever = self.corpus.retriever()  # what experts, hoppers and report agents search
        if self.source != "corpus":
            from actors.web_research import WebActorRetriever, start_web_research
            from agents.web.hybrid import HybridRetriever

            owner = None if store.qdrant_url else self.corpus.actors[0]  # embedded: the store's one owner
            self.web = start_web_research(store, web, home, owner, driver, fetchers=max(min(cpus, 4), 2))
            found = WebActorRetriever(self.web, store)
            self.retriever = found if source == "web" else HybridRetriever(self.retriever, found)
        keys = llm.api_key_env()  # the model actors' API keys, from this environment; never written down
        env = {"env_vars": keys} if keys else None
        self.writers = ActorPool.create(
            PersonaWriter, plan.writer_actors or min(max(personas_total, 1), max(cpus, 2)),
            WRITER_OPTIONS.model_copy(update={"resources": plan.research_resources}), label="PersonaWriter",
            args=(recipe, self.gateway), runtime_env=env, pass_label=True)
        self.experts = ActorPool.create(
            ExpertActor, plan.expert_actors or max(cpus, 2),
            EXPERT_OPTIONS.model_copy(update={"resources": plan.research_resources}),
            label="Expert", args=(recipe, self.gateway, self.retriever, self.corpus.pool),
            runtime_env=env, pass_label=True)
        self.hoppers = self.report_agents = None
        if plan.report_agents:
            self.hoppers = ActorPool.create(
                Hopper, plan.hoppers or max(plan.report_agents, 2),
                HOPPER_OPTIONS.model_copy(update={"resources": plan.research_resources}), label="Hopper",
                args=(HopperRecipe(llm=llm), self.retriever, self.gateway, recipe), runtime_env=env,
                pass_label=True)
            self.report_agents = ActorPool.create(
                ReportAgentActor, plan.report_agents,
                REPORT_AGENT_OPTIONS.model_copy(update={"resources": plan.research_resources}), label="ReportAgent",
                args=(recipe, self.gateway, self.retriever, self.hoppers.handles), runtime_env=env,
                pass_label=True)
        self._slot = 0
        self._writer_of: dict[tuple[str, str], tuple[int, str]] = {}  # (topic, persona) -> (writer actor, key)

    def note_writer(self, topic: str, persona: str, index: int, key: str) -> None:
        self._writer_of[(topic, persona)] = (index, key)

    def writer_for(self, topic: str, persona: str) -> tuple[ray.actor.ActorHandle, str]:
        """The actor hosting that persona's writer, and its key there (e.g. to interview it after the run)."""
        index, key = self._writer_of[(topic, persona)]
        return self.writers.handles[index], key

    async def interview(self, topic: str, persona: str, question: str) -> InterviewAnswer:
        """Ask a persona of this session, on its live writer actor (after a session: `raystorm interview`)."""
        actor, key = self.writer_for(topic, persona)
        return await call(actor.interview.remote(key, question), actor="PersonaWriter",
                          method=PersonaWriter.interview.__name__, stage="interview", timeout_s=self.plan.turn_timeout_s)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> dict[str, list[str]]:
        """Wait for every actor; where each runs: node id -> actor names."""
        where: dict[str, list[str]] = {}
        gateway = get(self.gateway.ready.remote(), actor="LLMGateway", method="ready", stage="startup",
                      timeout_s=timeout_s)
        where.setdefault(gateway, []).append("LLMGateway")
        self.corpus.wait_ready(timeout_s)
        if self.web is not None:
            node = get(self.web.ready.remote(), actor="WebResearch", method="ready", stage="startup",
                       timeout_s=timeout_s)
            where.setdefault(node, []).append("WebResearch")
        for pool in (self.corpus.pool, self.writers, self.experts, *self._report_pools()):
            for i, node in enumerate(pool.wait_ready(timeout_s)):
                where.setdefault(node, []).append(pool.name(i))
        self.placement = where
        return where

    def _report_pools(self) -> list[ActorPool]:
        return [self.hoppers, self.report_agents] if self.report_agents else []

    def next_writer_slot(self) -> int:
        slot = self._slot
        self._slot += 1
        return slot

    def shutdown(self) -> None:
        for pool in (self.writers, self.experts, *self._report_pools()):
            pool.kill()
        if self.web is not None:
            try:  # its fetchers, and their robots.txt answers on the cluster's gate (bounded: a lost actor is killed)
                ray.get(self.web.close.remote(), timeout=30)
            except (ray.exceptions.RayError, TimeoutError):
                pass
            ray.kill(self.web, no_restart=True)
        self.corpus.kill()
        ray.kill(self.gateway, no_restart=True)
