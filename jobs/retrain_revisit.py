"""`sourcewatch retrain revisit`: retrain the revisit model on what the live scheduler observed, and swap it in
only if it does better on a held-out window.

The observations are replayed from revisit.decisions (every decided tick of every watched page) and
revisit.outcomes (what each revisit found). Each page becomes a series on the scheduler's tick grid, from its
first decided tick to its last, whose updates are the ticks where a revisit found new items — what a
crawler honestly knows; ticks without a revisit read as quiet. Its first 85 % trains (the last 15 % of that
picks the threshold), the rest is held out; the candidate and the current model are scored there with their
own thresholds, each page watched from a first read at the held-out part's start (models.revisit.coldstart). The candidate replaces the current one when it reaches the target timeliness where the
current one does not, or reaches it as well with higher friendliness (both macro). The swapped-in model is
written to <home>/models/revisit.pt, which workers load from their next start.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.revisit import RevisitClock
from models.revisit.data import SourceSeries, has_enough_events, split_series
from models.revisit.coldstart import Watching, model_scorer, test_windows
from models.revisit.evaluation import summarize, window_counts
from models.revisit.rhythm_model import RhythmLSTM
from models.revisit.training import train_operating_model
from schemas.revisit import RevisitDecision, RevisitOutcome


def observed_series(decisions: Sequence[RevisitDecision], outcomes: Sequence[RevisitOutcome],
                    clock: RevisitClock) -> list[SourceSeries]:
    """Each watched page's observed series (see the module's docstring), with enough updates to train and test;
    its ticks those of the page's clock the worker decided them on."""
    tick_hours = clock.tick_hours
    ticks: dict[str, set[int]] = defaultdict(set)
    for decision in decisions:
        ticks[decision.page_url].add(clock.for_page(decision.page_url).tick_of(decision.tick_at))
    found: dict[str, dict[int, int]] = defaultdict(dict)
    for outcome in outcomes:
        if outcome.read and outcome.new_items:
            found[outcome.page_url][clock.for_page(outcome.page_url).tick_of(outcome.tick_at)] = outcome.new_items
    usable = []
    for url, decided in sorted(ticks.items()):
        first, last = min(decided) - 1, max(decided)
        counts = np.zeros(last - first + 1, dtype=int)
        for tick, items in found[url].items():
            if first < tick <= last:
                counts[tick - first] = items
        hours = np.repeat(np.flatnonzero(counts) * tick_hours, counts[counts > 0]).astype(float)
        series = split_series(url, clock.for_page(url).tick_time(first), tick_hours, counts, hours)
        if has_enough_events(series):
            usable.append(series)
    return usable


def held_out_figures(model: RhythmLSTM, sources: Sequence[SourceSeries]) -> dict:
    """Macro figures of the model at its own threshold on each series' held-out part, each watched from a first
    read at its start on honest observations (as models.revisit.coldstart watches)."""
    windows = test_windows(sources)
    decisions = Watching(sources, windows, np.array([model.operating_threshold])).run(model_scorer(model))[0]
    return summarize([window_counts(series, a, b, fetch) for series, (a, b), fetch in zip(sources, windows, decisions)])


def is_better(candidate: dict, current: dict, target: float) -> bool:
    reaches = [(figures["timeliness"] or 0) >= target for figures in (candidate, current)]
    if reaches[0] != reaches[1]:
        return reaches[0]
    return (candidate["friendliness"] or 0) > (current["friendliness"] or 0) if reaches[0] else (
        (candidate["timeliness"] or 0) > (current["timeliness"] or 0))


@dataclass(frozen=True)
class Retraining:
    sources: int
    current: dict
    candidate: dict
    better: bool
    swapped: bool
    current_version: str
    candidate_version: str
    written_to: str | None


def retrain(sources: list[SourceSeries], current: RhythmLSTM, target: float, out: Path, dry_run: bool,
            progress: Callable[[str], None] | None = None) -> Retraining:
    candidate = train_operating_model(sources, target, trained_on={"replayed": "revisit.decisions + revisit.outcomes",
                                                                   "tick": f"{sources[0].tick_hours:g}h"},
                                      progress=progress)
    figures = held_out_figures(candidate, sources), held_out_figures(current, sources)
    better = is_better(*figures, target)
    swapped = better and not dry_run
    if swapped:
        out.parent.mkdir(parents=True, exist_ok=True)
        staged = out.with_suffix(".tmp")
        candidate.save(staged)
        os.replace(staged, out)  # a worker starting meanwhile reads the old file or the new one, whole
    return Retraining(len(sources), figures[1], figures[0], better, swapped, current.version, candidate.version,
                      str(out) if swapped else None)
