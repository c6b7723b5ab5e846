"""One settings class for the whole process, read from ``MEMTRACE_*`` environment variables.

Every variable is documented once, here; the README lists the ones a newcomer needs.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.placement import StoreConfig, check_placement

NEO4J_VERSION = "5.26.30"
"""The Neo4j LTS patch the local launcher fetches from Maven Central and docker-compose pins."""


class Settings(BaseSettings):
    """Configuration of the MemTrace service, CLI and local Neo4j launcher."""

    model_config = SettingsConfigDict(env_prefix="MEMTRACE_", env_file=".env", extra="ignore")

    # Neo4j connection: the default store. A neo4j:// or neo4j+s:// URI makes the driver route:
    # reads (every read path runs in a read transaction) go to a cluster's secondaries, writes
    # to its primary. bolt:// talks to one server.
    neo4j_uri: str = Field(
        "bolt://127.0.0.1:7687", description="Bolt or routing (neo4j://, neo4j+s://) URI."
    )
    neo4j_user: str = Field("neo4j", description="Neo4j user (ignored when auth is disabled).")
    neo4j_password: SecretStr = Field(SecretStr("memtrace"), description="Neo4j password.")
    neo4j_database: str = Field("neo4j", description="Database name; Community has one.")
    neo4j_connect_timeout_s: float = Field(5.0, description="How long to wait for a connection.")
    neo4j_retry_time_s: float = Field(
        5.0, description="How long a managed transaction retries transient errors before a 503."
    )
    # Project placement (service.placement): more stores, and which projects live on them.
    neo4j_stores: dict[str, StoreConfig] = Field(
        default_factory=dict,
        description="More Neo4j stores by name, as JSON: "
        '{"big": {"uri": "neo4j+s://...", "database": "neo4j", "user": "neo4j", '
        '"password": "..."}}. The name "default" is the store above.',
    )
    neo4j_placement: dict[str, str] = Field(
        default_factory=dict,
        description="Which store holds which projects, as JSON: project name or glob pattern "
        '-> store name, e.g. {"acme": "big", "tenant-*": "big"}. Exact names first, then '
        "the first matching pattern in the order listed; other projects: the default store.",
    )

    # Ingestion limits.
    max_batch_bytes: int = Field(8 * 1024 * 1024, description="Largest accepted request body.")
    max_batch_operations: int = Field(
        10_000, description="Most operations (OTLP: spans) in one batch or export."
    )
    write_transaction_rows: int = Field(
        20_000,
        ge=1,
        description="Most rows one write transaction of a batch holds (a node or relationship it "
        "creates is one, each KiB of its text one more); a larger batch is written in several "
        "transactions (docs/sending-traces.md). A row takes about 3 KB of Neo4j's transaction "
        "memory (Neo4j 5.26): the default stays under 64 MB, a quarter of the "
        "db.memory.transaction.max the local launcher sets at a 1 GB heap.",
    )
    subgraph_node_limit: int = Field(5_000, description="Most nodes one subgraph answer returns.")
    # A case's ancestry is what the data makes it (issue 33: 60 units of 1 MB made a 60 MB
    # subgraph and case page): its long values are cut in Neo4j, and the nodes stop at a byte
    # budget, the same default as an ad-hoc answer's.
    subgraph_max_bytes: int = Field(
        4 * 1024 * 1024,
        ge=64 * 1024,
        description="Most bytes of JSON a case's subgraph (GET /cases/{id}/subgraph, the case "
        "page's graph) may take; the nodes stop there and the answer says truncated_by bytes.",
    )
    subgraph_value_chars: int = Field(
        10_000,
        ge=100,
        description="Longest content a subgraph node carries (characters): longer content is "
        "cut to its start, and attributes longer than this as JSON are left out; the node's "
        "`cut` says how long the stored value is.",
    )
    retry_after_s: int = Field(5, description="Retry-After sent with a 503.")

    # Attribution.
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint for the llm judge (e.g. .../v1)."
    )
    llm_api_key: SecretStr = Field(SecretStr("not-set"), description="Key for that endpoint.")
    llm_model: str = Field("gpt-4.1-mini", description="Model the llm judge asks.")
    llm_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Timeout of one LLM request, from when it is sent (waiting for one of "
        "MEMTRACE_LLM_CONCURRENCY slots is not counted).",
    )
    llm_concurrency: int = Field(
        1,
        ge=1,
        le=64,
        description="Most requests in flight to the LLM endpoint from this process. 1 suits a "
        "one-slot local server (llama.cpp, Ollama); raise it for hosted APIs (8-16).",
    )
    llm_context_tokens: int = Field(
        8192,
        ge=512,
        description="The model's context window: judge batches and unit excerpts are sized to "
        "fit it with the answer (set it to the server's context size, e.g. llama.cpp -c).",
    )
    llm_self_check: bool = Field(
        True,
        description="At start-up, run the judge check on the configured model once, in the "
        "background; a project without a recorded check of its own uses that outcome (a model "
        "below llm_min_accuracy is then stood down everywhere).",
    )
    llm_min_accuracy: float = Field(
        0.75,
        ge=0,
        le=1,
        description="A model whose judge check (the project's recorded one, else the service's "
        "own at start-up) scored below this accuracy is stood down: llm and llm-all requests "
        "are judged by the heuristic, and their results say so in judge.warning.",
    )
    embeddings_base_url: str | None = Field(
        None,
        description="OpenAI-compatible endpoint whose embeddings are fused with BM25 when "
        "searching for evidence (off when unset).",
    )
    embeddings_api_key: SecretStr = Field(SecretStr("not-set"), description="Key for it.")
    embeddings_model: str = Field("text-embedding-3-small", description="Embedding model.")
    llm_heuristic_confidence: float = Field(
        0.8,
        description="Heuristic verdicts at least this confident are taken without asking the "
        "LLM (above 1: the LLM is asked about every unit).",
    )
    attribution_max_llm_calls: int = Field(8, description="Most LLM calls one attribution makes.")
    attribution_max_llm_failures: int = Field(
        3,
        ge=1,
        description="LLM calls of one attribution that may give nothing usable (timeout, cut at "
        "max_tokens, malformed) before the LLM is not asked again for that case.",
    )
    attribution_max_tokens: int = Field(
        20_000, description="Most LLM tokens (input + output) one attribution spends."
    )
    attribution_graph_limit: int = Field(
        20_000, description="Most nodes an attribution loads (ancestors, descendants, messages)."
    )
    job_heartbeat_s: float = Field(
        2.0,
        gt=0,
        description="How often a job taker renews the leases of the chunks it works on (and "
        "their jobs' heartbeats), or a running prompt optimisation's claim on its prompt says "
        "it is alive.",
    )
    job_stale_s: float = Field(
        10.0,
        gt=0,
        description="A running job no process has been heard of on for this long is shown "
        "as interrupted (its chunks are taken over once their leases expire, or at once by a "
        "resume), and a prompt optimisation's claim not renewed for this long may be taken by "
        "another; several heartbeats long.",
    )
    job_pool: int = Field(
        4,
        ge=0,
        le=64,
        description="Job takers per service process: how many chunks of attribution jobs "
        "(any process's) it works on at once. 0: this process takes no job work.",
    )
    job_lease_s: float = Field(
        30.0,
        gt=0,
        description="A taker's lease on a job chunk, renewed every job_heartbeat_s while it "
        "works; a chunk whose lease expired (its process died or stalled) is taken by any "
        "process. Several heartbeats long.",
    )
    job_poll_s: float = Field(
        1.0,
        gt=0,
        description="How often an idle job taker looks for a free chunk.",
    )
    job_store_wait_s: float = Field(
        60.0,
        ge=0,
        description="How long a job taker keeps trying its chunk against an unreachable Neo4j "
        "(backing off from 0.5 s to 8 s between tries) before it lets the chunk go; its lease "
        "then expires and any process takes it again once Neo4j answers.",
    )
    job_stall_s: float = Field(
        600.0,
        gt=0,
        description="A job taker that has not moved on (read its chunk, finished a case, stored "
        "the chunk, tried an unreachable store) for this long is taken as stuck: its lease is "
        "no longer renewed and it is cancelled, so another process takes the chunk once the "
        "lease expires. Longer than the slowest case (its LLM calls) may take.",
    )
    job_case_spin_s: float = Field(
        0.0,
        ge=0,
        description="For tests only: CPU seconds each case of a job burns on the job worker's "
        "loop without yielding, so a test can keep a runner busy for longer than job_stale_s.",
    )

    # Access control (off unless keys are configured).
    api_keys: SecretStr | None = Field(
        None,
        description="API keys the service accepts, ';'-separated; each `KEY` (every project) or "
        "`KEY:project-a,project-b` (only those). Unset (and no keys file): no key needed.",
    )
    api_keys_file: Path | None = Field(
        None, description="A file of API keys, one `KEY[:projects]` per line (# comments)."
    )
    auth_required: bool = Field(
        False,
        description="Refuse to start without API keys (the Docker image sets it): a deployment "
        "never runs open by mistake.",
    )
    api_key: SecretStr | None = Field(
        None, description="The key CLI commands send to the service (`Authorization: Bearer`)."
    )

    # Ad-hoc Cypher (POST /cypher). The text limits keep Neo4j's recursive parser and plan
    # printer far from their stack (measured on Neo4j 5.26 with the local launcher: 300 nested
    # parentheses and 150 nested CASE planned, 500 parentheses or a 3,000-term sum never
    # answered) and still leave room for the project's own queries (cypher/: at most 4.1 KB,
    # 6 levels, 147 operators).
    cypher_timeout_s: float = Field(
        10.0, gt=0, description="Longest an ad-hoc query may take, planning and running."
    )
    cypher_max_rows: int = Field(1000, ge=1, description="Most rows an ad-hoc query returns.")
    cypher_max_bytes: int = Field(
        4 * 1024 * 1024,
        ge=1024,
        description="Most bytes of JSON the rows of an ad-hoc answer may take; reading stops "
        "there and the answer says truncated.",
    )
    cypher_max_length: int = Field(
        10_000, ge=1, description="Longest ad-hoc query text accepted (characters)."
    )
    cypher_max_depth: int = Field(
        32, ge=1, description="Deepest nesting of ( [ { and CASE in an ad-hoc query."
    )
    cypher_max_operators: int = Field(
        600,
        ge=1,
        description="Most operators (+ - = AND . : ...) in an ad-hoc query; bounds chains "
        "such as 1 + 1 + ... + 1, which Neo4j nests like parentheses.",
    )

    # Audits (GET /audits/{name}) and reports (GET /report, /report.html).
    # Longer than an ad-hoc query's: the budget includes planning, and Neo4j's first plan of
    # the largest audit statement took 7.5 s on a loaded 2-core machine (0.2 s once cached).
    audit_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Longest one audit page, one report or one session read (GET /sessions, "
        "GET /sessions/{id}) may spend reading from Neo4j, all "
        "its reads together; past it Neo4j stops the read and the answer is a 422 naming what "
        "to narrow (the same bounds as POST /cypher's: a read-access transaction, never "
        "retried, the service giving up 2 s after Neo4j should have).",
    )
    session_count_cap: int = Field(
        10_000,
        ge=1,
        description="Where a session's counts stop (GET /sessions, GET /sessions/{id}): past "
        "it a count reads as this number, `capped` is true and the session's first and last "
        "times are not given. Each count reads at most this many nodes plus one, so a page of "
        "sessions stamped on millions of operations stays within the read budget.",
    )
    audit_candidate_scan: int = Field(
        20_000,
        ge=1,
        description="Most candidate rows one page of an audit that finishes its rule in the "
        "service reads (degraded_updates, deleted_then_needed, retrieval_misses); a page that "
        "reaches it may come back short, with next_skip to go on.",
    )
    audit_cursor_cases: int = Field(
        500,
        ge=1,
        description="Most failed cases one page of a cursor-paged audit (deleted_then_needed, "
        "retrieval_misses) covers: the cases it reads to start a page are these, whatever the "
        "project's size; a page that covers them may come back short, with next_cursor.",
    )

    # HTTP server (memtrace serve).
    host: str = Field("127.0.0.1", description="Address `memtrace serve` binds.")
    port: int = Field(8000, description="Port `memtrace serve` binds.")
    workers: int = Field(
        1,
        ge=1,
        description="Worker processes of `memtrace serve` (uvicorn); each has its own Neo4j "
        "driver, and they share the port.",
    )
    url: str | None = Field(
        None,
        description="Where CLI commands (and `memtrace demo`) find the service; unset: "
        "http://MEMTRACE_HOST:MEMTRACE_PORT, the address `memtrace serve` binds with the same "
        "settings (a wildcard host, 0.0.0.0 or ::, read as this machine).",
    )

    # Local Neo4j launcher (memtrace neo4j start|stop|status).
    local_neo4j_dir: Path = Field(
        Path.home() / ".cache" / "memtrace" / "neo4j",
        description="Cache of Neo4j jars and the data folder of the local instance.",
    )
    local_neo4j_home: Path | None = Field(
        None, description="Data folder of the local instance (default: <local_neo4j_dir>/instance)."
    )
    local_neo4j_port: int = Field(7687, description="Bolt port of the local instance.")
    local_neo4j_heap: str = Field("2g", description="JVM heap of the local instance.")
    local_neo4j_pagecache: str = Field("2g", description="Page cache of the local instance.")

    @model_validator(mode="after")
    def _placement_names_known_stores(self) -> Settings:
        check_placement(self.neo4j_placement, self.neo4j_stores)
        return self

    @model_validator(mode="after")
    def _stale_spans_heartbeats(self) -> Settings:
        if self.job_stale_s <= 2 * self.job_heartbeat_s:
            raise ValueError(
                "MEMTRACE_JOB_STALE_S must exceed two heartbeats (MEMTRACE_JOB_HEARTBEAT_S): "
                "a live runner would be shown interrupted between two of its beats"
            )
        if self.job_lease_s <= 2 * self.job_heartbeat_s:
            raise ValueError(
                "MEMTRACE_JOB_LEASE_S must exceed two heartbeats (MEMTRACE_JOB_HEARTBEAT_S): "
                "a live taker's chunk would be taken between two of its renewals"
            )
        return self

    def service_url(self) -> str:
        """Where the CLI finds the service: ``url`` when set, else where ``memtrace serve``
        listens with these settings. Following MEMTRACE_PORT keeps a second user's CLI (their
        own port) away from the first user's service on the default one."""
        if self.url:
            return self.url.rstrip("/")
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def node_limit(self, requested: int | None) -> int:
        """The subgraph node limit for a request: what it asked for, never above the server's."""
        return min(requested or self.subgraph_node_limit, self.subgraph_node_limit)


@cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
