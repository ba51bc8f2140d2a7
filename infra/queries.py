"""Every read query the project runs on ClickHouse, in one place, with bound parameters.

A query is SQL with ClickHouse's server-side placeholders (`{name:Type}`) and the
values to bind: an id, a URL or a list of URLs never becomes part of the SQL text.
The tables are those `infra.clickhouse` creates (views without `_store`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from infra.settings import FIND_SURE_AT

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


def crawl_fetch_count(crawl_id: str) -> Query:
    return Query("SELECT count() FROM fetches WHERE crawl_id = {crawl:String}", {"crawl": crawl_id})


def crawl_episode_count(crawl_id: str) -> Query:
    return Query("SELECT uniqExact(homepage) FROM discovery_episodes WHERE crawl_id = {crawl:String}",
                 {"crawl": crawl_id})


def crawl_new_item_count(crawl_id: str) -> Query:
    return Query("SELECT count() FROM changes WHERE crawl_id = {crawl:String}", {"crawl": crawl_id})


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


# Sites whose latest discovery episode gave up (stopped, or spent its budget) with no find, on which no source page
# is watched and no person has given a verdict (`POST /api/v1/sites/verdict`): where a person's word is worth
# most — it watches the page they show and teaches the stopping model (`sourcewatch retrain discovery`).
_GAVE_UP = ("SELECT site, argMax(homepage, created_at) AS homepage, argMax(end, created_at) AS end, "
            "argMax(clicks, created_at) AS clicks, argMax(reason, created_at) AS reason, "
            "argMax(length(found), created_at) AS finds, max(created_at) AS ended_at FROM discovery_episodes "
            "WHERE site NOT IN (SELECT site FROM sources) AND site NOT IN (SELECT site FROM site_verdicts) "
            "GROUP BY site HAVING finds = 0 AND end IN ('stop', 'budget')")


def gave_up_page(limit: int, offset: int) -> Query:
    """A page of the sites discovery gave up on (see _GAVE_UP), the latest first."""
    return Query(f"SELECT site, homepage, end, clicks, reason, ended_at FROM ({_GAVE_UP}) ORDER BY ended_at DESC, "
                 "site LIMIT {limit:UInt32} OFFSET {offset:UInt32}", {"limit": limit, "offset": offset})


def gave_up_count() -> Query:
    return Query(f"SELECT count() FROM ({_GAVE_UP})")


def crawl_finds(crawl_id: str) -> Query:
    """The source pages a crawl's discovery found, each with its P(source page)."""
    return Query("SELECT url, max(score) AS score FROM sources WHERE crawl_id = {crawl:String} GROUP BY url "
                 "ORDER BY url", {"crawl": crawl_id})


def crawl_topical_harvest(crawl_id: str) -> Query:
    """A topical crawl's pages judged, those relevant, its sites, those with a relevant page (its metrics)."""
    return Query("SELECT sumIf(value, name = 'topical_pages'), "
                 "sumIf(value, name = 'topical_pages' AND labels['relevant'] = 'yes'), "
                 "sumIf(value, name = 'topical_sites' AND labels['kind'] = 'crawled'), "
                 "sumIf(value, name = 'topical_sites' AND labels['kind'] = 'relevant') "
                 "FROM metrics WHERE stage = 'crawl_topically' AND labels['crawl'] = {crawl:String}",
                 {"crawl": crawl_id})


def expansion_rounds_page(limit: int, offset: int) -> Query:
    """Domain expansions' rounds, the latest expansion first, each in round order."""
    return Query("SELECT r.expansion_id AS expansion_id, round, operator, returned, length(new_pages) AS new, "
                 "new_pages, reward, arm_scores, seeds, end, created_at FROM expansion_rounds AS r "
                 "INNER JOIN (SELECT expansion_id, max(created_at) AS latest FROM expansion_rounds "
                 "GROUP BY expansion_id) AS l ON l.expansion_id = r.expansion_id "
                 "ORDER BY l.latest DESC, expansion_id, round LIMIT {limit:UInt32} OFFSET {offset:UInt32}",
                 {"limit": limit, "offset": offset})


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
    return Query("SELECT item_url, title, date, published, event_start, snippet, place, page_url, first_seen, last_seen "
                 "FROM records "
                 "WHERE source_url = {source:String} ORDER BY first_seen DESC, page_url, position "
                 "LIMIT {limit:UInt32}", {"source": source_url, "limit": limit})


def _last_no_lists(sources: str) -> str:
    """(url, last_no_list) of the source pages whose URL meets `sources` (an SQL condition on labels['source']):
    why each one's last read showed no list ("" where it showed one), from the `list_shown` gauge each read of a
    source page streams (agents.extract_records); no row for a page not read."""
    return ("SELECT labels['source'] AS url, argMax(labels['no_list'], created_at) AS last_no_list FROM metrics "
            f"WHERE stage = 'extract_records' AND name = 'list_shown' AND {sources} GROUP BY url")


