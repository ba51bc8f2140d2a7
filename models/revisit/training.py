"""Train the revisit model that the live scheduler runs: the TSP LSTM with its operating threshold.

The recipe is the evaluation's, so the shipped model's test figures are the ones `eval revisit` reports: a
first model trained on each source's ticks before its validation window picks the threshold (the highest
macro friendliness whose macro timeliness on validation reaches the target); the final model is trained on
the whole training part and keeps that threshold. The test part of every series stays unseen.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import torch

from models.revisit.data import SourceSeries
from models.revisit.evaluation import THRESHOLDS, choose_threshold, thresholded_counts
from models.revisit.model import UpdatePredictor, train

DEFAULT_TARGET = 0.95


class TargetNotReached(ValueError):
    """No threshold reaches the target timeliness on the validation windows."""


def train_operating_model(sources: Sequence[SourceSeries], target: float = DEFAULT_TARGET, seed: int = 13,
                          trained_on: dict | None = None,
                          progress: Callable[[str], None] | None = None) -> UpdatePredictor:
    def report(phase: str) -> Callable[[int, float], None] | None:
        return (lambda epoch, loss: progress(f"{phase}: epoch {epoch}, loss {loss:.3f}")) if progress else None

    first = train(sources, [series.validation_start for series in sources], seed, progress=report("validation model"))
    grid = thresholded_counts("model", sources, True, lambda series, fit_end, a, b: first.probabilities(series, a, b))
    chosen = choose_threshold(grid, target)
    if chosen is None:
        raise TargetNotReached(f"no threshold reaches timeliness {target} on the validation windows")
    model = train(sources, [series.train_end for series in sources], seed, progress=report("final model"))
    model.threshold = float(THRESHOLDS[chosen])
    model.tick_hours = sources[0].tick_hours
    model.trained_on = (trained_on or {}) | {"sources": len(sources), "target_timeliness": target, "seed": seed}
    model.version = f"tsp-{datetime.now(UTC):%Y%m%d}-{_digest(model)}"
    return model


def _digest(model: UpdatePredictor) -> str:
    """Eight hex digits of the weights: two models with the same digest decide alike."""
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return hashlib.blake2b(buffer.getvalue(), digest_size=4).hexdigest()
