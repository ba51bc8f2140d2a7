"""`sourcewatch eval revisit --cold-start`: every revisit policy watching pages it never trained on, from what a
first read of each listing shows, on honest observations.

Sources are split into folds by source. For each fold, what learns across pages (the rhythm prior, TSP-R)
learns from the other folds' sources: a first model before their validation windows, whose rollouts there
(a cold start at each window's beginning) choose every policy's threshold, and a final model on their whole
training parts; the held-out fold's sources are then watched over their test span. A watch starts with the listing's first
read: its last FIRST_READ_ITEMS items, dated at the series' resolution, so the page's updates from the oldest
of them to the watch's start are known. From then on a policy learns only what its own fetches show: a fetch
at tick t reveals the ticks since the previous fetch with their dated updates; ticks since the last fetch
stay unknown. Every policy — fixed intervals, the adaptive interval, Poisson with Cho's estimator, the slot
of the week, the logistic regression, the rhythm alone, the previous TSP model, TSP-R — runs the same
protocol, online; thresholded ones are rolled out per threshold (decisions change what is revealed). TSP-R
and the rhythm decide on relative odds (models.revisit.rhythm_model), over their own grid of thresholds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from models.revisit.data import SourceSeries, cyclic_time_of
from models.revisit.evaluation import RC_RANGE, TARGETS, choose_threshold, round4, summarize, window_counts
from models.revisit.model import WINDOW as TSP_WINDOW
from models.revisit.model import UpdatePredictor, window_inputs
from models.revisit.policies import LAGS, adaptive, rc
from models.revisit.rhythm import fading, mean_tick_probability, relative_odds, slot_count, slot_rates, slots_of
from models.revisit.rhythm_model import (
    FIRST_READ_ITEMS,
    GAP_CAP,
    ODDS_GRID,
    KnownWindow,
    RhythmLSTM,
    epoch_start,
    first_read_start,
    series_slot_sums,
    train,
)
from models.revisit.schedule import Rules, starvation_ticks

# Thresholds of the policies that score P(update); those scoring relative odds (TSP-R, the rhythm) use
# ODDS_GRID.
GRID = np.geomspace(1e-6, 0.9, 24)
ODDS_POLICIES = frozenset({"model", "rhythm"})
FOLDS = 3
NEVER = -10 * GAP_CAP
# The online logistic regression is refitted every two weeks of ticks, on at most its last LOGREG_ROWS ticks.
LOGREG_REFIT_DAYS = 14
LOGREG_ROWS = 4000


class Watching:
    """Pairs (source, threshold) watched tick by tick over each source's window [a, b), from a first read at a."""

    def __init__(self, sources: Sequence[SourceSeries], windows: Sequence[tuple[int, int]], thresholds: np.ndarray):
        count, k = len(sources), len(thresholds)
        self.sources, self.tick_hours = sources, sources[0].tick_hours
        self.pair_source = np.repeat(np.arange(count), k)
        self.theta = np.tile(thresholds, count)
        self.thresholds = thresholds
        self.start = np.array([a for a, _ in windows])[self.pair_source]
        self.length = np.array([b - a for a, b in windows])[self.pair_source]
        self.offsets = np.cumsum([0] + [len(series.counts) for series in sources])[:-1]
        self.truth = np.concatenate([series.updated for series in sources])
        self.origin = np.array([epoch_start(series) for series in sources])
        every = [np.arange(len(series.counts)) for series in sources]
        self.last_true = np.concatenate([np.maximum.accumulate(np.where(series.updated, ticks, NEVER))
                                         for series, ticks in zip(sources, every)])
        firsts = np.array([first_read_start(series, a) for series, (a, _) in zip(sources, windows)])
        sums = [series_slot_sums(series, first, a) for series, first, (a, _) in zip(sources, firsts, windows)]
        self.first = firsts[self.pair_source]
        self.counts = np.array([c for c, _ in sums])[self.pair_source]
        self.exposure = np.array([e for _, e in sums])[self.pair_source]
        self.last_fetch = self.start - 1
        seen = self.last_true[self.offsets[self.pair_source] + np.maximum(self.start - 1, 0)]
        self.last_update = np.where((self.start > 0) & (seen >= self.first), seen, NEVER)
        size = slot_count(self.tick_hours)
        self.pending_counts = np.zeros((len(self.theta), size))
        self.pending_exposure = np.zeros((len(self.theta), size))
        self.pending_last = np.full(len(self.theta), NEVER)

    def known_window(self, pairs: np.ndarray, ticks: np.ndarray, width: int) -> KnownWindow:
        """What the pairs know of the `width` ticks ending at `ticks` (series ticks)."""
        source = self.pair_source[pairs]
        window = ticks[:, None] - np.arange(width - 1, -1, -1)[None, :]
        first, fetched = self.first[pairs], self.last_fetch[pairs]
        known = (window >= first[:, None]) & (window <= fetched[:, None])
        updated = self.truth[self.offsets[source, None] + np.clip(window, 0, None)] & known
        before = np.minimum(window[:, 0] - 1, fetched)
        seen = self.last_true[self.offsets[source] + np.clip(before, 0, None)]
        last_before = np.where((before >= 0) & (seen >= first), seen, NEVER)
        origin = self.origin[source]
        return KnownWindow(window + origin[:, None], known, updated, last_before + origin, fetched + origin,
                           self.counts[pairs], self.exposure[pairs])

    def epoch_ticks(self, pairs: np.ndarray, ticks: np.ndarray) -> np.ndarray:
        return self.origin[self.pair_source[pairs]] + ticks

    def run(self, score: Callable[[Watching, np.ndarray, np.ndarray], np.ndarray],
            rules: Rules | None = None) -> list[list[np.ndarray]]:
        """Fetch decisions per threshold (rows) and source (columns); `rules`: the scheduler's longest interval
        and probes beside the score (models.revisit.schedule). Pairs of one source that fetched last at the
        same tick know the same, so each such group is scored once."""
        fetched = np.zeros((len(self.theta), int(self.length.max(initial=0))), dtype=bool)
        fade = fading(self.tick_hours)
        for step in range(fetched.shape[1]):
            active = np.flatnonzero(step < self.length)
            ticks = self.start[active] + step
            slots = slots_of(self.epoch_ticks(active, ticks), self.tick_hours)
            updated = self.truth[self.offsets[self.pair_source[active]] + ticks]
            for sums in (self.counts, self.exposure, self.pending_counts, self.pending_exposure):
                sums[active] *= fade
            self.pending_exposure[active, slots] += 1
            self.pending_counts[active[updated], slots[updated]] += 1
            self.pending_last[active[updated]] = ticks[updated]
            knowing = self.pair_source[active].astype(np.int64) * (1 << 32) + self.last_fetch[active]
            _, representative, same = np.unique(knowing, return_index=True, return_inverse=True)
            known = active[representative]
            probability = score(self, known, ticks[representative])[same.reshape(-1)]
            fetch = probability >= self.theta[active]
            if rules is not None:
                fetch |= self._by_rules(rules, known, ticks[representative])[same.reshape(-1)]
            self._reveal(active[fetch], ticks[fetch])
            fetched[active, step] = fetch
        k = len(self.thresholds)
        return [[fetched[s * k + row, :self.length[s * k]] for s in range(len(self.sources))] for row in range(k)]

    def _by_rules(self, rules: Rules, pairs: np.ndarray, ticks: np.ndarray) -> np.ndarray:
        """Whether the scheduler's rules fetch each pair at its tick, whatever the score."""
        since = ticks - self.last_fetch[pairs]
        starved = rules.starved(self.counts[pairs], self.exposure[pairs], self.epoch_ticks(pairs, ticks), since)
        slots = slots_of(self.epoch_ticks(pairs, ticks), self.tick_hours)
        keys = [self.sources[source].source_id for source in self.pair_source[pairs]]
        return starved | rules.explored(keys, self.epoch_ticks(pairs, ticks),
                                        self.exposure[pairs, slots])

    def _reveal(self, pairs: np.ndarray, ticks: np.ndarray) -> None:
        """A fetch at `ticks`: the updates since the previous fetch become known, dated."""
        self.counts[pairs] += self.pending_counts[pairs]
        self.exposure[pairs] += self.pending_exposure[pairs]
        self.pending_counts[pairs] = 0
        self.pending_exposure[pairs] = 0
        self.last_update[pairs] = np.maximum(self.last_update[pairs], self.pending_last[pairs])
        self.pending_last[pairs] = NEVER
        self.last_fetch[pairs] = ticks


