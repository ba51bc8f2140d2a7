"""The demo's phase 4: the revisit model watching the reached source pages on the simulated web's clock from
cold start, scored against the simulated web's truth per week beside fixed intervals, and the live estimates
the worker streamed to ClickHouse beside them."""

from __future__ import annotations

import json
import math
import os
import urllib.request
from datetime import UTC, datetime, timedelta

import numpy as np

from infra import queries
from infra.processes import run_to_completion
from jobs.simweb_control import control_json, simulated_clock

# Fixed intervals the model's revisits are compared with on the same ticks.
REFERENCE_INTERVALS = (1, 2, 3, 4, 5, 6)
WEEK_HOURS = 168


def published_times(truth: dict) -> dict[str, list[datetime]]:
    """Each source page's items' publication times, from the simulated web's truth."""
    return {source["url"]: [datetime.fromisoformat(item["published_at"]) for item in source["items"]]
            for site in truth.values() for source in site["source_pages"]}


def evaluate_revisits(published: dict[str, list[datetime]], decisions: list[tuple[str, datetime, bool]],
                      tick_hours: float, start: datetime | None = None, weeks: int = 0) -> dict:
    """The revisits scored as DESIGN.md defines the figures, over each source's decided ticks: y_t = an update
    in the tick (`published`: each page's update times — the truth's items, or the updates the live reads
    placed), c_t = the model fetched at its end; beside them the fixed intervals RC(k) on the same ticks. With
    `start`, also per week since then, for `weeks` weeks (`weeks`: one entry per week, each with the same
    figures over that week's ticks; the last may be partial)."""
    from models.revisit.data import SourceSeries
    from models.revisit.evaluation import summarize, window_counts
    from models.revisit.policies import rc

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


def watch_sources(control: str, reached: list[str], watch_days: float, watch_speed: float) -> dict:
    """Phase 4: the revisit model watches the source pages on the simulated web's clock, sped up to
    `watch_speed`, for `watch_days` (a worker in a child process); each page known from its reads since
    discovery found it. Its decisions are then scored against the truth, for the whole watch and per
    week, and its live estimates (the same figures with the update ticks its reads placed, streamed to
    ClickHouse as it ran) beside them."""
    seconds = watch_days * 86400 / watch_speed
    request = urllib.request.Request(control + "/__clock__", data=json.dumps({"speed": watch_speed}).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=60).close()
    clock = simulated_clock(control)
    # The pages were watched from discovery on, by each phase's worker in turn, with no worker between two
    # phases: this phase is scored from its own start, not from their first decision.
    watch_began = datetime.fromisoformat(clock["SOURCEWATCH_REVISIT_CLOCK_ORIGIN"])
    try:
        run_to_completion(["watch", *reached, "--run", str(seconds)], seconds + 180,
                          os.environ | clock | _polite_on_the_simulated_clock(watch_speed))
    except RuntimeError as error:
        return {"error": str(error)}
    from infra.settings import get_settings
    from infra.sql_owner import read_clickhouse

    settings = get_settings()
    _, rows = read_clickhouse(settings, queries.revisit_decisions_of(reached))
    decisions = [(url, _aware(at), fetch) for url, at, fetch in rows if _aware(at) > watch_began]
    if not decisions:
        return {"error": "the worker decided no tick of the watched pages"}
    # The watch began with its first tick decided (the worker takes a while to start): the truth's weeks count
    # from there.
    started = min(at for _, at, _ in decisions) - timedelta(hours=settings.revisit_tick_hours)
    week_count = math.ceil(watch_days / 7)
    against_truth = evaluate_revisits(published_times(control_json(control + "/__truth__")), decisions,
                                      settings.revisit_tick_hours, started, week_count)
    # The live estimates: the same figures over the same ticks, with y_t the updates the reads placed (streamed
    # to ClickHouse as the watch ran) instead of the truth.
    _, placed = read_clickhouse(settings, queries.revisit_updates_of(reached))
    updates: dict[str, list[datetime]] = {}
    for page, update_at in placed:
        updates.setdefault(page, []).append(_aware(update_at))
    live = evaluate_revisits(updates, decisions, settings.revisit_tick_hours, started, week_count)
    live_by_week = live.get("weeks", [])
    weeks = [{"week": index + 1, "model": week["model"], "live": {name: live_week["model"][name]
                                                                  for name in ("timeliness", "friendliness")},
              **{f"rc_{k}": week[f"rc_{k}"] for k in REFERENCE_INTERVALS}, "items_published": week["items_published"]}
             for index, (week, live_week) in enumerate(zip(against_truth.pop("weeks", []), live_by_week))]
    # Counted from ClickHouse after the worker stopped: it may decide a few more ticks while stopping.
    return {"watched": len(reached), "began": watch_began.isoformat(), "decisions": len(decisions), "revisits": sum(bool(f) for *_, f in decisions),
            "simulated_hours": round((max(at for _, at, _ in decisions) - started) / timedelta(hours=1), 1),
            "live_estimate": {name: live["model"][name]
                              for name in ("timeliness", "friendliness", "delay_h", "fetches_per_item")},
            "against_truth": against_truth, "weeks": weeks}


def _polite_on_the_simulated_clock(speed: float) -> dict[str, str]:
    """The per-host delay kept in simulated seconds while the clock runs `speed` times real time: a real second
    between two fetches of a host would be hours of the simulated web's time, and a page's revisit would queue
    ticks behind the fetches of its items' pages."""
    from infra.settings import get_settings

    return {"SOURCEWATCH_PER_HOST_DELAY_SECONDS": f"{get_settings().per_host_delay_seconds / speed:.6f}"}


def revisit_lines(revisits: dict | None) -> list[str]:
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
        *(line for week in revisits.get("weeks", []) for line in week_lines(week)),
    ]


def week_lines(week: dict) -> list[str]:
    def pair(figures: dict | None) -> str:
        figures = figures or {}
        return "/".join(f"{figures[key]:.3f}" if figures.get(key) is not None else "–"
                        for key in ("timeliness", "friendliness"))

    rc = "  ".join(f"RC({k}) {pair(week.get(f'rc_{k}'))}" for k in REFERENCE_INTERVALS)
    return [f"    week {week['week']} ({week['items_published']} items), timeliness/friendliness: model "
            f"{pair(week['model'])} (live estimate {pair(week['live'])})",
            f"      {rc}"]


def _aware(value) -> datetime:
    """A time as ClickHouse returns it (a naive UTC datetime, or its text), aware."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
