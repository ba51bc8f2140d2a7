"""Stage `revisit`'s core: the watched source pages, their ticks, the model's decisions, and what was seen.

Ticks are indices on a grid of `tick_hours` aligned to the Unix epoch — each page's offset by its own phase
where the worker spreads them (RevisitClock) —; tick i ends at i·tick_hours (+ the phase). A watched
source keeps what a crawler can honestly know of it (agents.page_knowledge): the rhythm's slot sums learned
from every read's dated items, the ticks it knows (from its first read's oldest dated item to its last
successful read), its recent updates; the validators of its last fetch; and the sums its live figures are made
of. A new watch is read at once: that first read bootstraps the page's history from its listing. TSP-R
(models.revisit.rhythm_model) turns what is known into P(update) per tick; the page is fetched when P's odds
over the page's usual odds reach the operating threshold (the model's, or the one its validation curve gives for a target timeliness), when
it has gone `max_interval` without a revisit, or — a small exploration share, larger where the page's rhythm
has seen little of the slot — to probe a time the model is unsure of.

The live figures follow DESIGN.md's definitions with y_t estimated from what the revisits found, placed as
the page's knowledge places them (agents.page_knowledge): an item with an exact listed time at its tick, one
dated by day or not at all at the likeliest of its possible ticks since the previous read under the page's
rhythm (the same whole ticks the model's window reads), a republished old item not at all. An update tick is
timely when it is the revisit's own tick; an item's delay runs from its listed time, or its expected time,
to the revisit. What the first read lists predates the watch and is not counted.
"""

from __future__ import annotations

import logging
import math
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from agents.page_knowledge import Learned, known_windows, learn_read, rhythm_counts, with_modified_time
from infra.settings import Settings
from models.revisit.rhythm import RhythmPrior, slots_of, summarize_rhythm
from models.revisit.rhythm_model import DEFAULT_MODEL, RhythmLSTM
from models.revisit.schedule import Rules
from schemas.base import derived_event_id
from schemas.crawl import CrawlRequest
from schemas.revisit import RevisitDecision, RevisitOutcome, RevisitTick

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RevisitClock:
    """The scheduler's clock: the wall clock, or a simulated one (origin at a wall time, sped up).

    With `spread`, each page's ticks are offset from the epoch's grid by its own phase (under one tick, from a
    hash of its URL: the same on every worker and after every restart), so the pages' ticks — and their
    revisits — come spread over the tick instead of all at its end: on one grid, 5,557 pages' hourly ticks
    came as one burst an hour, and a new item's row waited behind the burst's reads (p99 22 s from the fetch
    in the 5,000-site soak). `for_page` gives the page's clock; a page's clock is what every tick of it is
    computed with."""

    tick_hours: float = 1.0
    origin: datetime | None = None
    origin_wall: float = 0.0
    speed: float = 1.0
    spread: bool = False
    # This clock's offset from the epoch's grid in whole seconds (a page's clock, from for_page): tick times
    # stay exact in ClickHouse's milliseconds.
    phase_seconds: int = 0

    @classmethod
    def from_settings(cls, settings) -> RevisitClock:
        if settings.revisit_clock_origin is not None and settings.revisit_clock_origin_wall is None:
            raise ValueError("revisit_clock_origin needs revisit_clock_origin_wall (the Unix time it is read at)")
        return cls(settings.revisit_tick_hours, settings.revisit_clock_origin,
                   settings.revisit_clock_origin_wall or 0.0, settings.revisit_clock_speed,
                   settings.revisit_spread_ticks)

    def for_page(self, page_url: str) -> RevisitClock:
        """The page's clock: its ticks offset by its phase where ticks are spread, else this clock."""
        if not self.spread:
            return self
        share = zlib.crc32(page_url.encode("utf-8")) / 2**32
        return replace(self, spread=False, phase_seconds=int(share * self.tick_hours * 3600))

    @property
    def phase_hours(self) -> float:
        return self.phase_seconds / 3600

    def hours(self) -> float:
        """Now, in hours since the Unix epoch."""
        if self.origin is None:
            return time.time() / 3600
        return self.origin.timestamp() / 3600 + (time.time() - self.origin_wall) * self.speed / 3600

    def tick(self) -> int:
        """The last tick that has ended."""
        return math.floor((self.hours() - self.phase_hours) / self.tick_hours + 1e-9)

    def tick_of(self, moment: datetime) -> int:
        """The tick a moment falls in: (i−1, i] in tick units."""
        return math.ceil((moment.timestamp() / 3600 - self.phase_hours) / self.tick_hours - 1e-9)

    def tick_time(self, tick: int) -> datetime:
        """When the tick ends."""
        return datetime.fromtimestamp(tick * self.tick_hours * 3600, UTC) + timedelta(seconds=self.phase_seconds)

    def real_seconds_per_tick(self) -> float:
        return self.tick_hours * 3600 / self.speed


