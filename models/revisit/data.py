"""Update time series of real source pages (<data>/revisit) on a tick grid, split as DESIGN.md evaluates them.

A source's series is the times its page gained items. At tick ΔT, y_t = 1 when
the page gained ≥ 1 item in (t − ΔT, t]. Each source's span (first to last
event) is split in time: the first 85 % trains, the rest tests, and the last
15 % of the training part is the validation window where thresholds are
chosen. Sources with fewer than 10 training or 2 test events are skipped.

EPA Ireland's rows of schema `rss` carry real posting times; its other rows
carry dates only (00:00 UTC). At 1-hour ticks those would pile items onto
midnight, so `load_events(…, timed_only=True)` keeps the time-stamped rows; at
1-day ticks every row counts.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

TRAIN_SHARE = 0.85
VALIDATION_SHARE = 0.15
MIN_TRAIN_EVENTS = 10
MIN_TEST_EVENTS = 2
TICKS = {"1h": timedelta(hours=1), "1d": timedelta(days=1)}
TIMED_SCHEMAS = ("rss",)


@dataclass(frozen=True)
class SourceSeries:
    """One source's events on the tick grid: tick t covers (start + (t−1)·tick, start + t·tick]."""

    source_id: str
    start: datetime
    tick_hours: float
    # Events per tick (y_t = counts[t] > 0).
    counts: np.ndarray
    # Event times in hours since `start` (for detection delays).
    event_hours: np.ndarray
    train_end: int
    validation_start: int

    @property
    def updated(self) -> np.ndarray:
        return self.counts > 0

    def slots(self, ticks: np.ndarray, per_week: int) -> np.ndarray:
        """Each tick's slot of the week (hour of week for 168 slots, day of week for 7), by its end time."""
        start_hour = self.start.weekday() * 24 + self.start.hour + self.start.minute / 60
        hours = start_hour + ticks * self.tick_hours
        return (np.floor(hours / (168 / per_week)) % per_week).astype(int)


def cyclic_time_of(epoch_hours: np.ndarray) -> np.ndarray:
    """Sine and cosine of the hour of day, day of week and day of month (UTC) at these moments (hours since
    the Unix epoch): 6 columns. The live scheduler and the offline series encode time the same way here."""
    hours = np.asarray(epoch_hours, dtype=np.float64)
    days = np.floor(hours / 24).astype("datetime64[D]")
    months = days.astype("datetime64[M]")
    month_days = ((months + 1).astype("datetime64[D]") - months.astype("datetime64[D]")).astype(np.float64)
    day_of_month = (days - months.astype("datetime64[D]")).astype(np.float64) + (hours % 24) / 24
    # 1970-01-01 was a Thursday (weekday 3).
    day_of_week = (hours / 24 + 3) % 7
    angles = np.stack([(hours % 24) / 24, day_of_week / 7, day_of_month / month_days], axis=1) * 2 * np.pi
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def cyclic_time(series: SourceSeries, ticks: np.ndarray) -> np.ndarray:
    """The cyclic time (cyclic_time_of) at each tick's end."""
    return cyclic_time_of(series.start.timestamp() / 3600 + np.asarray(ticks) * series.tick_hours)


def parse_time(text: str) -> datetime:
    """An ISO time or date as an aware UTC datetime (a date is its midnight)."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def load_events(paths: list[Path], timed_only: bool = False) -> dict[str, list[datetime]]:
    """source_id → its event times, sorted; reads EPA (`event_time`) and endoflife (`date`) files."""
    events: dict[str, list[datetime]] = defaultdict(list)
    for path in paths:
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if timed_only and row.get("schema", TIMED_SCHEMAS[0]) not in TIMED_SCHEMAS:
                    continue
                stamp = row.get("event_time") or row.get("date")
                if stamp:
                    events[row["source_id"]].append(parse_time(stamp))
    return {source: sorted(times) for source, times in events.items()}


def to_series(source_id: str, times: list[datetime], tick: timedelta) -> SourceSeries:
    """The source's events on a grid that starts at the tick boundary just before its first event."""
    tick_hours = tick.total_seconds() / 3600
    epoch_hours = times[0].timestamp() / 3600
    start = datetime.fromtimestamp((np.floor(epoch_hours / tick_hours) * tick_hours - tick_hours) * 3600, UTC)
    hours = np.array([(moment - start).total_seconds() / 3600 for moment in times])
    # An event exactly on a tick boundary belongs to the tick that ends there.
    index = np.ceil(hours / tick_hours).astype(int)
    counts = np.bincount(index, minlength=index[-1] + 1)
    return split_series(source_id, start, tick_hours, counts, hours)


def split_series(source_id: str, start: datetime, tick_hours: float, counts: np.ndarray,
                 event_hours: np.ndarray) -> SourceSeries:
    """A series with its training part (the first TRAIN_SHARE of its ticks) and validation window (the last
    VALIDATION_SHARE of that) marked."""
    train_end = int(len(counts) * TRAIN_SHARE)
    return SourceSeries(source_id, start, tick_hours, counts, event_hours, train_end,
                        int(train_end * (1 - VALIDATION_SHARE)))


def has_enough_events(series: SourceSeries) -> bool:
    """≥ MIN_TRAIN_EVENTS events in its training part and ≥ MIN_TEST_EVENTS after it."""
    return (series.counts[:series.train_end].sum() >= MIN_TRAIN_EVENTS
            and series.counts[series.train_end:].sum() >= MIN_TEST_EVENTS)


def usable_series(events: dict[str, list[datetime]], tick: timedelta) -> tuple[list[SourceSeries], list[str]]:
    """The sources with enough training and test events, and the ids of those skipped."""
    usable, skipped = [], []
    for source_id, times in sorted(events.items()):
        series = to_series(source_id, times, tick)
        if has_enough_events(series):
            usable.append(series)
        else:
            skipped.append(source_id)
    return usable, skipped
