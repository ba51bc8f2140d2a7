"""Train the revisit model that the live scheduler runs: TSP-R with its operating threshold.

The recipe is the cold-start evaluation's: a first model trained on each source's ticks before its validation
window is rolled out on those windows, each watched from a first read (models.revisit.coldstart), and picks
the threshold on the relative odds — the highest macro friendliness whose macro timeliness there reaches the target; its whole
validation curve is kept for the operating knob (a target timeliness set in the settings). The final model
is trained on the whole training part and keeps that threshold. The test part of every series stays unseen.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import torch

from models.revisit.coldstart import Schedule, Watching, model_scorer, validation_windows
from models.revisit.data import SourceSeries
from models.revisit.evaluation import choose_threshold, summarize, window_counts
from models.revisit.rhythm_model import ODDS_GRID, RhythmLSTM, train

DEFAULT_TARGET = 0.95


class TargetNotReached(ValueError):
    """No threshold reaches the target timeliness on the validation windows."""


def train_operating_model(sources: Sequence[SourceSeries], target: float = DEFAULT_TARGET, seed: int = 13,
                          trained_on: dict | None = None, schedule: Schedule | None = None,
                          progress: Callable[[str], None] | None = None) -> RhythmLSTM:
    """`schedule`: the scheduler's rules the threshold is chosen with (the live stage decides with them)."""
    def report(phase: str) -> Callable[[int, float], None] | None:
        return (lambda epoch, loss: progress(f"{phase}: epoch {epoch}, loss {loss:.4f}")) if progress else None

    first = train(sources, [series.validation_start for series in sources], seed, progress=report("validation model"))
    if progress:
        progress("choosing the threshold on the validation watches")
    windows = validation_windows(sources)
    schedule = schedule or Schedule()
    decisions = Watching(sources, windows, ODDS_GRID).run(model_scorer(first), schedule.rules(first))
    grid = [[window_counts(series, a, b, fetch) for series, (a, b), fetch in zip(sources, windows, row)]
            for row in decisions]
    chosen = choose_threshold(grid, target)
    if chosen is None:
        raise TargetNotReached(f"no threshold reaches timeliness {target} on the validation windows")
    model = train(sources, [series.train_end for series in sources], seed, progress=report("final model"))
    model.threshold = float(ODDS_GRID[chosen])
    model.validation_curve = [(float(threshold), figures["timeliness"] or 0.0, figures["friendliness"] or 0.0)
                              for threshold, figures in zip(ODDS_GRID, map(summarize, grid))]
    model.trained_on = (trained_on or {}) | {"sources": len(sources), "target_timeliness": target, "seed": seed,
                                             "max_interval_hours": schedule.max_interval_hours,
                                             "exploration_share": schedule.exploration_share}
    model.version = f"tsp-r-{datetime.now(UTC):%Y%m%d}-{_digest(model)}"
    return model


def _digest(model: RhythmLSTM) -> str:
    """Eight hex digits of the weights and the threshold: two models with the same digest decide alike."""
    buffer = io.BytesIO()
    torch.save({"state": model.state_dict(), "threshold": model.threshold}, buffer)
    return hashlib.blake2b(buffer.getvalue(), digest_size=4).hexdigest()
