"""Counters every stage increments, and gauges it sets; a timer turns them into `metrics` messages.

Counting in memory and flushing every few seconds keeps the metrics topic small
(one message per counter and interval) however many pages flow. A gauge sends
only its latest value of the interval, and only when it was set in it.
"""

from __future__ import annotations

from collections import Counter

from schemas.metrics import Metric

_Key = tuple[str, str, tuple[tuple[str, str], ...]]
_counters: Counter[_Key] = Counter()
_gauges: dict[_Key, float] = {}


def count(name: str, stage: str, amount: float = 1, **labels: str) -> None:
    _counters[(name, stage, tuple(sorted(labels.items())))] += amount


def gauge(name: str, stage: str, value: float, **labels: str) -> None:
    _gauges[(name, stage, tuple(sorted(labels.items())))] = value


def drain(worker: str) -> list[Metric]:
    """The counters accumulated and the gauges set since the last drain, as messages (and reset them)."""
    drained = [
        Metric(site=worker, name=name, stage=stage, value=value, kind=kind, labels=dict(labels))
        for kind, values in (("count", _counters), ("gauge", _gauges))
        for (name, stage, labels), value in values.items()
    ]
    _counters.clear()
    _gauges.clear()
    return drained