Scorer = Callable[[Watching, np.ndarray, np.ndarray], np.ndarray]
# A thresholded policy: its score and the scheduler's rules beside it (None: the score alone).
Policy = tuple[Scorer, Rules | None]


@dataclass(frozen=True)
class Schedule:
    """The scheduler's rules the policies sourcewatch runs are evaluated with (the settings'
    revisit_max_interval_hours and revisit_exploration_share; None/0: the score alone)."""

    max_interval_hours: float | None = None
    exploration_share: float = 0.0

    def rules(self, model: RhythmLSTM) -> Rules:
        return Rules(model.prior, starvation_ticks(self.max_interval_hours, model.tick_hours), self.exploration_share)


def how_scorer(watching: Watching, pairs: np.ndarray, ticks: np.ndarray) -> np.ndarray:
    """The slot of the week online: its share of known ticks with an update, one pseudo-tick at the page's rate."""
    counts, exposure = watching.counts[pairs], watching.exposure[pairs]
    slot = slots_of(watching.epoch_ticks(pairs, ticks), watching.tick_hours)[:, None]
    rate = counts.sum(1) / np.maximum(exposure.sum(1), 1)
    return ((np.take_along_axis(counts, slot, 1)[:, 0] + rate) / (np.take_along_axis(exposure, slot, 1)[:, 0] + 1))