def no_list_of_source(source_url: str) -> Query:
    """Why the source page's last read showed no list (models.records.no_list); no row where it was not read."""
    read = _last_no_lists("labels['source'] = {source:String}")
    return Query(f"SELECT last_no_list AS no_list FROM ({read})", {"source": source_url})


def items_of_sources(source_urls: list[str]) -> Query:
    """(source page, item URL) of every record of these source pages."""
    return Query("SELECT source_url, item_url FROM records WHERE source_url IN {sources:Array(String)}",
                 {"sources": source_urls})


def new_items_of_sources(source_urls: list[str]) -> Query:
    """(source page, item URL, when the read that reported it fetched the page, that read's crawl) of every new
    item any read of these source pages reported (a crawl's, or a revisit's)."""
    return Query("SELECT source_url, item_url, first_seen, crawl_id FROM changes "
                 "WHERE source_url IN {sources:Array(String)}", {"sources": source_urls})


def revisit_decisions_of(page_urls: list[str]) -> Query:
    """Each decision on these pages: (page, tick, fetch)."""
    return Query("SELECT page_url, tick_at, fetch FROM revisit_decisions WHERE page_url IN {pages:Array(String)}",
                 {"pages": page_urls})


def revisit_updates_of(page_urls: list[str]) -> Query:
    """The update ticks the reads of these pages placed (the live figures' y_t): (page, update tick)."""
    return Query("SELECT page_url, update_at FROM revisit_observed WHERE page_url IN {pages:Array(String)}",
                 {"pages": page_urls})


def revisit_decision_counts(page_urls: list[str]) -> Query:
    """Ticks decided and revisits made for these pages."""
    return Query("SELECT count(), countIf(fetch) FROM revisit_decisions WHERE page_url IN {pages:Array(String)}",
                 {"pages": page_urls})


def watch_status() -> Query:
    """The latest live figures and learned rhythm of every watched source page, one row per page."""
    columns = ", ".join(f"argMaxIfOrNull(value, created_at, name = '{name}') AS {name}"
                        for name in REVISIT_FIGURES + RHYTHM_FIGURES)
    return Query(f"SELECT labels['source'] AS source, {columns}, "
                 "nullIf(argMaxIfOrNull(labels['peaks'], created_at, name = 'rhythm_peaks'), '') AS peaks, "
                 "max(created_at) AS updated FROM metrics "
                 "WHERE stage = 'revisit' AND labels['source'] != '' GROUP BY source ORDER BY source")


# The service's queries (`sourcewatch serve`). A source's id is its URL's hash, the same wherever it is shown.
_SOURCE_ID = "lower(hex(cityHash64(url)))"
# Of a source page's rows in `sources` grouped by URL (its latest kind, its highest score): found last by
# discovery, and at a P(source page) below {sure_at} every time — a person listing it, or a surer find, settles it.
_UNSURE = "kind = 'discovered' AND score < {sure_at:Float64}"


def _sources(pages: str) -> str:
    """Source pages found or watched, with what has been read of them and their live figures; `pages` is a
    subquery of the URLs to show, which every aggregate is narrowed to first (not the whole tables). A page
    with nothing read has 0 records and new items, and no last times (the service reads the epoch as none); a
    find discovery was unsure of (below `sure_at`) is `unsure`, and `verdict` is a person's latest on it; it
    is watched unless a stop came after it was last found or added (then `stopped_because` says why: a person's
    request, or the revisit stage's reason for withdrawing a find); `no_list` why its last read showed no list
    (models.records.no_list), none where it showed one or was not read."""
    figures = ", ".join(f"argMaxIfOrNull(value, created_at, name = '{name}') AS {name}"
                        for name in REVISIT_FIGURES + ("updates_per_day",))
    return f"""
    WITH page AS ({pages})
    SELECT {_SOURCE_ID} AS id, url, site, kind, score, unsure, verdict, found_at, crawl_id,
           toBool(stopped_at < last_found) AS watching,
           if(stopped_at < last_found, NULL, stop_reason) AS stopped_because, nullIf(last_no_list, '') AS no_list,
           records, last_record_seen, new_items, last_new_item, timeliness, friendliness, delay_h, fetches_per_item,
           updates_per_day, peaks
    FROM (SELECT url, any(site) AS site, argMax(kind, created_at) AS kind, max(score) AS score,
                 toBool({_UNSURE}) AS unsure, min(created_at) AS found_at, max(created_at) AS last_found,
                 argMin(crawl_id, created_at) AS crawl_id
          FROM sources WHERE url IN page GROUP BY url) AS found
    LEFT JOIN (SELECT url, max(created_at) AS stopped_at, argMax(reason, created_at) AS stop_reason FROM watch_stops
               WHERE url IN page GROUP BY url) AS stops USING url
    LEFT JOIN (SELECT url, toNullable(toBool(argMax(is_source, created_at))) AS verdict FROM source_verdicts
               WHERE url IN page GROUP BY url) AS judged USING url
    LEFT JOIN (SELECT source_url AS url, count() AS records, max(last_seen) AS last_record_seen
               FROM records WHERE source_url IN page GROUP BY source_url) AS read USING url
    LEFT JOIN (SELECT source_url AS url, uniqExact(event_id) AS new_items, max(first_seen) AS last_new_item
               FROM changes WHERE source_url IN page GROUP BY source_url) AS new USING url
    LEFT JOIN (SELECT labels['source'] AS url, {figures},
                      nullIf(argMaxIfOrNull(labels['peaks'], created_at, name = 'rhythm_peaks'), '') AS peaks
               FROM metrics WHERE stage = 'revisit' AND labels['source'] IN page GROUP BY url) AS watched USING url
    LEFT JOIN ({_last_no_lists("labels['source'] IN page")}) AS shown USING url
    ORDER BY url"""


