"""Counters every stage increments; a timer turns them into `metrics` messages.

Counting in memory and flushing every few seconds keeps the metrics topic small
(one message per counter and interval) however many pages flow.
"""

from __future__ import annotations

from collections import Counter

from schemas.metrics import Metric

_counters: Counter[tuple[str, str, tuple[tuple[str, str], ...]]] = Counter()


def count(name: str, stage: str, amount: float = 1, **labels: str) -> None:
    _counters[(name, stage, tuple(sorted(labels.items())))] += amount


def drain(worker: str) -> list[Metric]:
    """The counters accumulated since the last drain, as messages (and reset them)."""
    drained = [
        Metric(site=worker, name=name, stage=stage, value=value, labels=dict(labels))
        for (name, stage, labels), value in _counters.items()
    ]
    _counters.clear()
    return drained
