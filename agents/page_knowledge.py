"""What the scheduler knows of a watched page, learned from every read: the rhythm's slot sums, the ticks it
knows, its recent updates — the TSP-R model's input, kept in the page's state in the revisit table.

A read at tick T reveals the ticks since the previous successful read (all of them observed: exposure) and the
items that appeared in them, each placed by its listed time: an exact time is one tick; a date without a time
(midnight, at ticks shorter than a day) is any tick of that day; no usable time is any tick since the previous
read. An item whose tick is not known exactly is shared over its possible ticks in proportion to the rhythm's
rate there (one E-step of the censored likelihood), and no tick holds more than one update (a burst of
hundreds of items is one busy tick, not hundreds). The first read of a page bootstraps it: the dated items
its listing shows give its past publication times, and the ticks from the oldest of them to now are known.

A page's ticks may be offset from the epoch's grid by its phase (`phase_hours`, under one tick: the worker
spreads its pages' ticks over the tick so they are not all revisited at once); tick i of such a page ends at
i·tick_hours + phase_hours, and every time is placed on that grid.

Dates that cannot be publication times are not read as such: an item listed after the read (beyond a tick of
clock skew) carries an event's date; a listing where many do is an event list, whose dates say nothing of when
items appeared, and it is learned from its revisits only. An item dated well before the previous read that
only now appears was republished or reordered, not published now: it is not an update.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import numpy as np

from models.records.dates import has_time_of_day
from models.revisit.rhythm import RhythmPrior, fading, slot_count, slot_rates, slots_of, with_day_counts
from models.revisit.rhythm_model import KnownWindow

log = logging.getLogger(__name__)
NEVER = -(10**9)
# A listing where at least this share of dated items lies in the future lists events, not publications.
EVENT_LIST_SHARE = 0.3
# Known update ticks kept per page (the model's window reads the last ones).
RECENT_UPDATES = 64


@dataclass
class Placed:
    """The updates a read revealed: per tick, its share of an update (≤ 1), and what was not read as one."""

    shares: dict[int, float]
    # The same, less the items dated by day alone at ticks shorter than a day: those are counted by their day
    # (`day_items`: the tick of each one's noon), their hour left to the page's learned hours
    # (models.revisit.rhythm.with_day_counts).
    timed_shares: dict[int, float] = field(default_factory=dict)
    day_items: list[int] = field(default_factory=list)
    # Each item read as an update: its expected publication time (hours since the epoch) — its listed time
    # where that is exact, else the mean of the ticks it is shared over.
    item_hours: list[float] = field(default_factory=list)
    future_dates: int = 0
    republished: int = 0
    burst: bool = False


def with_modified_time(listed: Sequence[datetime | None], last_modified: str | None, after: datetime,
                       until: datetime) -> list[datetime | None]:
    """The listed times with the newest item's made exact where the page's Last-Modified dates it: a page's
    Last-Modified inside (after, until] that falls on the day an item is dated (without a time) or on an
    undated item is when the newest of them appeared. The first such item in the list (listings run newest
    first) takes it."""
    listed = list(listed)
    if not last_modified:
        return listed
    try:
        modified = parsedate_to_datetime(last_modified)
    except (TypeError, ValueError):
        return listed
    if modified.tzinfo is None or not after < modified <= until:
        return listed
    for index, moment in enumerate(listed):
        if moment is None or (not has_time_of_day(moment) and moment.date() == modified.astimezone(UTC).date()):
            listed[index] = modified.astimezone(UTC)
            break
    return listed


def _tick_of(moment: datetime, tick_hours: float, phase_hours: float) -> int:
    return int(np.ceil((moment.timestamp() / 3600 - phase_hours) / tick_hours - 1e-9))


def place_items(listed: Sequence[datetime | None], previous: int, tick: int, tick_hours: float,
                rates: np.ndarray, dates_are_events: bool, republished_before: int | None,
                phase_hours: float = 0.0) -> Placed:
    """Each item's share of the ticks (previous, tick] it may have appeared in (see the module); `rates`: the
    rhythm's rate per slot; `republished_before`: a listed tick before which an item is an old one reappearing;
    `phase_hours`: the page's grid's offset."""
    placed = Placed({})
    span = np.arange(previous + 1, tick + 1)
    if not len(span):
        return placed
    weights = 1 - np.exp(-rates[slots_of(span, tick_hours)])
    total: dict[int, float] = {}
    timed: dict[int, float] = {}
    day_items: dict[datetime, int] = {}
    for moment in listed:
        candidates, exact, by_day = span, None, False
        if moment is not None and not dates_are_events:
            hours = moment.timestamp() / 3600
            listed_tick = _tick_of(moment, tick_hours, phase_hours)
            if listed_tick > tick + 1:
                placed.future_dates += 1
            elif republished_before is not None and listed_tick < republished_before:
                placed.republished += 1
                continue
            else:
                last = listed_tick
                if not has_time_of_day(moment) and tick_hours < 24:
                    last = int(np.ceil((hours + 24 - phase_hours) / tick_hours - 1e-9))
                    by_day = True
                inside = span[(span >= listed_tick) & (span <= last)]
                exact = hours if last == listed_tick and len(inside) else None
                # A time before the previous read (clock skew, a late listing) clamps to its first tick.
                candidates = inside if len(inside) else span[:1] if listed_tick <= previous else span[-1:]
        share = weights[candidates - span[0]]
        share = share / share.sum() if share.sum() > 0 else np.full(len(candidates), 1 / len(candidates))
        for candidate, value in zip(candidates.tolist(), share.tolist()):
            total[candidate] = total.get(candidate, 0.0) + value
            if not by_day:
                timed[candidate] = timed.get(candidate, 0.0) + value
        if by_day:
            day_items[moment] = day_items.get(moment, 0) + 1
        placed.item_hours.append(exact if exact is not None
                                 else float(share @ (candidates - 0.5)) * tick_hours + phase_hours)
    placed.burst = any(value > 1 for value in total.values())
    placed.shares = {candidate: min(value, 1.0) for candidate, value in total.items()}
    placed.timed_shares = {candidate: min(value, 1.0) for candidate, value in timed.items()}
    # A day holds at most one update per tick.
    per_day = int(round(24 / tick_hours))
    placed.day_items = [_tick_of(day + timedelta(hours=12), tick_hours, phase_hours)
                        for day, count in day_items.items() for _ in range(min(count, per_day))]
    return placed


@dataclass(frozen=True)
class Learned:
    """What one read taught: the updates placed (their expected number; the whole ticks the model's window
    reads them at; each item's expected time) and any dates not read as publication times (for the log)."""

    updates: float
    update_ticks: frozenset[int]
    item_hours: tuple[float, ...]
    future_dates: int
    republished: int
    burst: bool
    event_list: bool


def fade_to(state, tick: int, tick_hours: float) -> None:
    """Fade the page's slot sums to `tick` (see models.revisit.rhythm)."""
    size = slot_count(tick_hours)
    if not state.counts:
        state.counts, state.exposure, state.sums_tick = [0.0] * size, [0.0] * size, tick
        state.day_counts = [0.0] * 7
        return
    factor = fading(tick_hours) ** max(tick - state.sums_tick, 0)
    state.counts = [value * factor for value in state.counts]
    state.exposure = [value * factor for value in state.exposure]
    state.day_counts = [value * factor for value in state.day_counts or [0.0] * 7]
    state.sums_tick = max(tick, state.sums_tick)


def rhythm_counts(state) -> np.ndarray:
    """The page's update counts per slot, as of its sums' tick, with the items dated by day alone spread over
    their day's hours as the page's own timed items are (recomputed at every use, so a page whose hours
    revisits reveal reads its listing's history at those hours too)."""
    return with_day_counts(np.array(state.counts), np.array(state.day_counts or [0.0] * 7))


def learn_read(state, prior: RhythmPrior, tick: int, listed: Sequence[datetime | None], first: bool,
               phase_hours: float = 0.0) -> Learned:
    """Fold a successful read at `tick` (of the page's grid, offset by `phase_hours`) into the page's knowledge:
    on its first read, every dated item the listing shows; later, the new items it found since the previous
    read."""
    tick_hours = prior.tick_hours
    fade_to(state, tick, tick_hours)
    # Items are placed by the page's own rhythm, flat where it has shown nothing: the training pages' clock is
    # no evidence of when this page publishes (placed by it, a listing dated by day alone would teach every
    # page that clock, and the page's decisions would follow it).
    rates = slot_rates(RhythmPrior.flat(tick_hours, prior.rate), rhythm_counts(state), np.array(state.exposure))
    event_list = False
    if first:
        dated = [moment for moment in listed if moment is not None]
        future = sum(moment.timestamp() / 3600 > (tick + 1) * tick_hours + phase_hours for moment in dated)
        event_list = bool(dated) and future >= EVENT_LIST_SHARE * len(dated)
        state.dates_are_events = event_list
        past = [moment for moment in dated if moment.timestamp() / 3600 <= (tick + 1) * tick_hours + phase_hours]
        oldest = min((_tick_of(moment, tick_hours, phase_hours) for moment in past), default=tick)
        # With nothing dated the first read tells no past: the page is known from this read on. An archive
        # reaching back years is read for its last year.
        previous = tick - 1 if event_list or not past else max(oldest - 1, tick - 1 - int(366 * 24 / tick_hours))
        past = [moment for moment in past if _tick_of(moment, tick_hours, phase_hours) > previous]
        placed = place_items([] if event_list else past, previous, tick, tick_hours, rates, False, None, phase_hours)
        placed.future_dates = future
        state.known_from = previous + 1
    else:
        previous = state.known_until if state.known_until is not None else tick - 1
        # An item listed over a day before the previous read was there then (or is an old one reappearing).
        placed = place_items(listed, previous, tick, tick_hours, rates, state.dates_are_events,
                             previous - int(np.ceil(24 / tick_hours)), phase_hours)
    observed = np.arange(previous + 1, tick + 1)
    fade = fading(tick_hours)
    exposure = np.bincount(slots_of(observed, tick_hours), weights=fade ** (tick - observed),
                           minlength=len(state.exposure))
    updates = np.array(sorted(placed.timed_shares), dtype=np.int64)
    counts = np.bincount(slots_of(updates, tick_hours), minlength=len(state.counts),
                         weights=np.array([placed.timed_shares[t] for t in updates.tolist()]) * fade ** (tick - updates))
    days = np.array(placed.day_items, dtype=np.int64)
    day_counts = np.bincount(slots_of(days, tick_hours) // 24, minlength=7,
                             weights=fade ** np.maximum(tick - days, 0)) if len(days) else np.zeros(7)
    state.exposure = (np.array(state.exposure) + exposure).tolist()
    state.counts = (np.array(state.counts) + counts).tolist()
    state.day_counts = (np.array(state.day_counts) + day_counts).tolist()
    # The model's window reads whole ticks: an item shared over several counts at its likeliest one.
    likeliest = _likeliest_ticks(placed.shares)
    state.recent_updates = sorted(set(state.recent_updates) | likeliest)[-RECENT_UPDATES:]
    state.known_until = max(tick, state.known_until if state.known_until is not None else tick)
    return Learned(float(sum(placed.shares.values())), frozenset(likeliest), tuple(placed.item_hours),
                   placed.future_dates, placed.republished, placed.burst, event_list)


def _likeliest_ticks(shares: dict[int, float]) -> set[int]:
    """Whole ticks for the window and the live figures: the likeliest ones, as many as the updates placed
    (rounded, at least one); of equally likely ticks the earliest."""
    if not shares:
        return set()
    wanted = max(1, round(sum(shares.values())))
    return set(sorted(shares, key=lambda t: (-shares[t], t))[:wanted])


def known_windows(states: Sequence, ticks: Sequence[int], width: int, tick_hours: float) -> KnownWindow:
    """The model's input for each page at its tick to decide: what it knows of the `width` ticks ending there."""
    ticks_array = np.asarray(ticks, dtype=np.int64)
    window = ticks_array[:, None] - np.arange(width - 1, -1, -1)[None, :]
    known_from = np.array([NEVER if s.known_from is None else s.known_from for s in states])
    known_until = np.array([NEVER if s.known_until is None else s.known_until for s in states])
    known = (window >= known_from[:, None]) & (window <= known_until[:, None])
    updated = np.array([np.isin(row, s.recent_updates) for row, s in zip(window, states)]).reshape(window.shape)
    before = np.array([max([u for u in s.recent_updates if u < row[0]], default=NEVER)
                       for row, s in zip(window, states)])
    fade = fading(tick_hours)
    counts, exposure = [], []
    for state, tick in zip(states, ticks):
        factor = fade ** max(tick - state.sums_tick, 0) if state.counts else 0.0
        size = slot_count(tick_hours)
        counts.append((rhythm_counts(state) if state.counts else np.zeros(size)) * factor)
        exposure.append(np.array(state.exposure or [0.0] * size) * factor)
    return KnownWindow(window, known, updated & known, before, known_until, np.array(counts), np.array(exposure))