def _sources_matching(without_list: bool, to_check: bool) -> str:
    """The condition on `sources` of a listing's search: the URL holds the search words, (`without_list`) the
    page's last read showed no list, and (`to_check`) it is an unsure find no person has judged yet."""
    shown = f" AND url IN (SELECT url FROM ({_last_no_lists('1')}) WHERE last_no_list != '')" if without_list else ""
    unjudged = (" AND url IN (SELECT url FROM (SELECT url, argMax(kind, created_at) AS kind, max(score) AS score "
                f"FROM sources GROUP BY url) WHERE {_UNSURE})"
                " AND url NOT IN (SELECT url FROM source_verdicts)") if to_check else ""
    return "positionCaseInsensitive(url, {search:String}) > 0" + shown + unjudged


def sources_page(search: str, limit: int, offset: int, without_list: bool = False, to_check: bool = False,
                 sure_at: float = FIND_SURE_AT) -> Query:
    """A page of the source pages whose URL contains `search` (and, `without_list`, whose last read showed no
    list; `to_check`, unsure finds without a verdict), by URL."""
    return Query(_sources(f"SELECT url FROM sources WHERE {_sources_matching(without_list, to_check)} "
                          "GROUP BY url ORDER BY url LIMIT {limit:UInt32} OFFSET {offset:UInt32}"),
                 {"search": search, "limit": limit, "offset": offset, "sure_at": sure_at})


def sources_count(search: str, without_list: bool = False, to_check: bool = False,
                  sure_at: float = FIND_SURE_AT) -> Query:
    return Query(f"SELECT uniqExact(url) FROM sources WHERE {_sources_matching(without_list, to_check)}",
                 {"search": search, "sure_at": sure_at})


def source_by_id(source_id: str, sure_at: float = FIND_SURE_AT) -> Query:
    return Query(_sources(f"SELECT url FROM sources WHERE {_SOURCE_ID} = {{id:String}} LIMIT 1"),
                 {"id": source_id, "sure_at": sure_at})


def source_records_page(source_url: str, limit: int, offset: int) -> Query:
    """A source page's current records, newest first sight first."""
    return Query("SELECT item_url, title, date, published, event_start, snippet, place, page_url, first_seen, last_seen "
                 "FROM records "
                 "WHERE source_url = {source:String} ORDER BY first_seen DESC, page_url, position, item_url "
                 "LIMIT {limit:UInt32} OFFSET {offset:UInt32}",
                 {"source": source_url, "limit": limit, "offset": offset})


_ITEMS = """
    SELECT sequence.stored_at AS stored_at, event_id, site, source_url, item_url, title, date, published, event_start,
           first_seen
    FROM (SELECT event_id, min(stored_at) AS stored_at FROM item_sequence GROUP BY event_id
          HAVING stored_at <= now64(3) - toIntervalMillisecond({settle_ms:UInt32})) AS sequence
    INNER JOIN changes USING event_id
"""


