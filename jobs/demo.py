"""`sourcewatch demo`: the main job on embedded defaults, on the simulated web.

Starts the local Kafka (if no other is configured), the simulated web, a worker
with every agent and the chDB sink; seeds the homepages; runs for the given
duration; then measures what the current stages achieved against the simulated
web's ground truth (read here, by the evaluator, never by the crawler) and
streams those figures to ClickHouse beside what the agents streamed.

Stages that do not exist yet are reported as not available (null), never faked.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

from infra import queries
from infra.processes import run_to_completion, serve_in_child
from jobs.crawl import CrawlPlan, run_crawl
from jobs.demo_revisits import revisit_lines, watch_sources
from jobs.simweb_control import control_json, simulated_clock_env
from models.discovery.episode import Episode, figures

# Per-site page budget of the BFS in the demo: enough to reach source pages 1–4 clicks deep.
DEMO_MAX_PAGES = 300
# Click budget of each discovery episode in the demo: the simulated sources lie 1–4 clicks deep.
DEMO_MAX_CLICKS = 10
# Real seconds between reading the source pages and reading them again for new items (phase 3).
REREAD_AFTER_SECONDS = 10.0
# Missed new items the demo's figures name, with why.
MISSED_EXAMPLES = 10


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
                              false_find=any(url not in true for url in row["found"]), source_pages=len(true)))
    result = figures(scored)
    return {"episodes": len(episodes), "source_pages_found": sum(len(e.reached) for e in scored),
            # Every page found, the false finds' too (an episode may find a site's events and its news).
            "pages_found": len({url for row in episodes for url in row["found"]}),
            **{key: value for key, value in result.items() if key not in ("sites", "sites_with_source_pages")},
            "episodes_per_minute": round(len(episodes) / seconds * 60, 1) if seconds else None}


def _discover_sources(control: str, homepages: list[str], plan: DemoPlan) -> dict:
    """Phase 1b: one discovery episode per homepage through Kafka (`sourcewatch discover`, a child process:
    phase 1's worker ran in this one). The pages it judges source pages go on to phase 2."""
    try:
        return run_to_completion(["discover", *homepages, "--max-clicks", str(DEMO_MAX_CLICKS), "--time-limit",
                                  str(plan.duration)], plan.duration + 180, simulated_clock_env(control))
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


def reported_between(reported: dict[tuple[str, str], tuple[datetime, str]], first_crawl: str,
                     first_read: dict[str, datetime], reread: dict[str, datetime], reread_crawl: str
                     ) -> list[tuple[str, str]]:
    """The new items any read reported between a source page's two reads: `reported` as `_reported` gives it,
    `first_read` and `reread` each page's fetch time in the two reads' crawls (`first_crawl`, `reread_crawl`).
    The revisit stage watches these pages from discovery on, so a revisit in between reports some of them before
    the re-read does (each item once, by the first). "Between" by the time of the fetch that reported it: after
    the first read's fetch of the page, and no later than the re-read's — a revisit after it, while the re-read's
    crawl still runs, reports items published after the window the truth is scored over — unless the re-read
    itself reported it (from a further page of the list, fetched after the page itself). What the first read's
    crawl reported belongs to the first read (`first_read_later` below): its further pages show the items new
    since the reads before it, published before the window as well as in it."""
    return [pair for pair, (seen, crawl_id) in reported.items()
            if crawl_id != first_crawl and pair[0] in first_read and pair[0] in reread and seen > first_read[pair[0]]
            and (crawl_id == reread_crawl or seen <= reread[pair[0]])]


def first_read_later(reported: dict[tuple[str, str], tuple[datetime, str]], first_crawl: str,
                     first_read: dict[str, datetime]) -> set[tuple[str, str]]:
    """The new items the first read's own further pages reported, fetched after its first page (seconds:
    simulated hours): among them items published after that page's serve — a burst pushes its older part
    down — which were caught in time."""
    return {pair for pair, (seen, crawl_id) in reported.items()
            if crawl_id == first_crawl and pair[0] in first_read and seen > first_read[pair[0]]}


def evaluate_new_items(truth: dict, detected: list[tuple[str, str]], reads: dict[str, tuple[datetime, datetime]],
                       reported: set[tuple[str, str]] = frozenset(), read: set[tuple[str, str]] = frozenset(),
                       first_read_further: set[tuple[str, str]] = frozenset()) -> dict:
    """New items found by the re-read against the truth. `reads`: source page → the simulated times of its
    fetch in the first read and in the re-read; an item is due when it was published between the two.
    Precision = detected items that were due; recall = due items detected, or reported by the first read's own
    further pages (`first_read_further`, as `first_read_later` gives them: in time, but the first read's, so
    outside precision — the same pages also report items new since the reads before it, published before the
    window). Each due item missed, by why: reported, but not as new between the two reads (`reported` holds
    every item any read reported); read (`read`: the sources' records after the re-read) but never reported —
    seeded as known; or never read."""
    sources = {source["url"]: source for site in truth.values() for source in site["source_pages"]}
    due = {(url, item["url"]): item["published_at"] for url, (first, second) in reads.items()
           for item in sources[url]["items"] if first < datetime.fromisoformat(item["published_at"]) <= second}
    caught = due.keys() & set(detected)
    in_time = caught | (due.keys() & first_read_further)
    missed = sorted(due.keys() - in_time)
    wrong = sorted(set(detected) - caught)
    published = {(url, item["url"]): item["published_at"] for url in reads for item in sources[url]["items"]}
    why = {pair: "reported, not between the reads" if pair in reported else
           "read, never reported" if pair in read else "never read" for pair in missed}
    return {
        "new_items_caught": len(detected),
        "new_item_precision": round(len(caught) / len(detected), 4) if detected else None,
        "new_items_due": len(due),
        "new_item_recall": round(len(in_time) / len(due), 4) if due else None,
        "due_reported_by_the_first_read": len(in_time - caught),
        "missed": dict(Counter(why.values())),
        "missed_examples": [{"source": source, "item": item, "published_at": due[(source, item)],
                             "why": why[(source, item)]} for source, item in missed[:MISSED_EXAMPLES]],
        # Reported as new between the reads but not published between them (or not an item of the page at all:
        # published_at None), beside the page's two reads.
        "wrong_examples": [{"source": source, "item": item, "published_at": published.get((source, item)),
                            "reads": [moment.isoformat() for moment in reads.get(source, ())]}
                           for source, item in wrong[:MISSED_EXAMPLES]],
    }


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


def _fetch_times(control: str, crawl_id: str, urls: list[str]) -> dict[str, datetime]:
    """When the simulated web served each URL to its first fetch in a crawl, on its clock: the server's last
    serve of the page before the fetch's stamp. (The stamp itself is late by however long a loaded worker took
    to read the answer — at speed 3600 a second is a simulated hour, in which an item published after the serve
    would count as published before the read.) A page whose serve the server no longer remembers is left out."""
    served = control_json(control + "/__served__")
    times = {}
    for url, at in _pairs(queries.first_fetches(crawl_id, urls)):
        # ClickHouse keeps the stamp to the millisecond (cut, not rounded).
        stamp = at.replace(tzinfo=UTC).timestamp() + 0.001
        before = [simulated for epoch, simulated in served.get(url, ()) if epoch <= stamp]
        if before:
            times[url] = datetime.fromisoformat(before[-1])
    return times


def _rows(query: queries.Query) -> list[list]:
    from infra.settings import get_settings
    from infra.sql_owner import read_clickhouse

    return read_clickhouse(get_settings(), query)[1]


def _reported(sources: list[str]) -> dict[tuple[str, str], tuple[datetime, str]]:
    """(source page, item URL) → when the read that reported it fetched the page, and that read's crawl, for
    every new item reported on these pages."""
    return {(row[0], row[1]): (row[2], row[3]) for row in _rows(queries.new_items_of_sources(sources))}


def _pairs(query: queries.Query) -> list[tuple[str, str]]:
    return [(row[0], row[1]) for row in _rows(query)]


def _read_sources(control: str, found: list[str], plan: DemoPlan) -> dict:
    """Phase 2: read the source pages discovery found — pagination followed and records extracted through
    Kafka (a crawl of its own, in a child process). Phase 3: read them again a little later and score the new
    items the pipeline reports on changes.detected against the items published between the two fetches of
    each source page. The figures are scored over the found pages that are source pages in the truth (the
    false finds are counted by the discovery figures)."""
    from infra.settings import get_settings

    truth = control_json(control + "/__truth__")
    true_sources = {source["url"] for site in truth.values() for source in site["source_pages"]}
    reached = [url for url in found if url in true_sources]
    selection = "found by discovery (the RL agent and the classifier), scored over the true source pages"
    if not reached:
        return {"source_selection": selection, "sources_read": 0}
    read = ["crawl", "--sources", "--time-limit", str(plan.duration), "--seeds", *reached]
    budget = get_settings().pagination_max_pages
    try:
        crawl = run_to_completion(read, plan.duration + 120, simulated_clock_env(control))
        records = _pairs(queries.items_of_sources(reached))
        time.sleep(REREAD_AFTER_SECONDS)
        again = run_to_completion(read, plan.duration + 120, simulated_clock_env(control))
    except RuntimeError as error:
        return {"source_selection": selection, "sources_read": len(reached), "error": str(error)}
    first_read = dict(_pairs(queries.first_fetches(crawl["crawl_id"], reached)))
    reread = dict(_pairs(queries.first_fetches(again["crawl_id"], reached)))
    reported = _reported(reached)
    detected = reported_between(reported, crawl["crawl_id"], first_read, reread, again["crawl_id"])
    later = first_read_later(reported, crawl["crawl_id"], first_read)
    read_after = set(_pairs(queries.items_of_sources(reached)))
    first, second = (_fetch_times(control, c["crawl_id"], reached) for c in (crawl, again))
    reads = {url: (first[url], second[url]) for url in reached if url in first and url in second}
    revisits = watch_sources(control, reached, plan.watch_days, plan.watch_speed) if plan.watch_days > 0 else None
    return {
        "source_selection": selection, "sources_read": len(reached), "sources": reached, "crawl_id": crawl["crawl_id"],
        "pages_fetched": crawl["pages_fetched"], "pages_tagged": crawl["pages_tagged"],
        "multipage_sources": crawl["multipage_sources"],
        **evaluate_pagination(truth, reached, _fetched_urls(crawl["crawl_id"]), budget),
        "records": evaluate_records(truth, reached, records, budget) | {"records_read": crawl["records_read"]},
        "reread": {"crawl_id": again["crawl_id"], "pages_fetched": again["pages_fetched"],
                   "sources_scored": len(reads),
                   "simulated_hours_between_reads": round(statistics.fmean(
                       (b - a).total_seconds() / 3600 for a, b in reads.values()), 2) if reads else None,
                   **evaluate_new_items(control_json(control + "/__truth__"), detected, reads, set(reported),
                                        read_after, later)},
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
        truth = control_json(served["control"] + "/__truth__")
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
            f"  discovery            {discovery['source_pages_found']} source pages found (a share of "
            f"{discovery['source_pages_reached']} of the web's) in {discovery['episodes']} episodes (precision "
            f"{discovery['precision']}, recall {discovery['recall']}, unit cost "
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
            f"  new items            {reread['new_items_caught']} reported by the re-read or a revisit before "
            f"it, re-read {reread['simulated_hours_between_reads']} simulated hours later (precision "
            f"{reread['new_item_precision']}, recall {reread['new_item_recall']} of the {reread['new_items_due']} "
            "published between the two reads)")
        if reread.get("missed"):
            lines.append("  missed               " + ", ".join(f"{n} {why}" for why, n in reread["missed"].items()))
        lines.extend(revisit_lines(reading.get("revisits")))
    lines.append(f"  crawl {summary['crawl_id']}: query it with `sourcewatch sql \"SELECT … FROM fetches\"`")
    print("\n".join(lines))
