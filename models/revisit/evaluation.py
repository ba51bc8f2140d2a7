"""Revisit policies on real update series with DESIGN.md's metrics, every policy in the same run.

Per source and window: timeliness = Σ c·y / Σ y, friendliness = Σ (1−c)(1−y) / Σ (1−y), mean detection delay
(hours from an item's publication to the first fetch after it; an item no fetch follows counts until the end
of the window), fetches per new item. Macro = mean over sources, micro = pooled. Thresholds are chosen on the
validation window (the end of each source's training part, the policy fitted before it) and applied to the
test part (the policy refitted on the whole training part); never on the test part. The model and the
logistic regression read the true update bits (the oracle variant) and, as `*_honest`, only what their own
fetches showed (models.revisit.honest).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

import numpy as np

from models.revisit.data import SourceSeries
from models.revisit.honest import (
    HONEST_THRESHOLDS,
    StepScorer,
    logistic_step_scorer,
    model_step_scorer,
    observed_rollout,
)
from models.revisit.model import UpdatePredictor
from models.revisit.model import train as train_predictor
from models.revisit.policies import adaptive, hour_of_week, logistic, poisson, rc

RC_RANGE = range(1, 24)
# Hourly update probabilities of quiet sources are far below 1 %: the grid reaches down to 1e-5.
THRESHOLDS = np.unique(np.concatenate([np.geomspace(1e-5, 0.05, 25), np.linspace(0.06, 0.96, 31)]))
TARGETS = {"at_t95": 0.95, "at_t90": 0.90}
DEFAULT_THRESHOLD = 0.5
# name → P(update) of each window tick: (series, fit_end, a, b) → probabilities
SCORED: dict[str, Callable[[SourceSeries, int, int, int], np.ndarray]] = {
    "how": hour_of_week, "logreg": logistic,
}


def window_counts(series: SourceSeries, a: int, b: int, fetch: np.ndarray) -> np.ndarray:
    """The sums a window's metrics are made of: [Σ c·y, Σ y, Σ (1−c)(1−y), Σ (1−y), Σ delay hours, items,
    fetches]."""
    updated = series.updated[a:b]
    tick = series.tick_hours
    hours = series.event_hours[(series.event_hours > (a - 1) * tick) & (series.event_hours <= (b - 1) * tick)]
    # The end of the window stands for "never fetched after it".
    fetch_ends = np.append((np.flatnonzero(fetch) + a) * tick, (b - 1) * tick)
    seen = fetch_ends[np.searchsorted(fetch_ends, hours, side="left")]
    return np.array([np.sum(fetch & updated), np.sum(updated), np.sum(~fetch & ~updated), np.sum(~updated),
                     float(np.sum(seen - hours)), len(hours), np.sum(fetch)], dtype=float)


def summarize(per_source: Sequence[np.ndarray]) -> dict:
    """Macro (mean over sources) and micro (pooled) figures of a policy's window counts."""
    def figures(counts: np.ndarray) -> dict:
        hit, updates, rest, quiet, delay, items, fetches = counts
        return {"timeliness": hit / updates if updates else None, "friendliness": rest / quiet if quiet else None,
                "delay_h": delay / items if items else None, "fetches_per_item": fetches / items if items else None}

    each = [figures(counts) for counts in per_source]
    macro = {key: _mean(f[key] for f in each) for key in ("timeliness", "friendliness", "delay_h", "fetches_per_item")}
    micro = {key: round4(value) for key, value in figures(np.sum(per_source, axis=0)).items()}
    return macro | {"micro": micro}


def _mean(values) -> float | None:
    present = [value for value in values if value is not None]
    return round4(statistics.fmean(present)) if present else None