def items_after(stored_at: datetime, event_id: str, limit: int, settle_ms: int,
                source_url: str | None = None) -> Query:
    """New items stored after the cursor (stored_at, event_id), in that order; only those stored at least
    `settle_ms` ago (a batch being inserted could still land before a later-read cursor), optionally of one
    source page. The moment is bound as UTC text: parameters travel as JSON to a worker holding chDB."""
    return Query(f"SELECT * FROM ({_ITEMS}) WHERE (stored_at, event_id) > ({{at:DateTime64(3, 'UTC')}}, {{id:String}}) "
                 "AND ({source:String} = '' OR source_url = {source:String}) "
                 "ORDER BY stored_at, event_id LIMIT {limit:UInt32}",
                 {"at": stored_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3], "id": event_id, "limit": limit, "settle_ms": settle_ms,
                  "source": source_url or ""})


def latest_items(limit: int, settle_ms: int, source_url: str | None = None) -> Query:
    """The latest new items (as items_after orders them), oldest of them first."""
    return Query(f"SELECT * FROM (SELECT * FROM ({_ITEMS}) "
                 "WHERE {source:String} = '' OR source_url = {source:String} "
                 "ORDER BY stored_at DESC, event_id DESC LIMIT {limit:UInt32}) ORDER BY stored_at, event_id",
                 {"limit": limit, "settle_ms": settle_ms, "source": source_url or ""})


def metric_totals(per_source: bool = False) -> Query:
    """Every counter's total and every gauge's latest value, per name, stage and labels (Prometheus); the series
    of single watched pages (labelled `source`) only when asked for."""
    where = "" if per_source else "WHERE NOT mapContains(labels, 'source') "
    return Query("SELECT name, stage, kind, labels, if(kind = 'gauge', argMax(value, created_at), sum(value)) AS total "
                 f"FROM metrics {where}GROUP BY name, stage, kind, labels ORDER BY name, stage")


# The dashboard's panels over the last {hours} hours, in {step}-second buckets of the moment rows were stored.
def _since() -> str:
    return "ingested_at >= now64(3) - toIntervalSecond({seconds:UInt32})"


def _bucket() -> str:
    return "toUnixTimestamp(toStartOfInterval(ingested_at, toIntervalSecond({step:UInt32}))) AS t"


def dashboard_panels(seconds: int, step: int) -> dict[str, Query]:
    """Each dashboard panel's query (fixed SQL, bound parameters)."""
    window = {"seconds": seconds, "step": step}
    return {name: Query(sql, window) for name, sql in {
        "fetches": f"SELECT {_bucket()}, count() AS pages, quantile(0.5)(fetch_ms) AS p50_ms, "
                   f"quantile(0.99)(fetch_ms) AS p99_ms FROM fetches WHERE {_since()} GROUP BY t ORDER BY t",
        "errors": f"SELECT if(error = 'none', toString(status), error) AS kind, count() AS n FROM fetches "
                  f"WHERE {_since()} AND (error != 'none' OR status >= 400) GROUP BY kind ORDER BY n DESC",
        "new_items": f"SELECT {_bucket()}, count() AS items FROM changes WHERE {_since()} GROUP BY t ORDER BY t",
        "revisits": f"SELECT {_bucket()}, count() AS decisions, countIf(fetch) AS fetches FROM revisit_decisions "
                    f"WHERE {_since()} GROUP BY t ORDER BY t",
        # A page read without a list is counted by its reason (models.records.no_list), each reason a row, and so
        # is a feed holding such a page's list that was not read (agents.list_feeds).
        "reading": f"SELECT counter AS name, n FROM (SELECT if(labels['reason'] = '', name, "
                   f"concat(name, ': ', labels['reason'])) AS counter, sum(value) AS n FROM metrics WHERE {_since()} "
                   "AND stage IN ('extract_records', 'tag_pagination', 'follow_pagination') AND kind = 'count' "
                   "AND name IN ('pages_read', 'records_extracted', 'new_items', 'pages_tagged', "
                   "'multipage_sources', 'pages_without_records', 'pages_read_as_their_menu', "
                   "'item_pages_requested', 'list_feeds_read', 'list_feeds_unread') GROUP BY counter) ORDER BY name",
        "discovery": f"SELECT end, count() AS episodes, sum(length(found)) AS found, sum(clicks) AS clicks, "
                     f"avg(unit_cost) AS unit_cost FROM discovery_episodes WHERE {_since()} GROUP BY end ORDER BY end",
        "latest_items": f"SELECT first_seen, source_url, item_url, title, date FROM changes WHERE {_since()} "
                        "ORDER BY ingested_at DESC, event_id LIMIT 20",
    }.items()}


def source_figures_history(source_url: str) -> Query:
    """A watched page's live figures as they were streamed, oldest first (its page on the dashboard)."""
    return Query("SELECT toUnixTimestamp(created_at) AS t, name, value FROM metrics WHERE stage = 'revisit' "
                 "AND labels['source'] = {source:String} AND name IN {names:Array(String)} ORDER BY created_at",
                 {"source": source_url, "names": list(REVISIT_FIGURES)})
