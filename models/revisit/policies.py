"""Revisit policies behind one interface: given a source's history up to a tick, decide at which later ticks to
fetch its page.

Every policy learns from ticks [0, fit_end) — what a crawler fetching at every tick would have observed — and
decides over a window of ticks [a, b). During the window a policy learns only what its own fetches show
("new items since my last visit"), never the exact update ticks, except where a policy says it is the
oracle variant. Thresholded policies give each window tick a probability; `decide(θ)` fetches where it
is ≥ θ.

- RC(k): every k ticks (Shi et al.'s fixed-interval baseline).
- Adaptive interval (Nutch/StormCrawler): start at 6 ticks, × 0.5 after a visit that found new items,
  × 1.5 after one that did not, bounded to 1…168 ticks.
- Poisson (Cho & Garcia-Molina): the change rate λ estimated from the training ticks with their estimator
  λ̂ = −ln((n − X + 0.5) / (n + 0.5)) (n visits, X visits that found a change); fetch when the probability
  of a change since the last visit, 1 − e^(−λ̂Δ), reaches θ — a per-source fixed interval.
- Hour of week (day of week at 1-day ticks): the training share of ticks in that slot with an update
  (smoothed by one pseudo-tick at the source's overall rate) ≥ θ.
- Logistic regression per source on the last 10 ticks' update bits and the cyclic time of day, week and
  month; its lags are the true bits (oracle variant: a crawler only knows them where it fetched).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from models.revisit.data import SourceSeries, cyclic_time

ADAPTIVE_START, ADAPTIVE_SHRINK, ADAPTIVE_GROW, ADAPTIVE_BOUNDS = 6.0, 0.5, 1.5, (1.0, 168.0)
LAGS = 10


def rc(n_ticks: int, k: int) -> np.ndarray:
    """Fetch every k-th tick of the window."""
    return (np.arange(1, n_ticks + 1) % k) == 0


def adaptive(series: SourceSeries, a: int, b: int) -> np.ndarray:
    """The adaptive interval; each visit sees whether the page gained items since the previous one."""
    fetch = np.zeros(b - a, dtype=bool)
    updated = series.updated
    interval, low, high = ADAPTIVE_START, *ADAPTIVE_BOUNDS
    last, position = a - 1, a - 1 + math.ceil(interval)
    while position < b:
        fetch[position - a] = True
        changed = bool(updated[last + 1:position + 1].any())
        interval = max(low, interval * ADAPTIVE_SHRINK) if changed else min(high, interval * ADAPTIVE_GROW)
        last, position = position, position + math.ceil(interval)
    return fetch


def poisson_rate(series: SourceSeries, fit_end: int) -> float:
    """Cho & Garcia-Molina's estimate of the change rate per tick from visits at every training tick."""
    visits, changes = fit_end, int(series.updated[:fit_end].sum())
    return -math.log((visits - changes + 0.5) / (visits + 0.5))


def poisson(series: SourceSeries, fit_end: int, a: int, b: int, threshold: float) -> np.ndarray:
    rate = poisson_rate(series, fit_end)
    interval = max(1, math.ceil(-math.log(1 - threshold) / rate)) if rate > 0 else b - a + 1
    return rc(b - a, interval)


def hour_of_week(series: SourceSeries, fit_end: int, a: int, b: int) -> np.ndarray:
    """P(update) of each window tick: the training share of updated ticks in its slot of the week."""
    per_week = 7 if series.tick_hours >= 24 else 168
    train_slots = series.slots(np.arange(fit_end), per_week)
    updates = np.bincount(train_slots, weights=series.updated[:fit_end], minlength=per_week)
    seen = np.bincount(train_slots, minlength=per_week)
    # One pseudo-tick at the source's overall rate per slot: a slot that never saw an update ranks by how
    # active the source is, not at a flat zero no threshold can tell apart.
    rates = (updates + series.updated[:fit_end].mean()) / (seen + 1)
    return rates[series.slots(np.arange(a, b), per_week)]


def _features(series: SourceSeries, ticks: np.ndarray) -> np.ndarray:
    updated = series.updated.astype(float)
    lags = np.stack([updated[ticks - lag] for lag in range(1, LAGS + 1)], axis=1)
    return np.concatenate([lags, cyclic_time(series, ticks)], axis=1)


def fit_logistic(series: SourceSeries, fit_end: int) -> tuple[np.ndarray, float] | float:
    """A per-source logistic regression (balanced classes: updates are rare) on the ticks before fit_end: its
    (coefficients, intercept) over the features (lags 1…10, then cyclic time), or the constant rate when the
    training ticks are all alike."""
    train = np.arange(LAGS, fit_end)
    labels = series.updated[train]
    if labels.all() or not labels.any():
        return float(labels.mean())
    model = LogisticRegression(class_weight="balanced", max_iter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(_features(series, train), labels)
    return model.coef_[0], float(model.intercept_[0])


def logistic(series: SourceSeries, fit_end: int, a: int, b: int) -> np.ndarray:
    """P(update) of each window tick from the per-source logistic regression, on the true lags."""
    fitted = fit_logistic(series, fit_end)
    if isinstance(fitted, float):
        return np.full(b - a, fitted)
    weights, bias = fitted
    return 1 / (1 + np.exp(-(_features(series, np.arange(a, b)) @ weights + bias)))
