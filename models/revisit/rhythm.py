"""A page's publication rhythm, learned online from what a crawler knows of it, with a shared prior.

What a page publishes is summed per slot of the week — the hour of week at ticks shorter than a day, the day
of week at 1-day ticks — as update ticks seen (`counts`) and ticks observed (`exposure`: ticks whose updates
the crawler knows, from the oldest dated item of its first read to its last fetch). Both sums fade with a
half-life of HALF_LIFE_DAYS, so a page that changes its rhythm (a publisher moving to one nightly batch, a
page going quiet) is read by what it does now, not by its average over years. The per-tick rate of a
slot is estimated hierarchically (empirical Bayes), each level shrunk towards the one above by pseudo-counts:

    page rate   r = (N + A·r₀) / (E + A)                      the prior's rate r₀ worth A ticks
    hour shape  H_h = (n_h + b·g_h) / (r·e_h + b), b = B/24    the prior's hour-of-day shape g_h, B events in all
    day shape   D_d = (n_d + c·g_d) / (Σ_h r·H_h·e_dh + c), c = B/7    the prior's day-of-week shape g_d
    cell        λ = (n_c + K·r·H_h·D_d) / (e_c + K)            the hour of week itself, K ticks

and P(update in a tick) = 1 − exp(−λ). A new page starts at the prior (the shared clock of the training
pages); twenty dated items move it most of the way to its own clock; a page watched for weeks is read from
its own counts. One implementation serves the offline evaluation, the model's training and the stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

HOURS_PER_WEEK = 168
# Pseudo-counts: the prior's rate is worth two weeks of ticks; each shape three events in all (spread over its
# hours or days by the prior's shape); a cell four ticks.
RATE_STRENGTH_DAYS = 14.0
SHAPE_STRENGTH = 3.0
CELL_STRENGTH = 4.0
MIN_RATE = 1e-6
HALF_LIFE_DAYS = 56.0


def fading(tick_hours: float) -> float:
    """The factor each tick multiplies the sums by: a half-life of HALF_LIFE_DAYS."""
    return 0.5 ** (tick_hours / (HALF_LIFE_DAYS * 24))


def slot_count(tick_hours: float) -> int:
    """Slots of the week: hours of week at ticks shorter than a day, days of week at 1-day ticks."""
    return 7 if tick_hours >= 24 else HOURS_PER_WEEK


def slots_of(epoch_ticks: np.ndarray, tick_hours: float) -> np.ndarray:
    """The slot of the week (Monday first, UTC) of each tick by its start; tick i covers ((i−1)·h, i·h]."""
    start_hours = (np.asarray(epoch_ticks, dtype=np.float64) - 1) * tick_hours
    # 1970-01-01 was a Thursday (weekday 3).
    weekday = (np.floor(start_hours / 24) + 3) % 7
    if tick_hours >= 24:
        return weekday.astype(np.int64)
    return (weekday * 24 + np.floor(start_hours % 24)).astype(np.int64)


@dataclass(frozen=True)
class RhythmPrior:
    """What a page is taken to do before it shows its own rhythm: the training pages' typical rate per tick and
    their hour-of-day and day-of-week shapes (each averaging 1)."""

    tick_hours: float
    rate: float
    hour_shape: tuple[float, ...]
    day_shape: tuple[float, ...]

    @property
    def slots(self) -> int:
        return slot_count(self.tick_hours)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, saved: dict) -> RhythmPrior:
        return cls(float(saved["tick_hours"]), float(saved["rate"]), tuple(saved["hour_shape"]),
                   tuple(saved["day_shape"]))

    @classmethod
    def flat(cls, tick_hours: float, rate: float) -> RhythmPrior:
        """No shared clock: every hour and day alike."""
        return cls(tick_hours, rate, (1.0,) * 24, (1.0,) * 7)


def fit_prior(counts: np.ndarray, exposure: np.ndarray, tick_hours: float) -> RhythmPrior:
    """The prior from training pages' slot sums (pages × slots): the median page rate, and the mean over pages
    of each page's shape (its slots' rates relative to its own rate), so a few busy pages do not set it."""
    counts, exposure = np.asarray(counts, dtype=np.float64), np.asarray(exposure, dtype=np.float64)
    rates = counts.sum(1) / np.maximum(exposure.sum(1), 1)
    active = rates > 0
    rate = float(np.median(rates[active])) if active.any() else MIN_RATE
    days = counts.reshape(len(counts), 7, -1)
    day_exposure = exposure.reshape(len(exposure), 7, -1)

    def shape(axis: int, size: int) -> tuple[float, ...]:
        if not active.any():
            return (1.0,) * size
        per_slot = days.sum(axis) / np.maximum(day_exposure.sum(axis), 1)
        relative = per_slot[active] / rates[active, None]
        mean = relative.mean(0)
        return tuple(float(v) for v in mean / max(mean.mean(), 1e-12))

    hour_shape = shape(1, 24) if days.shape[2] == 24 else (1.0,) * 24
    return RhythmPrior(tick_hours, max(rate, MIN_RATE), hour_shape, shape(2, 7))


def slot_rates(prior: RhythmPrior, counts: np.ndarray, exposure: np.ndarray) -> np.ndarray:
    """λ per slot (..., slots): the expected update ticks per tick in each slot of the week (see the module)."""
    counts, exposure = np.asarray(counts, dtype=np.float64), np.asarray(exposure, dtype=np.float64)
    rate_strength = RATE_STRENGTH_DAYS * 24 / prior.tick_hours
    rate = (counts.sum(-1) + rate_strength * prior.rate) / (exposure.sum(-1) + rate_strength)
    day_shape, per_day = np.asarray(prior.day_shape), SHAPE_STRENGTH / 7
    if prior.slots == 7:
        day = (counts + per_day * day_shape) / (rate[..., None] * exposure + per_day)
        return np.maximum(rate[..., None] * day, MIN_RATE)
    cells = counts.reshape(*counts.shape[:-1], 7, 24)
    cell_exposure = exposure.reshape(*exposure.shape[:-1], 7, 24)
    hour_shape, per_hour = np.asarray(prior.hour_shape), SHAPE_STRENGTH / 24
    hour = (cells.sum(-2) + per_hour * hour_shape) / (rate[..., None] * cell_exposure.sum(-2) + per_hour)
    expected = (rate[..., None, None] * hour[..., None, :] * cell_exposure).sum(-1)
    day = (cells.sum(-1) + per_day * day_shape) / (expected + per_day)
    factored = rate[..., None, None] * day[..., :, None] * hour[..., None, :]
    cell = (cells + CELL_STRENGTH * factored) / (cell_exposure + CELL_STRENGTH)
    return np.maximum(cell.reshape(counts.shape), MIN_RATE)


def tick_probabilities(rates: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """P(≥ 1 update in each tick) from the slot rates (pages × slots) at each page's ticks' slots (pages × k)."""
    return 1 - np.exp(-np.take_along_axis(rates, slots, axis=-1))


def with_day_counts(counts: np.ndarray, day_counts: np.ndarray) -> np.ndarray:
    """Hour-of-week counts (168) with the updates known only by their day of week (7) spread over that day's
    hours in proportion to the page's own hour-of-day profile from its timed updates (SHAPE_STRENGTH events
    spread evenly where it has few): the E-step for updates whose hour the listing does not say, redone with
    what the page has shown since. Day-of-week counts (7 slots) have no hours: returned as they are plus the
    day counts."""
    counts, day_counts = np.asarray(counts, dtype=np.float64), np.asarray(day_counts, dtype=np.float64)
    if counts.shape[-1] == 7:
        return counts + day_counts
    hours = counts.reshape(*counts.shape[:-1], 7, 24).sum(-2)
    profile = (hours + SHAPE_STRENGTH / 24) / (hours.sum(-1, keepdims=True) + SHAPE_STRENGTH)
    return counts + (day_counts[..., :, None] * profile[..., None, :]).reshape(counts.shape)


def mean_tick_probability(prior: RhythmPrior, counts: np.ndarray, exposure: np.ndarray) -> np.ndarray:
    """The page's P(update) in a tick, averaged over the slots of the week (...,)."""
    return (1 - np.exp(-slot_rates(prior, counts, exposure))).mean(-1)