class WatchedSource(BaseModel):
    """A watched source page's state (a Faust table value, as JSON)."""

    model_config = ConfigDict(extra="forbid")

    page_url: str
    site: str
    added_tick: int
    # Found by discovery (a classifier's judgement), not listed by a person: its first read must show a list.
    discovered: bool = False
    # Ticks up to this one are decided; a tick at or before it is a duplicate.
    last_tick: int
    # The latest tick whose revisit outcome is in: new items found later appeared after it.
    observed_until: int
    # The tick of the last revisit decided (None: none since the watch began).
    last_fetch_tick: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    # What is known of the page (agents.page_knowledge): the rhythm's slot sums, faded to `sums_tick`; the
    # ticks known, from `known_from` to `known_until` (the last successful read); recent known update ticks.
    counts: list[float] = []
    exposure: list[float] = []
    # Updates known only by their day (listings dated without a time), per day of week, faded alike.
    day_counts: list[float] = []
    sums_tick: int = 0
    known_from: int | None = None
    known_until: int | None = None
    recent_updates: list[int] = []
    # Its listing's dates are events' dates (found at its first read): they say nothing of publication.
    dates_are_events: bool = False
    # Sums of the live figures.
    fetches: int = 0
    update_ticks: int = 0
    timely: int = 0
    items: int = 0
    delay_hours: float = 0.0

    @property
    def read_once(self) -> bool:
        return self.known_until is not None

    def figures(self, now_tick: int) -> dict[str, float | None]:
        """Timeliness, friendliness, mean delay (hours) and fetches per new item so far."""
        ticks, updates = now_tick - self.added_tick, self.update_ticks
        quiet = ticks - updates
        return {
            "timeliness": self.timely / updates if updates else None,
            "friendliness": max(quiet - (self.fetches - self.timely), 0) / quiet if quiet > 0 else None,
            "delay_h": self.delay_hours / self.items if self.items else None,
            "fetches_per_item": self.fetches / self.items if self.items else None,
        }


def start_watching(page_url: str, site: str, now_tick: int, discovered: bool = False) -> WatchedSource:
    """A new watch: its first read is at this tick (first_read), its first decision at the next one."""
    return WatchedSource(page_url=page_url, site=site, added_tick=now_tick, discovered=discovered,
                         last_tick=now_tick, observed_until=now_tick - 1)


def revisit_request(source: WatchedSource, tick: int, clock: RevisitClock, event_id: str) -> CrawlRequest:
    return CrawlRequest(
        event_id=event_id, site=source.site, url=source.page_url, crawl_id=f"revisit-{tick}", depth=0,
        max_depth=0, max_pages=1, reason="revisit", source_url=source.page_url,
        tick_at=clock.for_page(source.page_url).tick_time(tick),
        list_read_before=clock.for_page(source.page_url).tick_time(source.known_until) if source.read_once else None,
        etag=source.etag, last_modified=source.last_modified)


