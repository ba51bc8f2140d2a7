"""`sourcewatch eval revisit` (every revisit policy on real update series, as JSON or a table) and
`sourcewatch train revisit` (the model the live scheduler runs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from models.revisit.data import TICKS, SourceSeries, load_events, usable_series
from models.revisit.evaluation import RC_RANGE, evaluate_policies
from models.revisit.model import UpdatePredictor
from models.revisit.training import train_operating_model


def _series(paths: list[Path], tick: str) -> tuple[list[SourceSeries], list[str], str]:
    """The usable series of these files, the skipped sources and which rows were read. At 1-hour ticks only
    rows with a real time of day are used (EPA's date-only rows would pile onto midnight); at 1-day ticks
    every row."""
    timed_only = tick == "1h"
    sources, skipped = usable_series(load_events(paths, timed_only=timed_only), TICKS[tick])
    return sources, skipped, "time-stamped rows only" if timed_only else "all rows"


def train_revisit_model(paths: list[Path], tick: str, target: float,
                        progress: Callable[[str], None] | None = None) -> UpdatePredictor:
    sources, _, rows = _series(paths, tick)
    return train_operating_model(sources, target, trained_on={"events": [f"{path.parent.name}/{path.name}" for path in paths],
                                                              "tick": tick, "rows": rows}, progress=progress)


def evaluate_revisit(paths: list[Path], tick: str, with_model: bool = True, per_source: bool = False,
                     progress: Callable[[str], None] | None = None) -> dict:
    """The figures of every policy on the series in these files."""
    sources, skipped, rows = _series(paths, tick)
    policies = evaluate_policies(sources, progress, with_model, per_source)
    return {
        "tick": tick,
        "rows": rows,
        "sources_used": len(sources),
        "sources_skipped": len(skipped),
        **policies,
    }


def _cells(figures: dict | None) -> str:
    if figures is None:
        return "never reaches the target on validation"
    cells = [f"{key} {figures[key]:.3f}" if figures[key] is not None else f"{key} –"
             for key in ("timeliness", "friendliness", "delay_h", "fetches_per_item")]
    return ", ".join(cells) + (f" (θ {figures['threshold']})" if "threshold" in figures else "")


def print_revisit(result: dict) -> None:
    print(f"{result['sources_used']} sources at {result['tick']} ticks ({result['rows']}; "
          f"{result['sources_skipped']} skipped: < 10 training or < 2 test events) — macro over sources")
    for name in [f"rc_{k}" for k in RC_RANGE] + ["adaptive"]:
        print(f"  {name:<16} {_cells(result[name])}")
    for name in ("poisson", "how", "logreg", "logreg_honest", "model", "model_honest", "model_per_source"):
        if name not in result:
            continue
        print(f"  {name:<16} {_cells(result[name])}")
        for key in ("at_t95", "at_t90"):
            print(f"    {key}  {_cells(result[name][key])}")
