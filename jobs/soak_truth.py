"""The soak's figures (jobs.soak runs the soak and counts the ticks decided twice and each process's memory;
the rest is held here against the simulated web's truth, once the groups have drained):

- an item counts as published in the window when it appeared after its page's first read (of its list: a discovery
  episode's look at the page is none) and before the end
  (on a source page never read — one discovery did not find — after the window's start);
- `in_changes`: those with a row in `changes`; `duplicates`: items with more than one row there;
- `missed`, by reason: published after the page's last revisit in the window (not yet due: not a loss; a
  fetch after the window's end, or one whose records the stopping workers never read, counts as none), pushed off the
  listing's first page by newer items (or ones published at the same moment and listed above it) before the
  next revisit (the listing shows page_size items), revisited
  and not found (a loss to explain), or on a page never read (its site's discovery did not find it);
- `watched_lost`: watched pages (seeded, or found by discovery) fallen out of the decision loop: their last
  decided tick more than a tenth of the window behind the latest tick the revisit stage decided for any page,
  and their last decision made (wall clock) more than a tenth of the window before the stage's last one — a
  page still decided at the end is late, not lost (one partition of a saturated worker's ticks may run a day
  behind the others: `decisions_spread_h`, how far the most-behind page's last tick is behind the latest) —
  but for `watched_withdrawn` (finds the revisit stage withdrew, with why: their first read showed no list;
  their items count as missed for that reason); `decisions_behind_h`: how far (simulated hours) that latest
  decided tick is behind the clock at the window's end — the whole stage running late on a saturated machine
  is lateness, not loss, and is reported as such;
- `discovery`: of the sites given to discovery, the source pages found (and watched) against the truth's, and
  the false finds (pages found that are no source page); a source page never found counts its items as missed
  ("page never read");
- `not_new`, by reason: rows of `changes` that were no new item — an item published before its page's first read,
  a row that is no item of the page's list, or one from a page that is no source page — with examples;
- `ticks_decided_twice`: (page, tick) pairs on revisit.decisions more than once (the topic, not the deduplicated
  table), with their decisions as sent (event id, when made);
- latency of a new item's row: from the end of the fetch that saw it — the list's first page's, or the next page's
  a read went on to (real seconds) —, and from its publication (simulated time converted to real seconds at the
  clock's speed: the read-on's hops included);
- politeness, measured at the simulated sites' server: requests in flight per site, the shortest gap between
  two, requests before a Retry-After had passed; memory: each process's resident size late in the run over
  early in it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import numpy as np

from infra.settings import Settings
from infra.sql_owner import read_clickhouse
from schemas.discovery import DISCOVER_REASON
from schemas.sites import site_of


def found_by_discovery(settings: Settings, truth: dict, names: list[str]) -> tuple[dict, list[str]]:
    """The discovery sites' source pages found (rows in `sources`) and watched (a decided tick) against the
    truth, and the pages found that are watched."""
    if not names:
        return {"sites": 0}, []
    sites = {site_of(truth[name]["homepage"]) for name in names}
    _, rows = read_clickhouse(settings, "SELECT DISTINCT url FROM sources")
    found = {url for (url,) in rows if site_of(url) in sites}
    _, decided = read_clickhouse(settings, "SELECT DISTINCT page_url FROM revisit_decisions")
    decided_pages = {url for (url,) in decided}
    true_pages = {source["url"] for name in names for source in truth[name]["source_pages"]}
    return {"sites": len(names), "sites_with_source": sum(bool(truth[name]["source_pages"]) for name in names),
            "source_pages": len(true_pages), "found": len(found & true_pages), "false_finds": sorted(found - true_pages),
            "watched": len(found & true_pages & decided_pages)}, sorted(found & decided_pages)


def politeness(visits: dict[str, dict], concurrency: int, delay_s: float,
               under_way: dict[str, int] | None = None) -> dict:
    """How the crawl treated the simulated sites, measured at their server (infra.simweb `/__visits__`): the
    most requests one site had in flight at once, the shortest gap between two of a site's requests (the
    setting's delay, in real seconds on the sped-up clock; arrivals jitter by a connection's set-up), and
    requests made before a Retry-After had passed; `exceeded`: sites over the concurrency or not waiting. A
    site's requests before a Retry-After are crossings, not impatience, up to the number its crawler reported
    already under way (sent, or past every check of its turn) when it read that site's Retry-Afters
    (`under_way`, by site: the fetchers' `requests_under_way_at_retry_after`) — they were on their way before
    the crawler knew; a site with more than that is exceeded."""
    under_way = under_way or {}
    gaps = [site["min_gap_s"] for site in visits.values() if site["min_gap_s"] is not None]
    crowded = sorted(name for name, site in visits.items() if site["max_in_flight"] > concurrency)
    crossed = {name: min(site["before_retry_after"], under_way.get(name, 0)) for name, site in visits.items()}
    impatient = sorted(name for name, site in visits.items() if site["before_retry_after"] > crossed[name])
    return {"requests": sum(site["requests"] for site in visits.values()),
            "max_in_flight": max((site["max_in_flight"] for site in visits.values()), default=0),
            "allowed_in_flight": concurrency, "min_gap_s": min(gaps, default=None), "delay_s": round(delay_s, 6),
            "before_retry_after": sum(site["before_retry_after"] for site in visits.values()),
            "before_retry_after_under_way": sum(crossed.values()),
            "under_way_at_retry_after": sum(under_way.values()),
            "exceeded": sorted(set(crowded) | set(impatient))}


FETCH_ROW_SLACK = timedelta(milliseconds=50)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class _Tally(Counter):
    """Counts by reason, with the first examples of each."""

    def __init__(self) -> None:
        super().__init__()
        self.examples: dict[str, list[dict]] = defaultdict(list)

    def add(self, reason: str, example: dict) -> None:
        self[reason] += 1
        self.examples[reason].append(example)


def _not_new(truth: dict, changes: dict, first_read: dict[str, datetime]) -> _Tally:
    """Rows of `changes` that told users of no new item: an item published before its page's first read (that
    read seeds what the page shows; what it did not show is old too), a row that is no item of the page's list
    (a list read wrongly: its menu, or dates without links), or a row from a page that is no source page (a
    false find)."""
    items = {source["url"]: {item["url"]: datetime.fromisoformat(item["published_at"]) for item in source["items"]}
             for site in truth.values() for source in site["source_pages"]}
    tally = _Tally()
    for (page, item), (_, seen, _) in changes.items():
        example = {"page": page, "item": item, "seen": seen.isoformat()}
        if page not in items:
            tally.add("on a page that is no source page", example)
        elif item not in items[page]:
            tally.add("no item of the page's list", example)
        elif page in first_read and items[page][item] <= first_read[page]:
            published = items[page][item].isoformat()
            tally.add("published before the page's first read", example | {"published": published})
    return tally


def why_missed(times: list[datetime], read_starts: list[datetime], read_ends: list[datetime], end: datetime,
               page_size: int, tied_above: int = 0) -> tuple[str, datetime | None]:
    """Why an item published at `times[0]` (the items published after it follow) is not in `changes`, given its
    page's reads (their fetches' starts and ends, simulated, in order) and the window's end; and its next read.
    `tied_above`: the items published at the same moment that the list shows above it (the simulated web lists a
    burst's items in their order: the second of four published together sits below the first)."""
    # Only the window's reads: a fetch after its end (as the workers stop) is no read of it.
    following = next((i for i, read in enumerate(read_starts) if times[0] <= read <= end), None)
    if following is None:
        return "published after the page's last read", None
    # The server wrote the page at some moment of that fetch, so the items published until its end may have
    # pushed this one off (a fetch of 20 ms is 15 simulated seconds at 720x): "not found" only where even those
    # leave it on the first page.
    if tied_above + sum(times[0] < later <= read_ends[following] for later in times[1:]) >= page_size:
        return "pushed off the first page before the next read", read_starts[following]
    return "read after its publication, not found", read_starts[following]


def list_reads(fetch_rows, records_last_seen: dict[str, datetime]
               ) -> tuple[dict[str, list[datetime]], dict[str, list[datetime]]]:
    """Each page's reads as a list — their fetches' ends and starts, in order — from the fetch rows (url, end,
    start, reason) and each source's records' last sight.

    A discovery episode's look at a page (reason "discover") is no read of its list: no record is read from it,
    so the items published between it and the list's first read are what that read seeds, not new ones (in
    the 5,000-site soak of 2026-12-05, 114 items were "read after its publication, not found": every example
    it gave and its five pages missed most on were found pages' items published between the episode's fetch
    and the list's first read). A fetch counts as a read once its
    records were read: the processing workers stop at the window's end, and a page they fetched in its last
    seconds may wait in Kafka, its records unread — lateness, not a list read wrongly (and one stopped in the
    middle of a read has sent its new items before its records: agents.extract_records). The stage reads a
    source's fetches in order, so its newest record's last sight is the newest fetch read; a page whose records
    never arrived keeps every fetch (a list never read is a loss)."""
    # A fetch row is timed when its message was made, a moment after the fetch ended (the records' sight).
    read_until = {page: at + FETCH_ROW_SLACK for page, at in records_last_seen.items()}
    fetched: dict[str, list[datetime]] = defaultdict(list)
    started: dict[str, list[datetime]] = defaultdict(list)
    for url, at, start, reason in fetch_rows:
        if reason == DISCOVER_REASON:
            continue
        if url not in read_until or _aware(at) <= read_until[url]:
            fetched[url].append(_aware(at))
            started[url].append(_aware(start))
    return fetched, started


def against_truth(settings: Settings, truth: dict, pages: list[str], origin_sim: datetime, origin_wall: float,
                   speed: float, end_sim: datetime) -> dict:
    def simulated(real: datetime) -> datetime:
        return origin_sim + timedelta(seconds=(_aware(real).timestamp() - origin_wall) * speed)

    # A read's moment is its request's start: the server wrote the page at some moment of the fetch (40 ms is
    # half a simulated minute at 720×), so an item published before the start was on it, one published during
    # it perhaps not. The row's time is the fetch's end.
    _, fetch_rows = read_clickhouse(settings, "SELECT url, fetched_at, fetched_at - toIntervalMillisecond("
                                              "toUInt64(fetch_ms)), reason FROM fetches WHERE status IN (200, 304) "
                                              "ORDER BY fetched_at")
    _, read_rows = read_clickhouse(settings, "SELECT source_url, max(last_seen) FROM records GROUP BY source_url")
    fetched, started = list_reads(fetch_rows, {page: _aware(at) for page, at in read_rows})
    # Per source page: an item may be read on a later page of its list (agents.overflow). An item without a
    # link (a list read wrongly: dates alone) is known by its title.
    _, change_rows = read_clickhouse(settings, "SELECT source_url, if(item_url = '', concat('title:', title), "
                                               "item_url) AS item, count(), min(first_seen), min(ingested_at) "
                                               "FROM changes GROUP BY source_url, item")
    # first_seen: the end of the fetch that saw the item — its list's first page's, or a next page's the read went
    # on to (agents.overflow).
    changes = {(page, item): (count, _aware(seen), _aware(ingested))
               for page, item, count, seen, ingested in change_rows}
    _, decided = read_clickhouse(settings, "SELECT page_url, max(tick_at), max(created_at) FROM revisit_decisions "
                                           "GROUP BY page_url")
    # Finds the revisit stage withdrew (their first read showed no list): not watched on purpose, so not lost.
    _, stops = read_clickhouse(settings, "SELECT url, any(reason) FROM watch_stops WHERE reason != 'requested' "
                                         "GROUP BY url")
    watched = set(pages)
    withdrawn = {url: reason for url, reason in stops if url in watched}
    last_tick = {page: _aware(at) for page, at, _ in decided}
    last_made = {page: _aware(made) for page, _, made in decided}
    decided_until = max(last_tick.values(), default=origin_sim)
    published = in_changes = 0
    missed: Counter[str] = Counter()
    missed_on: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, list[dict]] = defaultdict(list)
    from_fetch, from_publication = [], []
    # The window's quarter (real time) each row's fetch fell in: a watch's start-up (its pages' first reads and
    # their items' pages all at once) is not its steady state.
    quarter_of_fetch: list[int] = []
    window_real_s = (end_sim - origin_sim).total_seconds() / speed
    for site in truth.values():
        for source in site["source_pages"]:
            page, reads = source["url"], fetched.get(source["url"], [])
            if page in withdrawn or not reads:
                # A find withdrawn, or a source page discovery never found: what it published in the window is
                # missed.
                unread = sum(origin_sim < datetime.fromisoformat(item["published_at"]) <= end_sim
                             for item in source["items"])
                published += unread
                missed[f"page withdrawn: {withdrawn[page]}" if page in withdrawn else "page never read"] += unread
                continue
            # Published in the window: after the first read's fetch ended (one published during it may have been
            # on the page, seeded as old). Its next read: the first whose fetch began after its publication.
            first_read = simulated(reads[0])
            reads_sim = [simulated(read) for read in started[page]]
            read_ends_sim = [simulated(read) for read in reads]
            items = sorted(source["items"], key=lambda item: item["published_at"])
            times = [datetime.fromisoformat(item["published_at"]) for item in items]
            for index, (item, at) in enumerate(zip(items, times, strict=True)):
                if not first_read < at <= end_sim:
                    continue
                published += 1
                row = changes.get((page, item["url"]))
                if row is not None:
                    in_changes += 1
                    _, seen, ingested = row
                    from_fetch.append((ingested - seen).total_seconds())
                    into_window = (seen.timestamp() - origin_wall) / window_real_s
                    quarter_of_fetch.append(min(3, max(0, int(into_window * 4))))
                    publication_real = origin_wall + (at - origin_sim).total_seconds() / speed
                    from_publication.append(ingested.timestamp() - publication_real)
                    continue
                # `items` keeps the truth's order among items published at one moment: the list's.
                tied_above = index - bisect_left(times, at)
                reason, next_read = why_missed(times[index:], reads_sim, read_ends_sim, end_sim, source["page_size"],
                                               tied_above)
                missed[reason] += 1
                missed_on[reason][page] += 1
                if len(examples[reason]) < 5:
                    examples[reason].append({"page": page, "item": item["url"], "published": at.isoformat(),
                                             "next_read": next_read.isoformat() if next_read else None})
    duplicates = sum(count > 1 for count, _, _ in changes.values())
    # A row is no new item when the item was published before its page's first fetch began.
    not_new = _not_new(truth, changes, {page: simulated(reads[0]) for page, reads in started.items() if reads})
    in_loop = [page for page in pages if page not in withdrawn]
    lost = len(fallen_out(in_loop, last_tick, last_made, origin_sim, end_sim - origin_sim, speed))
    most_behind = min((last_tick[page] for page in in_loop if page in last_tick), default=decided_until)
    return {"published": published, "in_changes": in_changes, "duplicates": duplicates,
            "not_new": dict(not_new), "not_new_examples": {reason: examples[:5] for reason, examples in
                                                           not_new.examples.items()},
            "missed": dict(missed), "missed_examples": dict(examples),
            "missed_most_on": {reason: dict(pages.most_common(5)) for reason, pages in missed_on.items()}, "watched_lost": lost,
            "watched_withdrawn": withdrawn,
            "decisions_behind_h": round((end_sim - decided_until).total_seconds() / 3600, 1),
            "decisions_spread_h": round((decided_until - most_behind).total_seconds() / 3600, 1),
            "fetches": len(fetch_rows), "row_latency_from_fetch_s": _percentiles(from_fetch),
            "row_latency_from_fetch_by_quarter_s": [
                _percentiles([latency for latency, at in zip(from_fetch, quarter_of_fetch, strict=True) if at == q])
                | {"rows": quarter_of_fetch.count(q)} for q in range(4)],
            "row_latency_from_publication_s": _percentiles(from_publication)}


def fallen_out(pages: list[str], last_tick: dict[str, datetime], last_made: dict[str, datetime],
               origin_sim: datetime, window_sim: timedelta, speed: float) -> list[str]:
    """The pages the decision loop lost: last decided tick over a tenth of the window behind the latest of any
    page, and last decision made over a tenth of the window (real time) before the latest of any page."""
    ticks_until = max(last_tick.values(), default=origin_sim) - window_sim / 10
    latest_made = max(last_made.values(), default=None)
    made_until = latest_made - window_sim / speed / 10 if latest_made is not None else None
    return [page for page in pages
            if last_tick.get(page, origin_sim) < ticks_until
            and (page not in last_made or last_made[page] < made_until)]


def _percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None}
    p50, p99 = np.percentile(values, [50, 99])
    return {"p50": round(float(p50), 2), "p99": round(float(p99), 2)}