def first_read(source: WatchedSource, clock: RevisitClock) -> CrawlRequest:
    """The read a new watch starts with: its listing's dated items are the page's history."""
    source.fetches += 1
    source.last_fetch_tick = source.added_tick
    return revisit_request(source, source.added_tick, clock,
                           derived_event_id(source.page_url, "first-read", str(source.added_tick)))


def tick_message(source: WatchedSource, tick: int, clock: RevisitClock) -> RevisitTick:
    return RevisitTick(event_id=derived_event_id(source.page_url, "tick", str(tick)), site=source.site,
                       page_url=source.page_url, tick_at=clock.for_page(source.page_url).tick_time(tick))


@dataclass(frozen=True)
class Decision:
    message: RevisitDecision
    # The revisit to fetch, when the decision is to fetch.
    request: CrawlRequest | None
    # Fetched because the page went unvisited for the longest interval allowed, not because the model said so.
    starved: bool = False
    # Fetched to probe a time the model is unsure of.
    explored: bool = False


def decide(model: RhythmLSTM, due: Sequence[tuple[WatchedSource, RevisitTick]], clock: RevisitClock,
           max_interval_ticks: int | None, threshold: float | None = None,
           exploration_share: float = 0.0) -> list[Decision]:
    """The model's decisions for a batch of due ticks (one batched inference), and the state they leave: each
    source's last tick, last fetch and fetch count are updated in place. `threshold`: the operating point
    (default: the model's). Beside the model, the scheduler's rules (models.revisit.schedule): no page starves
    (a revisit at least once in every `max_interval_ticks` since the last one, or since the watch began, at the
    likeliest tick left in that interval), and a share `exploration_share` of probes where the page's rhythm
    has observed least."""
    if not due:
        return []
    ticks = [clock.for_page(source.page_url).tick_of(tick.tick_at) for source, tick in due]
    states = [source for source, _ in due]
    windows = known_windows(states, ticks, model.window, clock.tick_hours)
    probabilities = model.predict(windows)
    threshold = model.operating_threshold if threshold is None else threshold
    chosen = model.priority(windows, probabilities) >= threshold
    since = np.array([index - (source.last_fetch_tick if source.last_fetch_tick is not None else source.added_tick)
                      for source, index in zip(states, ticks)])
    rules = Rules(model.prior, max_interval_ticks, exploration_share)
    starved = ~chosen & rules.starved(windows.counts, windows.exposure, np.asarray(ticks), since)
    slots = slots_of(np.asarray(ticks), clock.tick_hours)
    slot_exposure = np.take_along_axis(windows.exposure, slots[:, None], 1)[:, 0]
    explored = ~chosen & ~starved & rules.explored([source.page_url for source in states], ticks, slot_exposure)
    decisions = []
    for (source, tick), index, probability, fetch, was_starved, was_explored in zip(
            due, ticks, probabilities, chosen | starved | explored, starved, explored):
        fetch = bool(fetch)
        source.last_tick = index
        source.fetches += fetch
        if fetch:
            source.last_fetch_tick = index
        message = RevisitDecision(event_id=derived_event_id(tick.event_id, "decision"), site=source.site,
                                  page_url=source.page_url, tick_at=tick.tick_at, policy=model.version,
                                  fetch=fetch, probability=round(float(probability), 6))
        request = revisit_request(source, index, clock, derived_event_id(tick.event_id, "revisit")) if fetch else None
        decisions.append(Decision(message, request, bool(was_starved), bool(was_explored)))
    return decisions


@dataclass(frozen=True)
class Observation:
    """An outcome folded in: False `in_order` when it came after a later revisit's outcome (its items were then
    already counted there, so only its validators are kept); what the read taught, when it was read; the update
    ticks it added to the live figures (those since the watch began); whether it was the page's first read."""

    in_order: bool
    learned: Learned | None = None
    counted_ticks: tuple[int, ...] = ()
    first_read: bool = False


