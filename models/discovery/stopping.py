"""Stopping as a learned decision (beside Eq. 5's threshold on π): at each choice of an episode, is a source
page still reachable from here within the budget?

A logistic regression over the episode's state at the choice — the best and second-best π in the frontier and
their gap, the best h (the chance a click lands on a source page itself), the frontier's size, the clicks
spent, and the keyword heuristic's view (its best score in the frontier, and the score of the agent's own best
link) — trained on out-of-fold episodes: agents that never saw the sites play them without stopping, and every
choice before the click that reached a source page is a positive, every other choice (sites without one, or
not reached within the budget) a negative; a fine-tuned agent's brief agents are fine-tuned too, and its model
also learns from its own choices on a simulated web it was not fine-tuned on (models.discovery.finetuning).
Its probability is a logistic fit's (Platt's form), read off held-out episodes. The stop point weighs a wrong stop against a wasted click: stop when
P(reachable) < 1 / (1 + miss_cost), miss_cost being what a source page given up costs in clicks.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from infra.settings import Settings
from models.discovery.policies import Candidate, keyword_score

FEATURES = ("best", "second", "gap", "best_hit", "frontier", "clicks", "keyword_best", "keyword_of_best")
# What a source page given up costs, in wasted clicks (the stream's settings.discovery_miss_cost overrides it:
# StoppingModel.at_miss_cost).
MISS_COST = 2.0
# Keyword scores above this say no more (a menu label and its path both hit).
KEYWORD_CAP = 4


def stop_features(way: np.ndarray, hit: np.ndarray, frontier: Sequence[Candidate], clicks: int) -> list[float]:
    """The state at a choice: π and h of every frontier link (probabilities), the links, the clicks spent."""
    order = np.argsort(-way, kind="stable")
    best = float(way[order[0]])
    second = float(way[order[1]]) if len(order) > 1 else 0.0
    keywords = [min(keyword_score(candidate), KEYWORD_CAP) / KEYWORD_CAP for candidate in frontier]
    return [best, second, best - second, float(hit.max()), math.log1p(len(frontier)), float(clicks),
            max(keywords), keywords[int(order[0])]]


def stop_threshold(miss_cost: float) -> float:
    """The P(reachable) below which stopping costs less than going on, a source page given up costing
    `miss_cost` wasted clicks."""
    return 1 / (1 + miss_cost)


@dataclass(frozen=True)
class StoppingModel:
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    miss_cost: float = MISS_COST
    # The (features, reachable) samples it was fitted on: kept with it so that people's verdicts can be added to
    # them (`sourcewatch retrain discovery`); empty for a model saved before it kept them.
    samples: tuple[tuple[tuple[float, ...], bool], ...] = ()

    @property
    def threshold(self) -> float:
        return stop_threshold(self.miss_cost)

    def at_miss_cost(self, miss_cost: float | None) -> StoppingModel:
        """The same model stopping at another cost's point (its P(reachable) does not depend on the cost)."""
        return self if miss_cost is None else replace(self, miss_cost=miss_cost)

    def reachable(self, features: Sequence[float]) -> float:
        z = (np.asarray(features) - np.asarray(self.mean)) / np.asarray(self.scale)
        return float(1 / (1 + np.exp(-(z @ np.asarray(self.weights) + self.bias))))

    def stop_reason(self, features: Sequence[float]) -> str | None:
        """Why to stop here, or None to go on."""
        chance = self.reachable(features)
        if chance >= self.threshold:
            return None
        return f"a source page reachable: {chance:.3f} < {self.threshold:.3f}"

    def to_dict(self) -> dict:
        return {"features": list(FEATURES), "mean": list(self.mean), "scale": list(self.scale),
                "weights": list(self.weights), "bias": self.bias, "miss_cost": self.miss_cost,
                "samples": [[list(features), label] for features, label in self.samples]}

    @classmethod
    def from_dict(cls, saved: dict) -> StoppingModel:
        if saved.get("features") != list(FEATURES):
            raise ValueError(f"a stopping model over {saved.get('features')}, not {list(FEATURES)}")
        return cls(tuple(saved["mean"]), tuple(saved["scale"]), tuple(saved["weights"]), saved["bias"],
                   saved["miss_cost"], _samples(saved.get("samples", ())))


def fit_stopping(samples: Sequence[tuple[Sequence[float], bool]], miss_cost: float = MISS_COST) -> StoppingModel | None:
    """The model from (features, reachable) pairs; None when they hold one class only."""
    from sklearn.linear_model import LogisticRegression

    x = np.asarray([features for features, _ in samples], dtype=np.float64)
    y = np.asarray([label for _, label in samples], dtype=np.int64)
    if len(set(y.tolist())) < 2:
        return None
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    fitted = LogisticRegression(max_iter=1000).fit((x - mean) / scale, y)
    return StoppingModel(tuple(mean.tolist()), tuple(scale.tolist()), tuple(fitted.coef_[0].tolist()),
                         float(fitted.intercept_[0]), miss_cost, _samples(samples))


def retrained_stopping_path(settings: Settings) -> Path:
    """Where `sourcewatch retrain discovery` swaps a better stopping model in; workers that find one there stop
    by it instead of the one in the agent's file."""
    return settings.home / "models" / "stopping.json"


def samples_digest(model: StoppingModel) -> str:
    """What identifies the samples a model was fitted on (a retrained model names its agent's model's so)."""
    return hashlib.sha256(json.dumps(model.to_dict()["samples"]).encode()).hexdigest()[:16]


def save_retrained(model: StoppingModel, base: StoppingModel, path: Path) -> None:
    """A model retrained from the agent's own `base` (its samples and more), for `load_retrained`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"base": samples_digest(base), "model": model.to_dict()}), encoding="utf-8")


def load_retrained(path: Path, base: StoppingModel) -> StoppingModel | None:
    """The retrained model at `path` where it was built on `base`'s samples (the agent's own model); None where
    it was built for another agent (its file replaced since)."""
    saved = json.loads(path.read_text(encoding="utf-8"))
    return StoppingModel.from_dict(saved["model"]) if saved.get("base") == samples_digest(base) else None


def _samples(samples: Sequence[tuple[Sequence[float], bool]]) -> tuple[tuple[tuple[float, ...], bool], ...]:
    return tuple((tuple(float(value) for value in features), bool(label)) for features, label in samples)


def reachable_labels(choices: int, reached_after: int | None) -> list[bool]:
    """Labels of an episode's choices played without stopping: a choice before the click that reached a source
    page (`reached_after` clicks) could reach one; every choice of an episode that reached none could not."""
    return [reached_after is not None and index < reached_after for index in range(choices)]


def reliability(pairs: Sequence[tuple[float, bool]], bins: int = 10) -> dict:
    """How calibrated the model's P(reachable) is on held-out choices: per equal-width bin of P, the mean P
    and the share that could reach a source page (a reliability diagram's points), and the Brier score."""
    if not pairs:
        return {"choices": 0, "brier": None, "bins": []}
    predicted = np.asarray([p for p, _ in pairs], dtype=np.float64)
    observed = np.asarray([label for _, label in pairs], dtype=np.float64)
    index = np.minimum((predicted * bins).astype(int), bins - 1)
    points = [{"from": round(b / bins, 2), "to": round((b + 1) / bins, 2), "choices": int((index == b).sum()),
               "predicted": round(float(predicted[index == b].mean()), 4),
               "observed": round(float(observed[index == b].mean()), 4)}
              for b in range(bins) if (index == b).any()]
    return {"choices": len(pairs), "brier": round(float(np.mean((predicted - observed) ** 2)), 4), "bins": points}
