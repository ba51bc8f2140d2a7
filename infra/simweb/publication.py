"""When each simulated source page publishes its items.

With <data>/revisit present, a source page replays a real source's posting times
(EPA Ireland licence feeds or endoflife.date releases, chosen by the seed): the
simulated clock's start is placed inside the real series, earlier events become
the page's history and later ones appear as the clock passes them. Without it,
a seasonal Poisson process (office-hours and weekday peaks, occasional bursts)
stands in. Times are in simulated hours relative to the clock's start.
"""

from __future__ import annotations

import csv
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

# Real sources with fewer events give listings too short to paginate.
MIN_REAL_EVENTS = 60


@dataclass(frozen=True)
class Series:
    origin: str
    hours: tuple[float, ...]  # sorted publication times, simulated hours from the clock's start


@cache
def load_real_series(revisit_dir: Path) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """(origin, sorted epoch hours) of every real source with enough events."""
    by_source: dict[str, list[float]] = {}
    epa = revisit_dir / "epa" / "events.csv"
    if epa.is_file():
        with epa.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                when = datetime.fromisoformat(row["event_time"].replace("Z", "+00:00"))
                by_source.setdefault(f"epa:{row['source_id']}", []).append(when.timestamp() / 3600)
    releases = revisit_dir / "endoflife" / "events.csv"
    if releases.is_file():
        with releases.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                try:
                    day = datetime.fromisoformat(row["date"]).replace(tzinfo=UTC)
                except ValueError:
                    continue
                # Day precision only: publish at a plausible office hour.
                by_source.setdefault(f"endoflife:{row['source_id']}", []).append(day.timestamp() / 3600 + 10)
    return tuple(
        (origin, tuple(sorted(hours))) for origin, hours in sorted(by_source.items()) if len(hours) >= MIN_REAL_EVENTS
    )


def replay_real(rng: random.Random, real: tuple[tuple[str, tuple[float, ...]], ...], history: float,
                horizon: float) -> Series:
    origin, hours = real[rng.randrange(len(real))]
    # Start the clock between 50 % and 85 % into the series, so there is history and a future.
    start = hours[int(len(hours) * rng.uniform(0.5, 0.85))]
    return Series(origin, tuple(h - start for h in hours if -history <= h - start <= horizon))


def seasonal_poisson(rng: random.Random, start: datetime, history: float, horizon: float) -> Series:
    """A Poisson process whose rate peaks in office hours on weekdays, with rare bursts."""
    per_day = rng.choice([0.2, 0.5, 1.0, 3.0])
    base = per_day / 24
    peak = 4.0 * base  # thinning bound: daily × weekly factors never exceed 4
    hours: list[float] = []
    t = -history
    while True:
        t += rng.expovariate(peak)
        if t > horizon:
            break
        moment = start.timestamp() / 3600 + t
        hour = moment % 24
        weekday = int(moment // 24 + 3) % 7  # 1970-01-01 was a Thursday (3)
        daily = 1.0 + math.cos((hour - 14) / 24 * 2 * math.pi)  # 0..2, peak at 14:00
        weekly = 1.3 if weekday < 5 else 0.4
        if rng.random() < base * daily * weekly / peak:
            hours.append(t)
            if rng.random() < 0.05:  # a burst: several items at once
                hours.extend(t + rng.uniform(0, 0.5) for _ in range(rng.randint(2, 6)))
    return Series(f"poisson:{per_day}/day", tuple(sorted(hours)))


def series_for(rng: random.Random, revisit_dir: Path | None, start: datetime, history: float,
               horizon: float) -> Series:
    real = load_real_series(revisit_dir) if revisit_dir is not None and revisit_dir.is_dir() else ()
    if real:
        return replay_real(rng, real, history, horizon)
    return seasonal_poisson(rng, start, history, horizon)