def round4(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _windows(series: SourceSeries, validation: bool) -> tuple[int, int, int]:
    """(fit end, window start, window end) of the validation or the test window."""
    if validation:
        return series.validation_start, series.validation_start, series.train_end
    return series.train_end, series.train_end, len(series.counts)


Scorer = Callable[[SourceSeries, int, int, int], np.ndarray]


def _train_model(sources: Sequence[SourceSeries], validation: bool,
                 progress: Callable[[str], None] | None) -> UpdatePredictor:
    """The global TSP model trained on every source's ticks before the window."""
    fit_ends = [_windows(series, validation)[0] for series in sources]
    return train_predictor(sources, fit_ends, progress=(lambda epoch, loss: progress(
        f"model ({'validation' if validation else 'test'}): epoch {epoch}, loss {loss:.3f}")) if progress else None)


def _per_source_scorer(sources: Sequence[SourceSeries], validation: bool) -> Scorer:
    """The paper's set-up: one TSP model per source, trained on that source's ticks before the window."""
    models = {series.source_id: train_predictor([series], [_windows(series, validation)[0]]) for series in sources}
    return lambda series, fit_end, a, b: models[series.source_id].probabilities(series, a, b)


def thresholded_counts(name: str, sources: Sequence[SourceSeries], validation: bool,
                 scorer: Scorer | None = None) -> list[list[np.ndarray]]:
    """Window counts per threshold (rows) and source (columns)."""
    grid: list[list[np.ndarray]] = [[] for _ in THRESHOLDS]
    for series in sources:
        fit_end, a, b = _windows(series, validation)
        if name == "poisson":
            decisions = [poisson(series, fit_end, a, b, threshold) for threshold in THRESHOLDS]
        else:
            probabilities = (scorer or SCORED[name])(series, fit_end, a, b)
            decisions = [probabilities >= threshold for threshold in THRESHOLDS]
        for row, fetch in zip(grid, decisions):
            row.append(window_counts(series, a, b, fetch))
    return grid


def choose_threshold(validation: list[list[np.ndarray]], target: float) -> int | None:
    """The threshold index with the highest macro friendliness whose macro timeliness reaches the target."""
    best = None
    for index, row in enumerate(validation):
        figures = summarize(row)
        if (figures["timeliness"] or 0) >= target and (
                best is None or (figures["friendliness"] or 0) > best[1]):
            best = (index, figures["friendliness"] or 0)
    return best[0] if best else None


def _thresholded_result(validation: list[list[np.ndarray]], test: list[list[np.ndarray]],
                        thresholds: np.ndarray) -> dict:
    """A thresholded policy's figures: at the default threshold, the test curve, and at the thresholds
    chosen on validation for each target."""
    default = int(np.argmin(np.abs(thresholds - DEFAULT_THRESHOLD)))
    curve = [summarize(row) for row in test]
    result = summarize(test[default]) | {"threshold": float(f"{thresholds[default]:.3g}"),
                                         # (timeliness, friendliness) on test at every threshold
                                         "curve": [[c["timeliness"], c["friendliness"]] for c in curve]}
    for key, target in TARGETS.items():
        chosen = choose_threshold(validation, target)
        result[key] = None if chosen is None else (
            summarize(test[chosen]) | {"threshold": float(f"{thresholds[chosen]:.3g}")})
    return result


def _honest_counts(sources: Sequence[SourceSeries], validation: bool, score: StepScorer) -> list[list[np.ndarray]]:
    windows = [_windows(series, validation) for series in sources]
    decisions = observed_rollout(sources, [(a, b) for _, a, b in windows], score)
    return [[window_counts(series, a, b, fetch) for series, (_, a, b), fetch in zip(sources, windows, row)]
            for row in decisions]


def evaluate_policies(sources: Sequence[SourceSeries], progress: Callable[[str], None] | None = None,
                      with_model: bool = True, per_source: bool = False) -> dict:
    """Every policy's test figures; thresholded ones also at the thresholds chosen on validation. The model
    and the logistic regression are also rolled out on honest observations (`model_honest`,
    `logreg_honest`); `per_source` adds the paper's one-model-per-source set-up (`model_per_source`)."""
    def step(name: str) -> None:
        if progress:
            progress(name)

    results: dict[str, dict] = {}
    test_windows = [_windows(series, validation=False) for series in sources]
    for k in RC_RANGE:
        results[f"rc_{k}"] = summarize([window_counts(s, a, b, rc(b - a, k))
                                        for s, (_, a, b) in zip(sources, test_windows)])
    results["adaptive"] = summarize([window_counts(s, a, b, adaptive(s, a, b))
                                     for s, (_, a, b) in zip(sources, test_windows)])
    for name in ("poisson", *SCORED):
        step(name)
        results[name] = _thresholded_result(thresholded_counts(name, sources, True),
                                            thresholded_counts(name, sources, False), THRESHOLDS)
    step("logreg on honest observations")
    results["logreg_honest"] = _thresholded_result(*(_honest_counts(sources, phase, logistic_step_scorer(
        sources, [_windows(series, phase)[0] for series in sources])) for phase in (True, False)), HONEST_THRESHOLDS)
    if with_model:
        step("model")
        models = [_train_model(sources, phase, progress) for phase in (True, False)]
        results["model"] = _thresholded_result(*(thresholded_counts(
            "model", sources, phase, lambda series, fit_end, a, b, m=model: m.probabilities(series, a, b))
            for phase, model in zip((True, False), models)), THRESHOLDS)
        step("model on honest observations")
        results["model_honest"] = _thresholded_result(*(_honest_counts(sources, phase, model_step_scorer(
            model, sources)) for phase, model in zip((True, False), models)), HONEST_THRESHOLDS)
    if per_source:
        step("one model per source")
        results["model_per_source"] = _thresholded_result(*(thresholded_counts(
            "model", sources, phase, _per_source_scorer(sources, phase)) for phase in (True, False)), THRESHOLDS)
    return results