def poisson_scorer(watching: Watching, pairs: np.ndarray, ticks: np.ndarray) -> np.ndarray:
    """Cho & Garcia-Molina's rate from the known ticks; P(a change since the last fetch)."""
    visits, changes = watching.exposure[pairs].sum(1), watching.counts[pairs].sum(1)
    rate = -np.log((visits - changes + 0.5) / (visits + 0.5))
    return 1 - np.exp(-rate * (ticks - watching.last_fetch[pairs]))


def rhythm_scorer(model: RhythmLSTM) -> Scorer:
    """The rhythm alone (the model's baseline, without its LSTM), deciding as the model does: on relative odds."""
    def score(watching: Watching, pairs: np.ndarray, ticks: np.ndarray) -> np.ndarray:
        counts, exposure = watching.counts[pairs], watching.exposure[pairs]
        rates = slot_rates(model.prior, counts, exposure)
        slot = slots_of(watching.epoch_ticks(pairs, ticks), watching.tick_hours)[:, None]
        probabilities = 1 - np.exp(-np.take_along_axis(rates, slot, 1)[:, 0])
        return relative_odds(probabilities, mean_tick_probability(model.prior, counts, exposure))
    return score


def model_scorer(model: RhythmLSTM) -> Scorer:
    """TSP-R's decision score: the relative odds of its P (models.revisit.rhythm_model)."""
    return lambda watching, pairs, ticks: model.priority(watching.known_window(pairs, ticks, model.window))


def previous_model_scorer(model: UpdatePredictor) -> Scorer:
    """The TSP model before TSP-R (its cold-start row) reading the known update bits of its 10-tick window."""
    def score(watching: Watching, pairs: np.ndarray, ticks: np.ndarray) -> np.ndarray:
        window = watching.known_window(pairs, ticks - 1, TSP_WINDOW)
        prior = np.maximum(window.last_update_before - window.ticks[:, 0], -GAP_CAP)
        times = cyclic_time_of((window.ticks * watching.tick_hours).reshape(-1)).reshape(len(pairs), TSP_WINDOW, 6)
        inputs = torch.from_numpy(window_inputs(window.updated, prior, times))
        with torch.inference_mode():
            return torch.sigmoid(model(inputs, torch.zeros(len(pairs), dtype=torch.long))).numpy()
    model.eval()
    return score