def observe(source: WatchedSource, outcome: RevisitOutcome, clock: RevisitClock, prior: RhythmPrior) -> Observation:
    """Fold a revisit's outcome into the page's knowledge (agents.page_knowledge) and its live figures."""
    clock = clock.for_page(source.page_url)
    if outcome.etag or outcome.last_modified:
        source.etag, source.last_modified = outcome.etag, outcome.last_modified
    tick = clock.tick_of(outcome.tick_at)
    if tick <= source.observed_until:
        return Observation(False)
    source.observed_until = tick
    if not outcome.read:
        return Observation(True)
    read_before = source.read_once
    # The page's Last-Modified dates its newest item where the listing gives only a day, or nothing.
    since = clock.tick_time(source.known_until) if read_before else datetime.min.replace(tzinfo=UTC)
    published = with_modified_time(outcome.published, outcome.last_modified, since, outcome.tick_at)
    listed = published if read_before else with_modified_time(outcome.listed, outcome.last_modified, since,
                                                              outcome.tick_at)
    learned = learn_read(source, prior, tick, listed, not read_before, clock.phase_hours)
    counted = _count_figures(source, learned, tick, clock) if outcome.new_items else ()
    return Observation(True, learned, counted, first_read=not read_before)


def withdrawal_reason(source: WatchedSource, outcome: RevisitOutcome, observation: Observation) -> str | None:
    """Why a find is withdrawn from watching, or None: a page discovery judged a source page whose first read
    shows no list of items — no record, the site's menu alone (a calendar shown in a frame of another site), or
    records neither dated nor linking to an item's page (an article's paragraphs, a contact page the classifier
    mistook) — has nothing to watch. A page a person listed is kept
    (they asked for it); a failed read decides nothing."""
    if not (source.discovered and observation.first_read):
        return None
    if not outcome.listed:
        return "its first read shows no list"
    if outcome.in_navigation:
        return "its first read shows only the site's navigation"
    if outcome.linked == 0 and all(date is None for date in outcome.listed):
        return "its first read shows no dated or linked list"
    return None


def _count_figures(source: WatchedSource, learned: Learned, tick: int, clock: RevisitClock) -> tuple[int, ...]:
    """The read's updates since the watch began in the live figures, where the page's knowledge placed them
    (a first read that had failed at the watch's start may list items from after it); their ticks."""
    fetched_hours = tick * clock.tick_hours + clock.phase_hours
    began_hours = source.added_tick * clock.tick_hours + clock.phase_hours
    item_hours = [hours for hours in learned.item_hours if hours > began_hours]
    update_ticks = {placed for placed in learned.update_ticks if placed > source.added_tick}
    source.items += len(item_hours)
    source.delay_hours += sum(max(fetched_hours - hours, 0.0) for hours in item_hours)
    source.update_ticks += len(update_ticks)
    source.timely += tick in update_ticks
    return tuple(sorted(update_ticks))


def rhythm_figures(source: WatchedSource, prior: RhythmPrior) -> dict[str, float | None]:
    """The page's learned rhythm as gauges: update ticks per day it expects, and the hours of it known."""
    if not source.read_once:
        return {"updates_per_day": None, "known_hours": None}
    hours = (source.known_until - (source.known_from or source.known_until) + 1) * prior.tick_hours
    return {"updates_per_day": summarize_rhythm(prior, rhythm_counts(source), source.exposure).updates_per_day,
            "known_hours": hours}


def retrained_path(settings: Settings) -> Path:
    """Where `sourcewatch retrain revisit` swaps a better model in."""
    return settings.home / "models" / "revisit.pt"


def current_model_path(settings: Settings) -> Path:
    """The model workers run: the one set in the settings, else the last one retraining swapped in, else the
    default shipped in the package."""
    if settings.revisit_model is not None:
        return settings.revisit_model
    return retrained_path(settings) if retrained_path(settings).is_file() else DEFAULT_MODEL
