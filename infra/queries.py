"""Every read query the project runs on ClickHouse, in one place, with bound parameters.

A query is SQL with ClickHouse's server-side placeholders (`{name:Type}`) and the
values to bind: an id, a URL or a list of URLs never becomes part of the SQL text.
The tables are those `infra.clickhouse` creates (views without `_store`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The live figures a watched page streams to `metrics` (stage revisit, label source).
REVISIT_FIGURES = ("timeliness", "friendliness", "delay_h", "fetches_per_item")
# Its learned rhythm: update ticks per day expected, the hours it knows; `rhythm_peaks` carries the busiest
# slots in its `peaks` label.
RHYTHM_FIGURES = ("updates_per_day", "known_hours")


@dataclass(frozen=True)
class Query:
    sql: str
    parameters: dict[str, Any] = field(default_factory=dict)


def crawl_fetches_by_status(crawl_id: str) -> Query:
    return Query("SELECT status, error, count() FROM fetches WHERE crawl_id = {crawl:String} "
                 "GROUP BY status, error ORDER BY status", {"crawl": crawl_id})


def crawl_latency(crawl_id: str) -> Query:
    """Fetch time and fetch-to-ClickHouse time, p50 and p99 (ms)."""
    return Query("SELECT quantile(0.5)(fetch_ms), quantile(0.99)(fetch_ms), "
                 "quantile(0.5)(dateDiff('millisecond', fetched_at, ingested_at)), "
                 "quantile(0.99)(dateDiff('millisecond', fetched_at, ingested_at)) "
                 "FROM fetches WHERE crawl_id = {crawl:String}", {"crawl": crawl_id})


def crawl_links(crawl_id: str) -> Query:
    return Query("SELECT count(), uniqExact(url) FROM links WHERE crawl_id = {crawl:String}", {"crawl": crawl_id})


def crawl_pagination(crawl_id: str) -> Query:
    """Listing pages tagged, multi-page sources, pagination links."""
    return Query("SELECT uniqExact(page_url), uniqExactIf(source_url, page_url != source_url), "
                 "countIf(label IN ('PAGE', 'NEXT')) FROM pagination WHERE crawl_id = {crawl:String}",
                 {"crawl": crawl_id})


def crawl_seed_errors(crawl_id: str) -> Query:
    """Each seed that failed: URL, error kind, one detail."""
    return Query("SELECT url, error, any(error_detail) FROM fetches WHERE crawl_id = {crawl:String} AND depth = 0 "
                 "AND error != 'none' GROUP BY url, error ORDER BY url", {"crawl": crawl_id})


def crawl_episodes(crawl_id: str) -> Query:
    return Query("SELECT homepage, end, clicks, found, unit_cost, harvest_rate, reason FROM discovery_episodes "
                 "WHERE crawl_id = {crawl:String} ORDER BY homepage", {"crawl": crawl_id})


def crawl_fetched_urls(crawl_id: str) -> Query:
    """Every URL read in a crawl, as requested and as landed on."""
    return Query("SELECT DISTINCT url FROM fetches WHERE crawl_id = {crawl:String} AND status = 200 UNION DISTINCT "
                 "SELECT DISTINCT final_url FROM fetches WHERE crawl_id = {crawl:String} AND status = 200",
                 {"crawl": crawl_id})


def first_fetches(crawl_id: str, urls: list[str]) -> Query:
    """When each of these URLs was first fetched in a crawl."""
    return Query("SELECT url, min(fetched_at) FROM fetches WHERE crawl_id = {crawl:String} "
                 "AND url IN {urls:Array(String)} GROUP BY url", {"crawl": crawl_id, "urls": urls})


def records_of_source(source_url: str, limit: int) -> Query:
    """A source page's current records, newest first."""
    return Query("SELECT item_url, title, date, snippet, page_url, first_seen, last_seen FROM records "
                 "WHERE source_url = {source:String} ORDER BY first_seen DESC, page_url, position "
                 "LIMIT {limit:UInt32}", {"source": source_url, "limit": limit})


def items_of_sources(source_urls: list[str]) -> Query:
    """(source page, item URL) of every record of these source pages."""
    return Query("SELECT source_url, item_url FROM records WHERE source_url IN {sources:Array(String)}",
                 {"sources": source_urls})


def new_items_of_crawl(crawl_id: str) -> Query:
    """(source page, item URL) of every new item a crawl detected."""
    return Query("SELECT source_url, item_url FROM changes WHERE crawl_id = {crawl:String}", {"crawl": crawl_id})


def revisit_decisions_of(page_urls: list[str]) -> Query:
    """Each decision on these pages: (page, tick, fetch)."""
    return Query("SELECT page_url, tick_at, fetch FROM revisit_decisions WHERE page_url IN {pages:Array(String)}",
                 {"pages": page_urls})


# The sums a watched page's live figures are made of (gauges of stage revisit, label source).
REVISIT_SUMS = ("ticks_watched", "revisits", "new_items", "update_ticks", "timely_ticks", "delay_hours_sum")


def revisit_sums_of(page_urls: list[str]) -> Query:
    """Every value of these pages' live sums as streamed, with when: (page, name, value, created_at)."""
    return Query("SELECT labels['source'] AS page, name, value, created_at FROM metrics WHERE stage = 'revisit' "
                 "AND name IN {names:Array(String)} AND labels['source'] IN {pages:Array(String)} ORDER BY created_at",
                 {"names": list(REVISIT_SUMS), "pages": page_urls})


def revisit_decision_counts(page_urls: list[str]) -> Query:
    """Ticks decided and revisits made for these pages."""
    return Query("SELECT count(), countIf(fetch) FROM revisit_decisions WHERE page_url IN {pages:Array(String)}",
                 {"pages": page_urls})


def watch_status() -> Query:
    """The latest live figures and learned rhythm of every watched source page, one row per page."""
    columns = ", ".join(f"argMaxIfOrNull(value, created_at, name = '{name}') AS {name}"
                        for name in REVISIT_FIGURES + RHYTHM_FIGURES)
    return Query(f"SELECT labels['source'] AS source, {columns}, "
                 "argMaxIfOrNull(labels['peaks'], created_at, name = 'rhythm_peaks') AS peaks, "
                 "max(created_at) AS updated FROM metrics "
                 "WHERE stage = 'revisit' AND labels['source'] != '' GROUP BY source ORDER BY source")