class OnlineLogistic:
    """A per-source logistic regression (lags 1…10, cyclic time), refitted every LOGREG_REFIT_DAYS on the ticks
    every threshold's watch of the source already knows; scored on each pair's known lags (unknown: 0)."""

    def __init__(self) -> None:
        self.fitted: dict[int, tuple[np.ndarray, float]] = {}
        self.fitted_at: dict[int, int] = {}

    def _refit(self, watching: Watching, source: int, tick: int) -> None:
        pairs = np.flatnonzero(watching.pair_source == source)
        known_until = int(watching.last_fetch[pairs].min())
        first = int(watching.first[pairs[0]])
        start = max(first + LAGS, known_until + 1 - LOGREG_ROWS)
        series = watching.sources[source]
        rows = np.arange(start, known_until + 1)
        labels = series.updated[rows] if len(rows) else np.zeros(0, dtype=bool)
        if not len(rows) or labels.all() or not labels.any():
            rate = float(labels.mean()) if len(rows) else 0.0
            self.fitted[source] = (np.zeros(LAGS + 6), math.log(max(rate, 1e-6) / max(1 - rate, 1e-6)))
        else:
            lags = np.stack([series.updated[rows - lag] for lag in range(1, LAGS + 1)], axis=1)
            times = cyclic_time_of((watching.origin[source] + rows) * watching.tick_hours)
            model = LogisticRegression(class_weight="balanced", max_iter=200)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(np.concatenate([lags, times], axis=1), labels)
            self.fitted[source] = (model.coef_[0], float(model.intercept_[0]))
        self.fitted_at[source] = tick

    def __call__(self, watching: Watching, pairs: np.ndarray, ticks: np.ndarray) -> np.ndarray:
        every = round(LOGREG_REFIT_DAYS * 24 / watching.tick_hours)
        sources = watching.pair_source[pairs]
        for source, tick in zip(*np.unique(np.stack([sources, ticks]), axis=1)):
            if source not in self.fitted or tick - self.fitted_at[source] >= every:
                self._refit(watching, int(source), int(tick))
        window = watching.known_window(pairs, ticks - 1, LAGS)
        features = np.concatenate([window.updated[:, ::-1].astype(float),
                                   cyclic_time_of(watching.epoch_ticks(pairs, ticks) * watching.tick_hours)], axis=1)
        weights = np.stack([self.fitted[s][0] for s in sources])
        bias = np.array([self.fitted[s][1] for s in sources])
        return 1 / (1 + np.exp(-(np.einsum("ij,ij->i", features, weights) + bias)))


def fold_of(sources: Sequence[SourceSeries], folds: int, seed: int = 0) -> np.ndarray:
    """Each source's fold: a seeded shuffle of the sources dealt round."""
    order = np.random.default_rng(seed).permutation(len(sources))
    assigned = np.empty(len(sources), dtype=int)
    assigned[order] = np.arange(len(sources)) % folds
    return assigned


def grid_of(policy: str) -> np.ndarray:
    return ODDS_GRID if policy in ODDS_POLICIES else GRID


def _grid_counts(sources: Sequence[SourceSeries], windows: Sequence[tuple[int, int]], policy: Policy,
                 grid: np.ndarray) -> list[list[np.ndarray]]:
    score, rules = policy
    decisions = Watching(sources, windows, grid).run(score, rules)
    return [[window_counts(series, a, b, fetch) for series, (a, b), fetch in zip(sources, windows, row)]
            for row in decisions]


def validation_windows(sources: Sequence[SourceSeries]) -> list[tuple[int, int]]:
    return [(series.validation_start, series.train_end) for series in sources]


def test_windows(sources: Sequence[SourceSeries]) -> list[tuple[int, int]]:
    return [(series.train_end, len(series.counts)) for series in sources]


def fold_policies(train_sources: Sequence[SourceSeries], previous: UpdatePredictor | None, seed: int,
                  schedule: Schedule, progress: Callable[[str], None] | None
                  ) -> dict[str, tuple[Callable[[], Policy], Callable[[], Policy]]]:
    """Every thresholded policy as (policy for the validation watches, policy for the test watches), a new
    scorer per rollout. What learns across pages learns from these sources: before their validation windows
    for the validation watches (where thresholds are chosen), from their whole training parts for the test
    watches — the recipe `train revisit` ships (models.revisit.training). The policies sourcewatch runs (TSP-R
    and the rhythm it corrects) decide with the scheduler's rules beside their score, as the live stage does."""
    def report(phase: str) -> Callable[[int, float], None] | None:
        return (lambda epoch, loss: progress(f"TSP-R ({phase}): epoch {epoch}, loss {loss:.4f}")) if progress else None

    first = train(train_sources, [series.validation_start for series in train_sources], seed, progress=report("validation"))
    final = train(train_sources, [series.train_end for series in train_sources], seed, progress=report("final"))
    policies: dict[str, tuple[Callable[[], Policy], Callable[[], Policy]]] = {
        "poisson": (lambda: (poisson_scorer, None),) * 2, "how": (lambda: (how_scorer, None),) * 2,
        "logreg": ((lambda: (OnlineLogistic(), None)),) * 2,
        "rhythm": (lambda: (rhythm_scorer(first), schedule.rules(first)),
                   lambda: (rhythm_scorer(final), schedule.rules(final))),
        "model": (lambda: (model_scorer(first), schedule.rules(first)),
                  lambda: (model_scorer(final), schedule.rules(final)))}
    if previous is not None:
        policies["model_previous"] = (lambda: (previous_model_scorer(previous), None),) * 2
    return policies


