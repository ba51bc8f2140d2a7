"""ClickHouse through clickhouse-connect: embedded chDB (`chdb://PATH`) or a server (`http(s)://…`).

Every table is a ReplacingMergeTree ordered by the message's event id (and the
row's position inside the message), read through a view with FINAL of the same
name without `_store`: a redelivered or replayed message replaces its rows
instead of adding to them, so counts never double. `records` aggregates
instead (one row per item of a source page), with the same effect.

Only one process may open a chDB directory. The worker's sink holds it while it
runs and answers `sourcewatch sql` through its web server; otherwise the CLI
opens the directory itself.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import clickhouse_connect

from infra.queries import Query
from infra.settings import Settings

log = logging.getLogger(__name__)

READ_ONLY = {"readonly": 1}

_KEYED = "ENGINE = ReplacingMergeTree ORDER BY {order}"

# The records table keyed by item (migration 13, which creates it twice: under a passing name, then its own).
_RECORD_COLUMNS = ("site, source_url, item_url, title, date, snippet, place, published, event_start, page_url, "
                   "position, first_seen, last_seen")
_RECORDS_BY_ITEM = """CREATE TABLE {name} (
                site LowCardinality(String), source_url String, item_url String, title String,
                date Nullable(DateTime64(3, 'UTC')),
                snippet SimpleAggregateFunction(anyLast, String),
                place SimpleAggregateFunction(anyLast, String) DEFAULT '',
                published SimpleAggregateFunction(anyLast, Nullable(DateTime64(3, 'UTC'))),
                event_start SimpleAggregateFunction(anyLast, Nullable(DateTime64(3, 'UTC'))),
                page_url SimpleAggregateFunction(anyLast, String),
                position SimpleAggregateFunction(anyLast, UInt32),
                first_seen SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
                last_seen SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
            ) ENGINE = AggregatingMergeTree ORDER BY (site, source_url, item_url, title, date)
            SETTINGS allow_nullable_key = 1"""

# (version, statements). Append only: a released migration is never edited.
MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            f"""CREATE TABLE IF NOT EXISTS fetches_store (
                event_id String, site LowCardinality(String), crawl_id String, url String, final_url String,
                depth UInt16, reason LowCardinality(String), status UInt16, error LowCardinality(String),
                error_detail String, not_modified UInt8, content_type LowCardinality(String),
                encoding LowCardinality(String), body_bytes UInt64, truncated UInt8, redirects UInt8,
                attempts UInt8, fetch_ms Float64, fetched_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            f"""CREATE TABLE IF NOT EXISTS links_store (
                event_id String, position UInt32, site LowCardinality(String), crawl_id String, page_url String,
                url String, text String, tag_path String, same_site UInt8, score Nullable(Float32),
                policy LowCardinality(String), depth UInt16, created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="(event_id, position)")}""",
            f"""CREATE TABLE IF NOT EXISTS sources_store (
                event_id String, site LowCardinality(String), crawl_id String, url String,
                kind LowCardinality(String), score Float32, clicks UInt16, created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            f"""CREATE TABLE IF NOT EXISTS records_store (
                event_id String, position UInt32, site LowCardinality(String), page_url String, item_url String,
                title String, date Nullable(DateTime64(3, 'UTC')), snippet String, created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="(event_id, position)")}""",
            f"""CREATE TABLE IF NOT EXISTS changes_store (
                event_id String, position UInt32, site LowCardinality(String), page_url String, item_url String,
                title String, date Nullable(DateTime64(3, 'UTC')), created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="(event_id, position)")}""",
            f"""CREATE TABLE IF NOT EXISTS revisit_decisions_store (
                event_id String, site LowCardinality(String), page_url String, tick_at DateTime64(3, 'UTC'),
                policy LowCardinality(String), fetch UInt8, probability Nullable(Float32),
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            f"""CREATE TABLE IF NOT EXISTS metrics_store (
                event_id String, worker LowCardinality(String), name LowCardinality(String),
                stage LowCardinality(String), value Float64, labels Map(String, String),
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            f"""CREATE TABLE IF NOT EXISTS deadletters_store (
                event_id String, topic LowCardinality(String), partition UInt32, offset UInt64, reason String,
                key String, value String, created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            *[
                f"CREATE VIEW IF NOT EXISTS {name} AS SELECT * FROM {name}_store FINAL"
                for name in ("fetches", "links", "sources", "records", "changes", "revisit_decisions",
                             "metrics", "deadletters")
            ],
        ],
    ),
    (
        2,
        [
            f"""CREATE TABLE IF NOT EXISTS pagination_store (
                event_id String, position UInt32, site LowCardinality(String), crawl_id String, source_url String,
                page_url String, url String, text String, label LowCardinality(String), model LowCardinality(String),
                nodes UInt32, tagging_ms Float32, created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="(event_id, position)")}""",
            "CREATE VIEW IF NOT EXISTS pagination AS SELECT * FROM pagination_store FINAL",
        ],
    ),
    (
        # Records become one row per item of a source page (first and last sight kept however often, and
        # however many times replayed, it is read); new items carry their source and first sight. Nothing
        # wrote the version-1 tables.
        3,
        [
            "DROP VIEW IF EXISTS records",
            "DROP TABLE IF EXISTS records_store",
            "DROP VIEW IF EXISTS changes",
            "DROP TABLE IF EXISTS changes_store",
            """CREATE TABLE records_store (
                site LowCardinality(String), source_url String, item_url String, title String,
                date SimpleAggregateFunction(anyLast, Nullable(DateTime64(3, 'UTC'))),
                snippet SimpleAggregateFunction(anyLast, String),
                page_url SimpleAggregateFunction(anyLast, String),
                position SimpleAggregateFunction(anyLast, UInt32),
                first_seen SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
                last_seen SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
            ) ENGINE = AggregatingMergeTree ORDER BY (site, source_url, item_url, title)""",
            """CREATE VIEW records AS SELECT site, source_url, item_url, title, anyLast(date) AS date,
                anyLast(snippet) AS snippet, anyLast(page_url) AS page_url, anyLast(position) AS position,
                min(first_seen) AS first_seen, max(last_seen) AS last_seen
                FROM records_store GROUP BY site, source_url, item_url, title""",
            f"""CREATE TABLE changes_store (
                event_id String, site LowCardinality(String), crawl_id String, source_url String, page_url String,
                item_url String, title String, date Nullable(DateTime64(3, 'UTC')),
                first_seen DateTime64(3, 'UTC'), created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW changes AS SELECT * FROM changes_store FINAL",
        ],
    ),
    (
        4,
        [
            f"""CREATE TABLE IF NOT EXISTS discovery_episodes_store (
                event_id String, site LowCardinality(String), crawl_id String, homepage String,
                end LowCardinality(String), clicks UInt16, found Array(String), unit_cost Nullable(Float32),
                harvest_rate Float32, policy LowCardinality(String), reason String,
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW IF NOT EXISTS discovery_episodes AS SELECT * FROM discovery_episodes_store FINAL",
        ],
    ),
    (
        # A metric says whether it counts or gauges (Prometheus types them so). A new item keeps the moment it
        # was first stored, however often a replay stores it again: the order the items cursor pages in.
        5,
        [
            "ALTER TABLE metrics_store ADD COLUMN IF NOT EXISTS kind LowCardinality(String) DEFAULT 'count' "
            "AFTER value",
            # A view's columns are fixed when it is created.
            "DROP VIEW IF EXISTS metrics",
            "CREATE VIEW metrics AS SELECT * FROM metrics_store FINAL",
            """CREATE TABLE IF NOT EXISTS item_sequence (
                event_id String, stored_at SimpleAggregateFunction(min, DateTime64(3, 'UTC'))
            ) ENGINE = AggregatingMergeTree ORDER BY event_id""",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS item_sequence_writer TO item_sequence "
            "AS SELECT event_id, ingested_at AS stored_at FROM changes_store",
            "INSERT INTO item_sequence SELECT event_id, min(ingested_at) FROM changes_store GROUP BY event_id",
        ],
    ),
    (
        # Webhooks of watched pages, and every post of a new item to one.
        6,
        [
            f"""CREATE TABLE IF NOT EXISTS webhooks_store (
                event_id String, site LowCardinality(String), source_url String, url String,
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW IF NOT EXISTS webhooks AS SELECT * FROM webhooks_store FINAL",
            f"""CREATE TABLE IF NOT EXISTS webhook_deliveries_store (
                event_id String, site LowCardinality(String), item_event_id String, source_url String, url String,
                state LowCardinality(String), attempts UInt8, status Nullable(UInt16), error String,
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW IF NOT EXISTS webhook_deliveries AS SELECT * FROM webhook_deliveries_store FINAL",
        ],
    ),
    (
        # Watches stopped, and people's verdicts on found source pages.
        7,
        [
            f"""CREATE TABLE IF NOT EXISTS watch_stops_store (
                event_id String, site LowCardinality(String), url String,
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW IF NOT EXISTS watch_stops AS SELECT * FROM watch_stops_store FINAL",
            f"""CREATE TABLE IF NOT EXISTS source_verdicts_store (
                event_id String, site LowCardinality(String), url String, is_source UInt8,
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW IF NOT EXISTS source_verdicts AS SELECT * FROM source_verdicts_store FINAL",
        ],
    ),
    (
        # Domain expansion's rounds: the operator chosen, what it found, the bandit's scores.
        8,
        [
            f"""CREATE TABLE IF NOT EXISTS expansion_rounds_store (
                event_id String, site LowCardinality(String), expansion_id String, round UInt16,
                operator LowCardinality(String), returned UInt32, new_pages Array(String), reward Float32,
                arm_scores Map(String, Float64), seeds Array(String), end String,
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW IF NOT EXISTS expansion_rounds AS SELECT * FROM expansion_rounds_store FINAL",
        ],
    ),
    (
        # The update ticks each read of a watched page placed: one row per update tick.
        9,
        [
            f"""CREATE TABLE IF NOT EXISTS revisit_observed_store (
                event_id String, position UInt32, site LowCardinality(String), page_url String,
                tick_at DateTime64(3, 'UTC'), update_at DateTime64(3, 'UTC'), created_at DateTime64(3, 'UTC'),
                ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="(event_id, position)")}""",
            "CREATE VIEW IF NOT EXISTS revisit_observed AS SELECT * FROM revisit_observed_store FINAL",
        ],
    ),
    (
        # A watch stop says why: a person's request, or a find withdrawn (its first read showed no list).
        10,
        [
            "ALTER TABLE watch_stops_store ADD COLUMN IF NOT EXISTS reason String DEFAULT 'requested' AFTER url",
            "DROP VIEW IF EXISTS watch_stops",
            "CREATE VIEW watch_stops AS SELECT * FROM watch_stops_store FINAL",
        ],
    ),
    (
        # A record says where its event takes place, where its list shows it.
        11,
        [
            "ALTER TABLE records_store ADD COLUMN IF NOT EXISTS place SimpleAggregateFunction(anyLast, String) "
            "DEFAULT '' AFTER snippet",
            "DROP VIEW IF EXISTS records",
            """CREATE VIEW records AS SELECT site, source_url, item_url, title, anyLast(date) AS date,
                anyLast(snippet) AS snippet, anyLast(place) AS place, anyLast(page_url) AS page_url,
                anyLast(position) AS position, min(first_seen) AS first_seen, max(last_seen) AS last_seen
                FROM records_store GROUP BY site, source_url, item_url, title""",
        ],
    ),
    (
        # A record and a new item say when the item was published and when its event begins, where the list
        # tells which date is which (models.records.date_kinds); `date` stays the record's first date.
        12,
        [
            "ALTER TABLE records_store ADD COLUMN IF NOT EXISTS published "
            "SimpleAggregateFunction(anyLast, Nullable(DateTime64(3, 'UTC'))) AFTER place",
            "ALTER TABLE records_store ADD COLUMN IF NOT EXISTS event_start "
            "SimpleAggregateFunction(anyLast, Nullable(DateTime64(3, 'UTC'))) AFTER published",
            "DROP VIEW IF EXISTS records",
            """CREATE VIEW records AS SELECT site, source_url, item_url, title, anyLast(date) AS date,
                anyLast(published) AS published, anyLast(event_start) AS event_start,
                anyLast(snippet) AS snippet, anyLast(place) AS place, anyLast(page_url) AS page_url,
                anyLast(position) AS position, min(first_seen) AS first_seen, max(last_seen) AS last_seen
                FROM records_store GROUP BY site, source_url, item_url, title""",
            "ALTER TABLE changes_store ADD COLUMN IF NOT EXISTS published Nullable(DateTime64(3, 'UTC')) AFTER date",
            "ALTER TABLE changes_store ADD COLUMN IF NOT EXISTS event_start Nullable(DateTime64(3, 'UTC')) "
            "AFTER published",
            "DROP VIEW IF EXISTS changes",
            "CREATE VIEW changes AS SELECT * FROM changes_store FINAL",
        ],
    ),
    (
        # An item is its link, title and date, as the stream tells items apart (models.records.extraction's
        # record_key) and the feeds do: a series' meetings that share a title and a link ("OL Training", one
        # meeting point's map) are one row each, not one row for the series. The rows move to a table keyed
        # so (through a copy: a table's sorting key cannot take a new column).
        13,
        [
            _RECORDS_BY_ITEM.format(name="records_store_13"),
            f"INSERT INTO records_store_13 ({_RECORD_COLUMNS}) SELECT {_RECORD_COLUMNS} FROM records_store",
            "DROP VIEW IF EXISTS records",
            "DROP TABLE records_store",
            _RECORDS_BY_ITEM.format(name="records_store"),
            f"INSERT INTO records_store ({_RECORD_COLUMNS}) SELECT {_RECORD_COLUMNS} FROM records_store_13",
            "DROP TABLE records_store_13",
            """CREATE VIEW records AS SELECT site, source_url, item_url, title, date,
                anyLast(published) AS published, anyLast(event_start) AS event_start,
                anyLast(snippet) AS snippet, anyLast(place) AS place, anyLast(page_url) AS page_url,
                anyLast(position) AS position, min(first_seen) AS first_seen, max(last_seen) AS last_seen
                FROM records_store GROUP BY site, source_url, item_url, title, date""",
        ],
    ),
    (
        # People's verdicts on sites discovery ran on: where the source page is ("" : the site has none).
        14,
        [
            f"""CREATE TABLE IF NOT EXISTS site_verdicts_store (
                event_id String, site LowCardinality(String), homepage String, source_url String,
                created_at DateTime64(3, 'UTC'), ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
            ) {_KEYED.format(order="event_id")}""",
            "CREATE VIEW IF NOT EXISTS site_verdicts AS SELECT * FROM site_verdicts_store FINAL",
        ],
    ),
]


_CREATE = re.compile(r"^\s*CREATE\s+(?:TABLE|VIEW|MATERIALIZED\s+VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)",
                     re.IGNORECASE)
_DROP = re.compile(r"^\s*DROP\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
_ALTER = re.compile(r"^\s*ALTER\s+TABLE\s+(\w+)", re.IGNORECASE)


def current_definitions() -> dict[str, list[str]]:
    """Each table or view the migrations leave behind → the statements that make it as it is now (its latest
    CREATE and the ALTERs after it), in creation order."""
    definitions: dict[str, list[str]] = {}
    for _, statements in MIGRATIONS:
        for statement in statements:
            if created := _CREATE.match(statement):
                definitions.pop(created[1], None)
                definitions[created[1]] = [statement]
            elif dropped := _DROP.match(statement):
                definitions.pop(dropped[1], None)
            elif altered := _ALTER.match(statement):
                definitions[altered[1]].append(statement)
    return definitions


def chdb_path(dsn: str) -> Path | None:
    """The directory of an embedded chDB DSN, or None for a server URL."""
    if not dsn.startswith("chdb://"):
        return None
    return Path(dsn.removeprefix("chdb://"))


class ClickHouse:
    """A clickhouse-connect client with migrations and a one-thread executor for async callers."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        path = chdb_path(dsn)
        if path is not None:
            path.mkdir(parents=True, exist_ok=True)
            self.client = clickhouse_connect.get_client(dsn=f"chdb://{path.absolute()}")
        else:
            parts = urlsplit(dsn)
            if parts.scheme not in ("http", "https"):
                raise ValueError(f"clickhouse_dsn must be chdb://PATH or an http(s) URL, not {dsn!r}")
            self.client = clickhouse_connect.get_client(dsn=dsn)
        # chDB and the HTTP client are used from one thread at a time.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clickhouse")

    @classmethod
    def from_settings(cls, settings: Settings) -> ClickHouse:
        return cls(settings.clickhouse_dsn)

    def migrate(self) -> list[int]:
        """Apply the migrations not yet applied; the versions applied now."""
        self.client.command(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, applied_at DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree ORDER BY version"
        )
        done = {row[0] for row in self.client.query("SELECT version FROM schema_migrations FINAL").result_rows}
        applied = []
        for version, statements in MIGRATIONS:
            if version in done:
                continue
            for statement in statements:
                self.client.command(statement)
            self.client.insert("schema_migrations", [[version]], column_names=["version"])
            applied.append(version)
            log.info("ClickHouse migration %d applied", version)
        self._recreate_missing()
        return applied

    def _recreate_missing(self) -> None:
        """Create again the tables and views of the applied migrations that are gone (dropped by hand, or
        lost), from their latest definition: a sink whose insert failed on a missing table then succeeds."""
        present = {row[0] for row in self.client.query(
            "SELECT name FROM system.tables WHERE database = currentDatabase()").result_rows}
        for name, statements in current_definitions().items():
            if name not in present:
                log.warning("ClickHouse table %s is missing: created again", name)
                for statement in statements:
                    self.client.command(statement)

    def insert(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        columns = list(rows[0])
        self.client.insert(f"{table}_store", [[row[c] for c in columns] for row in rows], column_names=columns)

    async def insert_async(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self.insert, table, rows)

    def query(self, sql: str, parameters: dict[str, Any] | None = None) -> tuple[list[str], list[list[Any]]]:
        """Run one read query. ClickHouse's `readonly` refuses anything else — writes, DDL, settings
        changes and the table functions that reach files, the network or programs (file, url, executable…)
        — so a query from outside can read the tables and nothing more."""
        result = self.client.query(sql, parameters=parameters or None, settings=READ_ONLY)
        return list(result.column_names), [list(row) for row in result.result_rows]

    async def migrate_async(self) -> list[int]:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self.migrate)

    async def query_async(self, sql: str, parameters: dict[str, Any] | None = None) -> tuple[list[str], list[list[Any]]]:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self.query, sql, parameters)

    async def read_async(self, query: Query) -> tuple[list[str], list[list[Any]]]:
        """One of the project's read queries (infra.queries), its parameters bound by ClickHouse."""
        return await self.query_async(query.sql, query.parameters)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self.client.close()