def relative_odds(probabilities: np.ndarray, page_probabilities: np.ndarray) -> np.ndarray:
    """The odds of an update in a tick over the page's own mean odds: how much likelier than usual this tick
    is for this page (see models.revisit.rhythm_model on why decisions use it)."""
    p = np.clip(probabilities, 1e-9, 1 - 1e-9)
    base = np.clip(page_probabilities, 1e-9, 1 - 1e-9)
    return (p / (1 - p)) / (base / (1 - base))


def slot_sums(update_ticks: np.ndarray, update_weights: np.ndarray, observed_ticks: np.ndarray, as_of: int,
              tick_hours: float) -> tuple[np.ndarray, np.ndarray]:
    """(counts, exposure) per slot, faded to tick `as_of`: the updates at these epoch ticks (each with its
    weight: a share of an item whose tick is not known exactly) and the ticks observed."""
    size, fade = slot_count(tick_hours), fading(tick_hours)
    update_ticks, observed_ticks = np.asarray(update_ticks), np.asarray(observed_ticks)
    counts = np.bincount(slots_of(update_ticks, tick_hours), minlength=size,
                         weights=np.asarray(update_weights, dtype=np.float64) * fade ** (as_of - update_ticks))
    exposure = np.bincount(slots_of(observed_ticks, tick_hours), weights=fade ** (as_of - observed_ticks),
                           minlength=size)
    return counts.astype(np.float64), exposure.astype(np.float64)


@dataclass(frozen=True)
class RhythmSummary:
    """A page's learned rhythm, as `watch --status` shows it."""

    # Update ticks per day expected (a tick with several items counts once).
    updates_per_day: float
    # The slots with the highest rate, as labels ("Mon 21:00" or "Mon"), busiest first; none until the page
    # itself has shown an update lately (else they would be the prior's, alike on every page).
    peaks: tuple[str, ...]
    # Share of the week's expected updates in those peak slots.
    peak_share: float


WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# The page's own updates (faded) before its peaks are told: an update within the last half-life. (A stale
# listing's twenty items of a year or two ago sum to ~0.2; one update at the moment of a read fades below 1.)
MIN_PEAK_EVIDENCE = 0.5


def summarize_rhythm(prior: RhythmPrior, counts: Sequence[float], exposure: Sequence[float],
                     peaks: int = 3) -> RhythmSummary:
    rates = slot_rates(prior, np.asarray(counts), np.asarray(exposure))
    ticks_per_slot = HOURS_PER_WEEK / prior.slots / prior.tick_hours
    per_week = float(rates.sum() * ticks_per_slot)
    top = np.argsort(-rates)[:peaks] if float(np.sum(counts)) >= MIN_PEAK_EVIDENCE else np.array([], dtype=int)
    labels = tuple(WEEKDAYS[slot] if prior.slots == 7 else f"{WEEKDAYS[slot // 24]} {slot % 24:02d}:00"
                   for slot in top)
    return RhythmSummary(round(per_week / 7, 3), labels, round(float(rates[top].sum() / max(rates.sum(), 1e-12)), 3))