def evaluate_cold_start(sources: Sequence[SourceSeries], previous: UpdatePredictor | None = None,
                        folds: int = FOLDS, seed: int = 13, schedule: Schedule | None = None,
                        progress: Callable[[str], None] | None = None) -> dict:
    """Every policy's held-out figures under the cold-start protocol (see the module)."""
    def step(text: str) -> None:
        if progress:
            progress(text)

    schedule = schedule or Schedule()
    tests = test_windows(sources)
    results: dict[str, dict] = {}
    for k in RC_RANGE:
        results[f"rc_{k}"] = summarize([window_counts(s, a, b, rc(b - a, k)) for s, (a, b) in zip(sources, tests)])
    results["adaptive"] = summarize([window_counts(s, a, b, adaptive(s, a, b)) for s, (a, b) in zip(sources, tests)])
    assigned = fold_of(sources, folds)
    # name → per threshold, per source (in source order) test counts; name → per target, per source counts at
    # the fold's chosen threshold; name → per target, the folds' thresholds
    curves: dict[str, list[list]] = {}
    chosen: dict[str, dict[str, list]] = {}
    thresholds: dict[str, dict[str, list]] = {}
    for fold in range(folds):
        train_sources = [s for s, f in zip(sources, assigned) if f != fold]
        held_out = [i for i, f in enumerate(assigned) if f == fold]
        test_sources = [sources[i] for i in held_out]
        step(f"fold {fold + 1}/{folds}: training on {len(train_sources)} sources, {len(test_sources)} held out")
        for name, (validation_policy, test_policy) in fold_policies(train_sources, previous, seed, schedule,
                                                                    progress).items():
            step(f"fold {fold + 1}/{folds}: {name}")
            grid = grid_of(name)
            validation = _grid_counts(train_sources, validation_windows(train_sources), validation_policy(), grid)
            test = _grid_counts(test_sources, test_windows(test_sources), test_policy(), grid)
            rows = curves.setdefault(name, [[None] * len(sources) for _ in grid])
            for row, counts in zip(rows, test):
                for index, value in zip(held_out, counts):
                    row[index] = value
            for key, target in TARGETS.items():
                index = choose_threshold(validation, target)
                per_source = chosen.setdefault(name, {}).setdefault(key, [None] * len(sources))
                thresholds.setdefault(name, {}).setdefault(key, []).append(
                    None if index is None else float(f"{grid[index]:.3g}"))
                for position, source in enumerate(held_out):
                    per_source[source] = None if index is None else test[index][position]
    for name, rows in curves.items():
        summaries = [summarize(row) for row in rows]
        results[name] = {"curve": [[c["timeliness"], c["friendliness"]] for c in summaries],
                         "grid": [float(f"{g:.3g}") for g in grid_of(name)]}
        for key in TARGETS:
            picked = chosen[name][key]
            results[name][key] = None if any(c is None for c in picked) else (
                summarize(picked) | {"thresholds": thresholds[name][key]})
    results["protocol"] = {"folds": folds, "fold_seed": 0, "first_read_items": FIRST_READ_ITEMS,
                           "grid": [round4(g) for g in GRID], "odds_grid": [round4(g) for g in ODDS_GRID],
                           "odds_policies": sorted(ODDS_POLICIES),
                           "max_interval_hours": schedule.max_interval_hours,
                           "exploration_share": schedule.exploration_share}
    return results
