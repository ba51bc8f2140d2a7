"""`sourcewatch demo`: the main job on embedded defaults, on the simulated web.

Starts the local Kafka (if no other is configured), the simulated web, a worker
with every agent and the chDB sink; seeds the homepages; runs for the given
duration; then measures what the current stages achieved against the simulated
web's ground truth (read here, by the evaluator, never by the crawler) and
streams those figures to ClickHouse beside what the agents streamed.

Stages that do not exist yet are reported as not available (null), never faked.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from infra import queries
from infra.processes import run_to_completion, serve_in_child
from jobs.crawl import CrawlPlan, run_crawl
from models.discovery.episode import Episode, figures

# Per-site page budget of the BFS in the demo: enough to reach source pages 1–4 clicks deep.
DEMO_MAX_PAGES = 300
# Click budget of each discovery episode in the demo: the simulated sources lie 1–4 clicks deep.
DEMO_MAX_CLICKS = 10
# Fixed intervals the model's revisits are compared with on the same ticks.
REFERENCE_INTERVALS = (1, 2, 3, 4, 5, 6)
WEEK_HOURS = 168
# Real seconds between reading the source pages and reading them again for new items (phase 3).
REREAD_AFTER_SECONDS = 10.0


@dataclass(frozen=True)
class DemoPlan:
    sites: int = 20
    seed: int = 1
    duration: float = 120.0
    speed: float = 3600.0
    # Simulated days the reached source pages are watched by the revisit model (phase 4), on a clock sped up
    # to `watch_speed` simulated seconds per real second.
    watch_days: float = 14.0
    watch_speed: float = 7200.0

    @property
    def watch_seconds(self) -> float:
        return self.watch_days * 86400 / self.watch_speed


def evaluate_against_truth(truth: dict, fetched_urls: set[str], pages_fetched: int) -> dict:
    """BFS figures from the truth: source pages reached, harvest rate (source-page fetches / fetches),
    unit cost (fetches per source page reached)."""
    sources = [source for site in truth.values() for source in site["source_pages"]]
    listing_pages = {url for source in sources for url in source["pages"]}
    reached = [source for source in sources if source["url"] in fetched_urls]
    relevant = len(listing_pages & fetched_urls)
    return {
        "source_pages_in_web": len(sources),
        "source_pages_reached": len(reached),
        "harvest_rate": round(relevant / pages_fetched, 4) if pages_fetched else None,
        "unit_cost": round(pages_fetched / len(reached), 2) if reached else None,
    }


def evaluate_discovery(truth: dict, episodes: list[dict], seconds: float) -> dict:
    """Discovery episodes (as ClickHouse holds them) against the truth, with the offline evaluation's own
    figures (models.discovery.episode.figures): a found page counts when it is one of its site's source pages,
    a found page that is not one is a false find."""
    sources = {site["homepage"].rstrip("/"): {s["url"] for s in site["source_pages"]} for site in truth.values()}
    scored = []
    for row in episodes:
        true = sources.get(row["homepage"].rstrip("/"), set())
        scored.append(Episode(site=row["homepage"], negative=not true, clicks=row["clicks"], end=row["end"],
                              reached=[url for url in row["found"] if url in true],
                              false_find=any(url not in true for url in row["found"])))
    result = figures(scored)
    return {"episodes": len(episodes), "source_pages_found": sum(len(e.reached) for e in scored),
            **{key: value for key, value in result.items() if key not in ("sites", "sites_with_source_pages")},
            "episodes_per_minute": round(len(episodes) / seconds * 60, 1) if seconds else None}


def _simulated_clock(control: str) -> dict[str, str]:
    """The environment of a child process whose revisit scheduler runs on the simulated web's clock. Every
    phase from discovery on uses it: discovery adds the pages it finds to the watch list, and a worker on the
    wall clock would decide their ticks months ahead of the simulated ones."""
    clock = _control(control + "/__clock__")
    return os.environ | {"SOURCEWATCH_REVISIT_CLOCK_ORIGIN": clock["now"],
                         "SOURCEWATCH_REVISIT_CLOCK_ORIGIN_WALL": str(time.time()),
                         "SOURCEWATCH_REVISIT_CLOCK_SPEED": str(clock["speed"])}


def _discover_sources(control: str, homepages: list[str], plan: DemoPlan) -> dict:
    """Phase 1b: one discovery episode per homepage through Kafka (`sourcewatch discover`, a child process:
    phase 1's worker ran in this one). The pages it judges source pages go on to phase 2."""
    try:
        return run_to_completion(["discover", *homepages, "--max-clicks", str(DEMO_MAX_CLICKS), "--time-limit",
                                  str(plan.duration)], plan.duration + 180, _simulated_clock(control))
    except RuntimeError as error:
        return {"error": str(error)}


def evaluate_pagination(truth: dict, sources_read: list[str], listing_fetches: set[str], budget: int) -> dict:
    """How much of each read source's list the pagination follower fetched, against the truth: recall over
    the pages it could fetch within its budget, and the share of its fetches that are list pages."""
    lists = {source["url"]: source["pages"] for site in truth.values() for source in site["source_pages"]}
    list_pages = {url for url in sources_read for url in lists[url]}
    reachable = sum(min(len(lists[url]), budget) for url in sources_read)
    found = len(list_pages & listing_fetches)
    return {
        "list_pages_reachable": reachable,
        "list_pages_fetched": found,
        "pagination_recall": round(found / reachable, 4) if reachable else None,
        "pagination_precision": round(found / len(listing_fetches), 4) if listing_fetches else None,
    }


def evaluate_records(truth: dict, sources_read: list[str], records: list[tuple[str, str]], budget: int) -> dict:
    """Records against the truth: precision = records that are items of their source; recall = visible items
    found, over the sources whose whole list lies within the pagination budget (the others' older items are
    out of reach by design)."""
    sources = {source["url"]: source for site in truth.values() for source in site["source_pages"]}
    items = {url: {item["url"] for item in sources[url]["items"]} for url in sources_read}
    correct = sum(1 for source, item in records if item in items.get(source, ()))
    whole = [url for url in sources_read if len(sources[url]["pages"]) <= budget]
    visible = {(url, item["url"]) for url in whole for item in sources[url]["items"] if item["visible"]}
    found = len(visible & set(records))
    return {
        "records": len(records),
        "record_precision": round(correct / len(records), 4) if records else None,
        "record_recall": round(found / len(visible), 4) if visible else None,
        "record_recall_sources": len(whole),
    }


def evaluate_new_items(truth: dict, detected: list[tuple[str, str]],
                       reads: dict[str, tuple[datetime, datetime]]) -> dict:
    """New items found by the re-read against the truth. `reads`: source page → the simulated times of its
    fetch in the first read and in the re-read; an item is due when it was published between the two.
    Precision = detected items that were due; recall = due items detected."""
    sources = {source["url"]: source for site in truth.values() for source in site["source_pages"]}
    due = {(url, item["url"]) for url, (first, second) in reads.items() for item in sources[url]["items"]
           if first < datetime.fromisoformat(item["published_at"]) <= second}
    caught = due & set(detected)
    return {
        "new_items_caught": len(detected),
        "new_item_precision": round(len(caught) / len(detected), 4) if detected else None,
        "new_items_due": len(due),
        "new_item_recall": round(len(caught) / len(due), 4) if due else None,
    }


def evaluate_revisits(truth: dict, decisions: list[tuple[str, datetime, bool]], tick_hours: float,
                      start: datetime | None = None, weeks: int = 0) -> dict:
    """The revisits against the truth, as DESIGN.md defines the figures, over each source's decided ticks:
    y_t = an item was published in the tick, c_t = the model fetched at its end; beside them the fixed
    intervals RC(k) on the same ticks. With `start`, also per week since then, for `weeks` weeks (`weeks`: one
    entry per week, each with the same figures over that week's ticks; the last may be partial)."""
    from models.revisit.data import SourceSeries
    from models.revisit.evaluation import summarize, window_counts
    from models.revisit.policies import rc

    published = {source["url"]: [datetime.fromisoformat(item["published_at"]) for item in source["items"]]
                 for site in truth.values() for source in site["source_pages"]}
    by_source: dict[str, list[tuple[datetime, bool]]] = {}
    for url, tick_at, fetch in decisions:
        by_source.setdefault(url, []).append((tick_at.replace(tzinfo=UTC), bool(fetch)))
    names = ["model", *(f"rc_{k}" for k in REFERENCE_INTERVALS)]
    periods: dict[int | None, dict[str, list]] = {}
    tick = timedelta(hours=tick_hours)
    week_ticks = round(WEEK_HOURS / tick_hours)
    for url, decided in by_source.items():
        decided.sort()
        origin = decided[0][0] - tick
        ticks = round((decided[-1][0] - origin) / tick)
        hours = [(moment - origin).total_seconds() / 3600 for moment in published.get(url, ())]
        hours = np.array(sorted(h for h in hours if 0 < h <= ticks * tick_hours))
        counts = np.bincount(np.ceil(hours / tick_hours - 1e-9).astype(int), minlength=ticks + 1)[:ticks + 1]
        series = SourceSeries(url, origin, tick_hours, counts, hours, ticks + 1, 1)
        fetch = np.zeros(ticks, dtype=bool)
        for moment, fetched in decided:
            fetch[round((moment - origin) / tick) - 1] |= fetched
        spans: list[tuple[int | None, int, int]] = [(None, 1, ticks + 1)]
        if start is not None:
            # Week w holds the ticks ending in (start + w weeks, start + w + 1 weeks].
            offset = round((start.replace(tzinfo=UTC) - origin) / tick)
            for week in range(min(weeks, max(0, -(-(ticks - offset) // week_ticks)))):
                a, b = max(1, offset + week * week_ticks + 1), min(ticks + 1, offset + (week + 1) * week_ticks + 1)
                if a < b:
                    spans.append((week, a, b))
        for period, a, b in spans:
            rows = periods.setdefault(period, {name: [] for name in names})
            rows["model"].append(window_counts(series, a, b, fetch[a - 1:b - 1]))
            for k in REFERENCE_INTERVALS:
                rows[f"rc_{k}"].append(window_counts(series, a, b, rc(b - a, k)))
    whole = periods.pop(None, {name: [] for name in names})
    result = {name: summarize(counts) for name, counts in whole.items() if counts} | {
        "sources": len(by_source), "items_published": int(sum(c[5] for c in whole["model"]))}
    if start is not None:
        result["weeks"] = [{name: summarize(counts) for name, counts in periods[week].items()}
                           | {"items_published": int(sum(c[5] for c in periods[week]["model"]))}
                           for week in sorted(periods)]
    return result


def live_weeks(sums: list[tuple[str, str, float, datetime]], weeks: int, tick_hours: float) -> list[dict]:
    """The live estimates per week from the sums each page streamed (page, name, value, at): a page's week is
    the difference of its last sums streamed within the week and those streamed within the weeks before it,
    placed by the page's own clock (`ticks_watched` in the same flush); macro over the pages, as the truth's
    figures are."""
    from models.revisit.evaluation import round4

    flushes: dict[tuple[str, datetime], dict[str, float]] = {}
    for page, name, value, created in sums:
        flushes.setdefault((page, created), {})[name] = value
    by_page: dict[str, list[dict[str, float]]] = {}
    for (page, _), values in sorted(flushes.items(), key=lambda item: item[0][1]):
        if "ticks_watched" in values:
            by_page.setdefault(page, []).append(values)
    week_ticks = round(WEEK_HOURS / tick_hours)

    def until(snapshots: list[dict[str, float]], ticks: int) -> dict[str, float]:
        within = [values for values in snapshots if values["ticks_watched"] <= ticks]
        return within[-1] if within else {}

    result = []
    for week in range(weeks):
        timeliness, friendliness = [], []
        for snapshots in by_page.values():
            then, now = until(snapshots, week * week_ticks), until(snapshots, (week + 1) * week_ticks)
            delta = {name: now.get(name, 0.0) - then.get(name, 0.0) for name in queries.REVISIT_SUMS}
            updates, timely, fetches = delta["update_ticks"], delta["timely_ticks"], delta["revisits"]
            quiet = delta["ticks_watched"] - updates
            if updates > 0:
                timeliness.append(timely / updates)
            if quiet > 0:
                friendliness.append(max(quiet - (fetches - timely), 0) / quiet)
        result.append({"timeliness": round4(statistics.fmean(timeliness)) if timeliness else None,
                       "friendliness": round4(statistics.fmean(friendliness)) if friendliness else None})
    return result


def _watch_sources(control: str, reached: list[str], plan: DemoPlan) -> dict:
    """Phase 4: the revisit model watches the source pages on the simulated web's clock, sped up to
    `plan.watch_speed`, for `plan.watch_days` (a worker in a child process), from cold start: each page's
    first read is all it knows. Its decisions are then scored against the truth, for the whole watch and per
    week, and its live estimates (streamed to ClickHouse as it ran, from what the revisits found) are shown
    beside them."""
    request = urllib.request.Request(control + "/__clock__", data=json.dumps({"speed": plan.watch_speed}).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=60).close()
    try:
        watched = run_to_completion(["watch", *reached, "--run", str(plan.watch_seconds)], plan.watch_seconds + 180,
                                    _simulated_clock(control))
    except RuntimeError as error:
        return {"error": str(error)}
    from infra.settings import get_settings
    from infra.sql_owner import read_clickhouse
    from models.revisit.evaluation import round4

    settings = get_settings()
    _, rows = read_clickhouse(settings, queries.revisit_decisions_of(reached))
    decisions = [(url, _instant(at), fetch) for url, at, fetch in rows]
    if not decisions:
        return {"error": "the worker decided no tick of the watched pages"}
    # The watch began with the first tick decided (the worker takes a while to start): the truth's weeks count
    # from there, as each page's live sums count from its watch's start.
    started = min(at for _, at, _ in decisions) - timedelta(hours=settings.revisit_tick_hours)
    live = {name: statistics.fmean(values) if (values := [row[name] for row in watched["sources"]
                                                          if row[name] is not None]) else None
            for name in ("timeliness", "friendliness", "delay_h", "fetches_per_item")}
    against_truth = evaluate_revisits(_control(control + "/__truth__"), decisions, settings.revisit_tick_hours,
                                      started, math.ceil(plan.watch_days / 7))
    _, sums = read_clickhouse(settings, queries.revisit_sums_of(reached))
    live_by_week = live_weeks([(page, name, value, _instant(at)) for page, name, value, at in sums],
                              len(against_truth.get("weeks", [])), settings.revisit_tick_hours)
    weeks = [{"week": index + 1, "model": week["model"], "live": live_week,
              **{f"rc_{k}": week[f"rc_{k}"] for k in REFERENCE_INTERVALS}, "items_published": week["items_published"]}
             for index, (week, live_week) in enumerate(zip(against_truth.pop("weeks", []), live_by_week))]
    # Counted from ClickHouse after the worker stopped: it may decide a few more ticks while stopping.
    return {"watched": len(reached), "decisions": len(decisions), "revisits": sum(bool(f) for *_, f in decisions),
            "simulated_hours": round((max(at for _, at, _ in decisions) - started) / timedelta(hours=1), 1),
            "live_estimate": {name: round4(value) for name, value in live.items()},
            "against_truth": against_truth, "weeks": weeks}


def _instant(value) -> datetime:
    """A time as ClickHouse returns it (a naive UTC datetime, or its text), aware."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _write_metrics(figures: dict, crawl_id: str) -> None:
    from agents.sink_rows import rows_for
    from infra.clickhouse import ClickHouse
    from infra.settings import get_settings
    from schemas.metrics import Metric

    messages = [Metric(site="demo", name=name, value=float(value), stage="evaluate",
                       labels={"crawl_id": crawl_id, "policy": "bfs"})
                for name, value in figures.items() if value is not None]
    clickhouse = ClickHouse.from_settings(get_settings())
    try:
        table, rows = rows_for("metrics", messages)
        clickhouse.insert(table, rows)
    finally:
        clickhouse.close()


def _fetched_urls(crawl_id: str) -> set[str]:
    from infra.settings import get_settings
    from infra.sql_owner import read_clickhouse

    _, rows = read_clickhouse(get_settings(), queries.crawl_fetched_urls(crawl_id))
    return {row[0] for row in rows}


def _control(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def _fetch_times(control: str, crawl_id: str, urls: list[str]) -> dict[str, datetime]:
    """When each URL was first fetched in a crawl, on the simulated web's clock."""
    clock = _control(control + "/__clock__")
    real_now, simulated_now = datetime.now(UTC), datetime.fromisoformat(clock["now"])
    fetched = _pairs(queries.first_fetches(crawl_id, urls))
    return {url: simulated_now - (real_now - at.replace(tzinfo=UTC)) * clock["speed"] for url, at in fetched}


def _pairs(query: queries.Query) -> list[tuple[str, str]]:
    from infra.settings import get_settings
    from infra.sql_owner import read_clickhouse

    _, rows = read_clickhouse(get_settings(), query)
    return [(row[0], row[1]) for row in rows]


def _read_sources(control: str, found: list[str], plan: DemoPlan) -> dict:
    """Phase 2: read the source pages discovery found — pagination followed and records extracted through
    Kafka (a crawl of its own, in a child process). Phase 3: read them again a little later and score the new
    items the pipeline reports on changes.detected against the items published between the two fetches of
    each source page. The figures are scored over the found pages that are source pages in the truth (the
    false finds are counted by the discovery figures)."""
    from infra.settings import get_settings

    truth = _control(control + "/__truth__")
    true_sources = {source["url"] for site in truth.values() for source in site["source_pages"]}
    reached = [url for url in found if url in true_sources]
    selection = "found by discovery (the RL agent and the classifier), scored over the true source pages"
    if not reached:
        return {"source_selection": selection, "sources_read": 0}
    read = ["crawl", "--sources", "--time-limit", str(plan.duration), "--seeds", *reached]
    budget = get_settings().pagination_max_pages
    try:
        crawl = run_to_completion(read, plan.duration + 120, _simulated_clock(control))
        records = _pairs(queries.items_of_sources(reached))
        time.sleep(REREAD_AFTER_SECONDS)
        again = run_to_completion(read, plan.duration + 120, _simulated_clock(control))
    except RuntimeError as error:
        return {"source_selection": selection, "sources_read": len(reached), "error": str(error)}
    detected = _pairs(queries.new_items_of_crawl(again["crawl_id"]))
    first, second = (_fetch_times(control, c["crawl_id"], reached) for c in (crawl, again))
    reads = {url: (first[url], second[url]) for url in reached if url in first and url in second}
    revisits = _watch_sources(control, reached, plan) if plan.watch_days > 0 else None
    return {
        "source_selection": selection, "sources_read": len(reached), "sources": reached, "crawl_id": crawl["crawl_id"],
        "pages_fetched": crawl["pages_fetched"], "pages_tagged": crawl["pages_tagged"],
        "multipage_sources": crawl["multipage_sources"],
        **evaluate_pagination(truth, reached, _fetched_urls(crawl["crawl_id"]), budget),
        "records": evaluate_records(truth, reached, records, budget) | {"records_read": crawl["records_read"]},
        "reread": {"crawl_id": again["crawl_id"], "pages_fetched": again["pages_fetched"],
                   "simulated_hours_between_reads": round(statistics.fmean(
                       (b - a).total_seconds() / 3600 for a, b in reads.values()), 2) if reads else None,
                   **evaluate_new_items(_control(control + "/__truth__"), detected, reads)},
        "revisits": revisits,
    }


def run_demo(plan: DemoPlan, show_progress: bool = True) -> dict:
    from infra.kafka_broker import ensure_local_broker
    from infra.settings import get_settings

    ensure_local_broker(get_settings())
    argv = ["simweb", "--sites", str(plan.sites), "--seed", str(plan.seed), "--speed", str(plan.speed)]
    with serve_in_child(argv) as served:
        homepages = list(served["sites"].values())
        code, crawl = run_crawl(CrawlPlan(homepages, DEMO_MAX_PAGES, 50, plan.duration), show_progress)
        truth = _control(served["control"] + "/__truth__")
        if not crawl:
            return {"sites": plan.sites, "error": f"the crawl stopped before its summary (exit {code}: interrupted "
                                                  "or failed); what it fetched is in ClickHouse"}
        fetched = _fetched_urls(crawl["crawl_id"])
        discovery = _discover_sources(served["control"], homepages, plan)
        found = [url for episode in discovery.get("episodes", []) for url in episode["found"]]
        reading = _read_sources(served["control"], found, plan)
    figures = evaluate_against_truth(truth, fetched, crawl["pages_fetched"])
    discovered = (evaluate_discovery(truth, discovery["episodes"], discovery["seconds"])
                  | {"crawl_id": discovery["crawl_id"], "pages_fetched": discovery["pages_fetched"]}
                  if "episodes" in discovery else {"error": discovery.get("error", "no episodes")})
    records, new_items = reading.get("records", {}), reading.get("reread", {})
    revisits = (reading.get("revisits") or {}).get("against_truth", {}).get("model", {})
    _write_metrics({**{k: figures[k] for k in ("harvest_rate", "unit_cost", "source_pages_reached")},
                    **{f"discovery_{k}": discovered.get(k) for k in ("precision", "recall", "unit_cost",
                                                                     "source_pages_found", "false_finds")},
                    **{k: reading.get(k) for k in ("pagination_recall", "pagination_precision")},
                    **{k: records.get(k) for k in ("record_precision", "record_recall")},
                    **{k: new_items.get(k) for k in ("new_items_caught", "new_item_precision", "new_item_recall")},
                    **{f"revisit_{k}": revisits.get(k) for k in ("timeliness", "friendliness", "delay_h")}},
                   crawl["crawl_id"])
    return {
        "sites": plan.sites,
        "crawl_id": crawl["crawl_id"],
        "seconds": crawl["seconds"],
        "pages_fetched": crawl["pages_fetched"],
        "pages_per_s": crawl["pages_per_s"],
        "errors": crawl["errors"],
        "links_found": crawl["links_found"],
        "source_pages_found": discovered.get("source_pages_found"),
        "discovery": discovered,
        "records": records.get("records"),
        "new_items_caught": new_items.get("new_items_caught"),
        "revisits": {key: (reading.get("revisits") or {}).get(key) for key in ("revisits", "decisions", "weeks")},
        "metrics": {
            "timeliness": revisits.get("timeliness"),
            "friendliness": revisits.get("friendliness"),
            "harvest_rate": figures["harvest_rate"],
            "unit_cost": figures["unit_cost"],
        },
        "bfs_source_pages_reached": figures["source_pages_reached"],
        "source_pages_in_web": figures["source_pages_in_web"],
        "fetch_to_clickhouse_ms_p50": crawl["fetch_to_clickhouse_ms_p50"],
        "reading": reading,
    }


def print_summary(summary: dict) -> None:
    if "error" in summary:
        print(f"demo failed: {summary['error']}")
        return
    metrics = summary["metrics"]
    lines = [
        f"sourcewatch demo — {summary['sites']} simulated sites, {summary['seconds']} s",
        f"  pages fetched        {summary['pages_fetched']} ({summary['pages_per_s']} pages/s), "
        f"{summary['links_found']} links, errors {summary['errors'] or 'none'}",
        f"  source pages reached {summary['bfs_source_pages_reached']} of {summary['source_pages_in_web']} "
        "(by the BFS crawler, measured against the simulated web's truth)",
        f"  harvest rate         {metrics['harvest_rate']}",
        f"  unit cost            {metrics['unit_cost']} fetches per source page reached",
    ]
    discovery = summary["discovery"]
    if "error" in discovery:
        lines.append(f"  discovery            failed: {discovery['error']}")
    else:
        lines.append(
            f"  discovery            {discovery['source_pages_found']} source pages found in {discovery['episodes']} "
            f"episodes (precision {discovery['precision']}, recall {discovery['recall']}, unit cost "
            f"{discovery['unit_cost']}, {discovery['clicks_on_negative_sites']} clicks on sites without one, "
            f"{discovery['false_finds']} false finds; {discovery['episodes_per_minute']} episodes/min)")
    reading = summary["reading"]
    if "error" in reading:
        lines.append(f"  pagination           reading the source pages failed: {reading['error']}")
    elif reading.get("crawl_id"):
        lines.append(
            f"  pagination           {reading['sources_read']} source pages read ({reading['source_selection']}): "
            f"{reading['multipage_sources']} multi-page, {reading['list_pages_fetched']} of "
            f"{reading['list_pages_reachable']} list pages within budget fetched "
            f"(recall {reading['pagination_recall']}, precision {reading['pagination_precision']})")
        records, reread = reading["records"], reading["reread"]
        lines.append(
            f"  records              {records['records']} items of {reading['sources_read']} source pages in ClickHouse "
            f"(precision {records['record_precision']}, recall {records['record_recall']} over the "
            f"{records['record_recall_sources']} lists within the page budget)")
        lines.append(
            f"  new items            {reread['new_items_caught']} on changes.detected when re-read "
            f"{reread['simulated_hours_between_reads']} simulated hours later (precision "
            f"{reread['new_item_precision']}, recall {reread['new_item_recall']} of the {reread['new_items_due']} "
            "published between the two reads)")
        lines.extend(_revisit_lines(reading.get("revisits")))
    lines.append(f"  crawl {summary['crawl_id']}: query it with `sourcewatch sql \"SELECT … FROM fetches\"`")
    print("\n".join(lines))


def _revisit_lines(revisits: dict | None) -> list[str]:
    if not revisits:
        return []
    if "error" in revisits:
        return [f"  revisits             watching the source pages failed: {revisits['error']}"]
    truth = revisits["against_truth"]

    def figures(name: str) -> str:
        f = truth.get(name) or {}
        return ", ".join(f"{key} {f[key]:.3f}" if f.get(key) is not None else f"{key} –"
                         for key in ("timeliness", "friendliness", "delay_h", "fetches_per_item"))

    live = revisits["live_estimate"]
    return [
        f"  revisits             {revisits['watched']} source pages watched {revisits['simulated_hours']} simulated "
        f"hours by the model: {revisits['decisions']} decisions, {revisits['revisits']} revisits, "
        f"{truth.get('items_published', 0)} items published",
        f"    model (truth)      {figures('model')}",
        *(f"    {name.replace('_', '(') + ')':<18} {figures(name)}" for name in truth
          if name.startswith("rc_")),
        "    model (live)       " + ", ".join(f"{key} {value:.3f}" if value is not None else f"{key} –"
                                             for key, value in live.items()),
        *(line for week in revisits.get("weeks", []) for line in _week_lines(week)),
    ]


def _week_lines(week: dict) -> list[str]:
    def pair(figures: dict | None) -> str:
        figures = figures or {}
        return "/".join(f"{figures[key]:.3f}" if figures.get(key) is not None else "–"
                        for key in ("timeliness", "friendliness"))

    rc = "  ".join(f"RC({k}) {pair(week.get(f'rc_{k}'))}" for k in REFERENCE_INTERVALS)
    return [f"    week {week['week']} ({week['items_published']} items), timeliness/friendliness: model "
            f"{pair(week['model'])} (live estimate {pair(week['live'])})",
            f"      {rc}"]
