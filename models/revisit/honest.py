"""The honest-observation evaluation of the policies that read the recent update bits (the TSP model and the
logistic regression): over the window, a policy's input bits are what its own fetches showed.

A crawler learns only "new items since my last visit": bit 1 at a fetch tick when the page gained items
since the previous fetch, 0 at every other tick (fetched or not). Each source and threshold is rolled out
tick by tick, all of them batched per tick; before the window the crawler is taken to have fetched every
tick (its bits are the true ones there). Decisions feed the next tick's input, so every threshold has its
own rollout; a coarser grid than the oracle's keeps that affordable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from models.revisit.data import SourceSeries, cyclic_time_of
from models.revisit.model import GAP_CAP, WINDOW, UpdatePredictor, window_inputs
from models.revisit.policies import LAGS, fit_logistic

HONEST_THRESHOLDS = np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])

# (pair sources, pair ticks, pair bit windows (n, WINDOW) oldest first, position of each pair's last seen update
# before its window (negative; −GAP_CAP: none)) → P(update) per pair
StepScorer = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _tick_hours(sources: Sequence[SourceSeries]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """(pair sources, ticks of any shape after the first axis) → the ticks' ends in hours since the epoch."""
    starts = np.array([series.start.timestamp() / 3600 for series in sources])
    lengths = np.array([series.tick_hours for series in sources])

    def hours(pair_sources: np.ndarray, ticks: np.ndarray) -> np.ndarray:
        shape = (len(pair_sources),) + (1,) * (ticks.ndim - 1)
        return starts[pair_sources].reshape(shape) + ticks * lengths[pair_sources].reshape(shape)

    return hours


def model_step_scorer(model: UpdatePredictor, sources: Sequence[SourceSeries]) -> StepScorer:
    tick_hours = _tick_hours(sources)
    ids = torch.tensor([model.source_index(series.source_id) for series in sources], dtype=torch.long)
    model.eval()

    def score(pair_sources: np.ndarray, ticks: np.ndarray, bits: np.ndarray, prior: np.ndarray) -> np.ndarray:
        before = ticks[:, None] - np.arange(WINDOW, 0, -1)[None, :]
        times = cyclic_time_of(tick_hours(pair_sources, before).reshape(-1)).reshape(len(ticks), WINDOW, 6)
        inputs = window_inputs(bits, prior, times)
        with torch.inference_mode():
            return torch.sigmoid(model(torch.from_numpy(inputs), ids[pair_sources])).numpy()

    return score


def logistic_step_scorer(sources: Sequence[SourceSeries], fit_ends: Sequence[int]) -> StepScorer:
    tick_hours = _tick_hours(sources)
    fitted = [fit_logistic(series, fit_end) for series, fit_end in zip(sources, fit_ends)]
    weights = np.array([np.zeros(LAGS + 6) if isinstance(f, float) else f[0] for f in fitted])
    # A source whose training ticks are all alike keeps its constant rate as its logit.
    bias = np.array([np.log(max(f, 1e-9) / max(1 - f, 1e-9)) if isinstance(f, float) else f[1] for f in fitted])

    def score(pair_sources: np.ndarray, ticks: np.ndarray, bits: np.ndarray, prior: np.ndarray) -> np.ndarray:
        times = cyclic_time_of(tick_hours(pair_sources, ticks))
        features = np.concatenate([bits[:, ::-1], times], axis=1)  # lag 1 first, as in training
        logits = np.einsum("ij,ij->i", features, weights[pair_sources]) + bias[pair_sources]
        return 1 / (1 + np.exp(-logits))

    return score


def observed_rollout(sources: Sequence[SourceSeries], windows: Sequence[tuple[int, int]], score: StepScorer,
                     thresholds: np.ndarray = HONEST_THRESHOLDS) -> list[list[np.ndarray]]:
    """Fetch decisions per threshold (rows) and source (columns) over each source's window [a, b)."""
    count, k = len(sources), len(thresholds)
    pair_sources = np.repeat(np.arange(count), k)
    theta = np.tile(thresholds, count)
    starts = np.array([a for a, _ in windows])[pair_sources]
    lengths = np.array([b - a for a, b in windows])[pair_sources]
    offsets = np.cumsum([0] + [len(series.counts) for series in sources])
    truth = np.concatenate([series.updated for series in sources])
    history = offsets[pair_sources, None] + starts[:, None] - np.arange(WINDOW, 0, -1)[None, :]
    bits = truth[np.maximum(history, offsets[pair_sources, None])].astype(np.float32)
    # The last update seen before each pair's current window, as an absolute tick (−∞ as far back as needed).
    never = -(GAP_CAP + 1) - int(lengths.max(initial=0)) - WINDOW
    last_true = [np.maximum.accumulate(np.where(series.updated, np.arange(len(series.counts)), never))
                 for series in sources]
    last_seen = np.array([last_true[s][a - WINDOW - 1] if a - WINDOW - 1 >= 0 else never
                          for s, a in zip(pair_sources, starts)])
    pending = np.zeros(len(theta), dtype=bool)
    fetched = np.zeros((len(theta), int(lengths.max(initial=0))), dtype=bool)
    for step in range(fetched.shape[1]):
        active = np.flatnonzero(step < lengths)
        ticks = starts[active] + step
        prior = last_seen[active] - (ticks - WINDOW)
        fetch = score(pair_sources[active], ticks, bits[active], prior) >= theta[active]
        pending[active] |= truth[offsets[pair_sources[active]] + ticks]
        seen = fetch & pending[active]
        pending[active[fetch]] = False
        # The tick leaving the window becomes the "before the window" update when it was one.
        leaving = bits[active, 0] > 0
        last_seen[active[leaving]] = ticks[leaving] - WINDOW
        bits[active] = np.concatenate([bits[active, 1:], seen[:, None].astype(np.float32)], axis=1)
        fetched[active, step] = fetch
    return [[fetched[s * k + row, :lengths[s * k]] for s in range(count)] for row in range(k)]
