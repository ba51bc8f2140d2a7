"""The one settings object of sourcewatch.

Every value comes from (highest first) environment variables prefixed
`SOURCEWATCH_`, a TOML file named by `SOURCEWATCH_CONFIG` (default
`sourcewatch.toml` in the working directory, if present), then the defaults
below. Components never read the environment themselves: they take plain
values and offer a `from_settings(settings)` factory.
"""

from __future__ import annotations

import os
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

HOME = Path(".sourcewatch")


# A find's P(source page) from which it is sure (odds of 9 to 1); Settings.find_sure_at.
FIND_SURE_AT = 0.9


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SOURCEWATCH_", frozen=True, extra="ignore")

    # Where the project keeps its local state; every other path defaults below it.
    home: Path = HOME
    # Unpacked evaluation data (../shared/data unpacked by `make setup`); env SOURCEWATCH_DATA.
    data: Path = HOME / "data"

    # Kafka: a bootstrap address points everything at any cluster; empty means the local broker.
    kafka_bootstrap: str = ""
    kafka_port: int = 9092
    kafka_dir: Path = HOME / "kafka"
    kafka_libs: Path = HOME / "kafka-libs"
    kafka_heap_mb: int = 768
    # Prefix for every topic name and consumer group; tests use it to stay apart.
    topic_prefix: str = ""
    topic_partitions: int = 8
    # How long the broker waits for a silent worker (killed, or cut off) before giving its partitions to the
    # others; heartbeats go out every heartbeat interval (under a third of it).
    kafka_session_timeout_seconds: float = 10.0
    kafka_heartbeat_seconds: float = 2.0
    # How long a starting worker waits for a broker that does not answer (starting, restarting) before it stops.
    kafka_start_wait_seconds: float = 120.0
    # How long a stopping worker may take to commit and flush (it waits on the broker) before it exits at once,
    # as a killed one would: nothing is lost, its uncommitted messages are delivered again.
    worker_stop_seconds: float = Field(default=60.0, gt=0)
    # Every block of 128 KiB or more its own mapping, given back when freed (streams.malloc): bounds a worker's
    # memory under a backlog (a 5,000-site soak's worker 1,339 → 955 MB) at a third of its revisits when it is
    # not saturated (a 1,000-site soak: 21 against 31 a second). Off by default: glibc's own threshold; on for
    # a worker whose memory is what runs out. (The demo test's re-read that failed twice with it off counted a
    # revisit's reports after the re-read; jobs.demo.reported_between.)
    worker_map_large_blocks: bool = False
    # How long a worker's thread may keep the GIL while another waits for it (streams.threads; CPython's
    # default is 5 ms, and each lxml XPath, large numpy operation or socket call of one thread waited up to
    # that long for the other).
    worker_switch_interval_ms: float = Field(default=0.5, gt=0, le=100)
    # Static group membership (KIP-345): a stable id per worker, distinct across workers, lets a restarted
    # worker take its partitions back at once, without a rebalance. Empty: dynamic membership.
    worker_instance_id: str = ""
    # What a worker runs (`sourcewatch worker --role`): "all" the stages and the sink (one worker, or several on
    # a ClickHouse server); "process" the stages without the sink (any number, sharing the stages' partitions
    # and table state); "sink" the ClickHouse sink alone (the one process an embedded chDB allows).
    worker_role: Literal["all", "process", "sink"] = "all"
    # A consumer's fetch is answered once this many bytes are ready or after this wait, whichever comes first
    # (streams.consumer_fetch): fewer, larger fetches under load; the wait is the most a message is held at
    # each hop when little flows.
    kafka_fetch_min_bytes: int = Field(default=64 * 1024, ge=1)
    kafka_fetch_max_wait_ms: int = Field(default=100, ge=0, le=1500)
    # Local broker and producer both accept messages up to this size (bytes).
    kafka_max_message_bytes: int = 8 * 1024 * 1024
    # Events an agent's stream holds unprocessed before its partitions' fetching pauses (Faust's
    # stream_buffer_maxsize and its default): lower, a backlog of fetched pages waits in Kafka rather than in
    # a worker's memory. 256 against 4096 made no difference beyond run-to-run spread in the 1,000-site soak
    # with a worker killed (README, "Scaling out"), so the default stays Faust's.
    stream_buffer_events: int = Field(default=4096, ge=64)

    # ClickHouse: chdb://PATH for the embedded engine, http(s)://… for a server.
    clickhouse_dsn: str = f"chdb://{HOME / 'clickhouse'}"
    sink_batch_size: int = 2000
    sink_flush_seconds: float = 1.0

    # Faust worker web server (also serves `sourcewatch sql` while the worker holds chDB).
    web_port: int = 6066
    # The bearer token every HTTP route requires; empty means the one generated on first use and kept
    # owner-only in <home>/api-token (the CLI reads it there).
    api_token: SecretStr | None = None
    # Host names besides loopback that the web server answers to (Host and Origin headers), for a
    # deployment behind a proxy; a JSON list in the environment.
    api_allowed_hosts: tuple[str, ...] = ()
    # `crawl`, `discover` and `watch --run` produce to the workers already running (members of the consumer
    # group) and follow from outside; false: they always run a worker of their own (the demo does).
    attach_to_running_workers: bool = True
    # Webhooks: every new item is posted to each of these URLs (a JSON list in the environment), besides a
    # watched page's own webhook; signed with HMAC-SHA256 under webhook_secret (empty: one generated on first
    # use and kept owner-only in <home>/webhook-secret); each post tried this many times, backing off.
    webhook_urls: tuple[str, ...] = ()
    webhook_secret: SecretStr | None = None
    webhook_attempts: int = 5
    webhook_timeout_seconds: float = 10.0
    # How long a post is remembered so a redelivered item is not posted again: the topics' retention (the
    # local broker keeps 168 h); an item older than that cannot be delivered again.
    webhook_posted_keep_hours: float = 168.0
    # How long a crawl's own state (a frontier's seen URLs, a list's followed pages, discovery episodes,
    # topical crawls) outlives the crawl's last message in a worker: the topics' retention, after which none
    # of its messages can come again (streams.retention).
    crawl_state_keep_hours: float = Field(default=168.0, gt=0)
    # How long the record stage remembers an item no read of its source's list has shown (streams.retention):
    # one listed again after that is reported as new once more; a source not read for that long seeds afresh.
    known_items_keep_days: float = Field(default=365.0, gt=0)
    # `sourcewatch serve`: the address it binds (anything but loopback needs api_token set) and the first
    # port it tries.
    serve_host: str = "127.0.0.1"
    serve_port: int = 8066

    # Fetching: politeness, caps and safety.
    user_agent: str = "sourcewatch/0.1 (+https://github.com/sourcewatch/sourcewatch; crawler for event and news listings)"
    per_host_delay_seconds: float = 1.0
    per_host_concurrency: int = 2
    global_concurrency: int = 64
    connect_timeout_seconds: float = 10.0
    read_timeout_seconds: float = 20.0
    total_timeout_seconds: float = 30.0
    max_body_bytes: int = 5 * 1024 * 1024
    # A fetched page's text travels in pages.fetched only up to this many UTF-8 bytes (then truncated=true).
    max_message_body_bytes: int = 2 * 1024 * 1024
    max_redirects: int = 5
    max_retries: int = 3
    retry_after_cap_seconds: float = 60.0
    robots_cache_seconds: float = 3600.0
    # robots.txt Crawl-delay is honoured unless this is off (the crawl benchmark turns it off,
    # since Scrapy has no Crawl-delay support and both must crawl under the same politeness).
    honour_crawl_delay: bool = True
    allow_loopback: bool = False
    allow_private: bool = False

    # BFS frontier defaults (per site, per crawl).
    crawl_max_depth: int = 50
    crawl_max_pages: int = 1000

    # Models. Empty pagination_model means the default model shipped in the package.
    pagination_model: Path | None = None
    # Pages of one paginated list followed per source page (the source page included).
    pagination_max_pages: int = 10
    # Pages one revisit reads of a watched list whose items were all new (agents.overflow; the first page
    # included). Not the list's archive depth above: these pages hold items published since the last read, and
    # the read stops at the first item known before it, so this bounds only a burst larger than it (or a list
    # whose order is misread as all new).
    overflow_max_pages: int = 30
    # Pages a read-on may go past that budget while every item a page shows is dated since the list's last
    # read (agents.overflow.dated_since): a burst larger than the budget, known to be new by its dates — a
    # publication series adding some 250 items to a list of five between two reads.
    overflow_dated_max_pages: int = 100
    laser_dir: Path | None = None

    # Discovery. Empty paths mean the agent and classifier shipped in the package; an empty threshold, the
    # classifier's own.
    discovery_agent: Path | None = None
    source_classifier: Path | None = None
    source_threshold: float | None = None
    discovery_max_clicks: int = 10
    # What a source page given up costs, in wasted clicks, where the agent stops by its learned stopping model
    # (it stops where P(reachable) < 1 / (1 + cost)); empty: the cost it was fitted with (2). `eval discovery`
    # reports each cost's precision, recall and clicks on sites without a source page.
    discovery_miss_cost: float | None = Field(default=None, gt=0)
    # Source pages one discovery episode looks for at most: after a find it goes on (the found list's own links
    # left out) while its stopping rule expects another — a site's events and its news; 1 is first-hit stopping.
    discovery_finds: int = Field(default=2, ge=1)
    # A find discovery judged a source page with a P(source page) below this is unsure: the API and the dashboard
    # show it as one to check, for a person's verdict (which then labels it for `retrain classifier`).
    find_sure_at: float = Field(default=FIND_SURE_AT, gt=0, le=1)
    # Domain discovery's local full-text index of every fetched page (SQLite FTS5; written by the worker that
    # owns the sink). Off by default: re-reading and indexing every page costs the pipeline ~40 % of its crawl
    # throughput on 2 cores; turn it on (SOURCEWATCH_PAGE_INDEX_ENABLED=true) for `sourcewatch expand`.
    page_index: Path = HOME / "pages.sqlite"
    page_index_enabled: bool = False
    # A SearXNG instance (its base URL, JSON format enabled) for expand's keyword search past the index.
    searxng_url: str = ""
    # Headless Chromium for the discovery agent's auxiliary task (training only).
    chromium: Path = Path("/usr/bin/chromium")

    # Revisit scheduling. Empty revisit_model means the default model shipped in the package.
    revisit_model: Path | None = None
    revisit_tick_hours: float = 1.0
    # Each watched page's ticks offset by its own phase (from its URL), so revisits come spread over the tick
    # rather than all at its end (agents.revisit.RevisitClock); off: every page on the epoch's grid.
    revisit_spread_ticks: bool = True
    # No watched page goes longer than this without a revisit, whatever the model expects (None: unbounded).
    # 12 h, not 24: an item published at a page's unlikely hour waits for this revisit, and on EPA the 24-h
    # bound left the mean delay above a fixed 2-hour interval's (README, "Cold start").
    revisit_max_interval_hours: float | None = 12.0
    # The operating knob: the timeliness the scheduler aims at across all watched pages — the threshold whose
    # timeliness on the model's validation watches reaches it with the highest friendliness (None: the
    # model's own threshold).
    revisit_target_timeliness: float | None = None
    # Share of ticks a page is probed at whatever the model says, where its rhythm has seen least (exploration).
    revisit_exploration_share: float = 0.02
    # The scheduler's clock: the wall clock by default. A simulated clock (the demo, on the simulated web)
    # reads revisit_clock_origin at the Unix time revisit_clock_origin_wall and runs revisit_clock_speed
    # times as fast as the wall clock.
    revisit_clock_origin: datetime | None = None
    revisit_clock_origin_wall: float | None = None
    revisit_clock_speed: float = 1.0

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get("SOURCEWATCH_CONFIG", "sourcewatch.toml"))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
