"""`sourcewatch eval revisit` (every revisit policy on real update series, as JSON or a table) and
`sourcewatch train revisit` (the model the live scheduler runs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from models.revisit.coldstart import Schedule, evaluate_cold_start
from models.revisit.data import TICKS, SourceSeries, load_events, usable_series
from models.revisit.evaluation import RC_RANGE, evaluate_policies
from models.revisit.model import UpdatePredictor
from models.revisit.rhythm_model import RhythmLSTM
from models.revisit.training import train_operating_model

# The TSP model sourcewatch ran before TSP-R (trained on EPA at 1-h ticks): the cold-start evaluation's
# `model_previous`.
PREVIOUS_MODEL = Path(__file__).with_name("tsp_previous.pt")


def _series(paths: list[Path], tick: str) -> tuple[list[SourceSeries], list[str], str]:
    """The usable series of these files, the skipped sources and which rows were read. At 1-hour ticks only
    rows with a real time of day are used (EPA's date-only rows would pile onto midnight); at 1-day ticks
    every row."""
    timed_only = tick == "1h"
    sources, skipped = usable_series(load_events(paths, timed_only=timed_only), TICKS[tick])
    return sources, skipped, "time-stamped rows only" if timed_only else "all rows"


def train_revisit_model(paths: list[Path], tick: str, target: float, schedule: Schedule | None = None,
                        progress: Callable[[str], None] | None = None) -> RhythmLSTM:
    sources, _, rows = _series(paths, tick)
    trained_on = {"events": [f"{path.parent.name}/{path.name}" for path in paths], "tick": tick, "rows": rows}
    return train_operating_model(sources, target, trained_on=trained_on, schedule=schedule, progress=progress)


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


def evaluate_cold_start_revisit(paths: list[Path], tick: str, folds: int, max_sources: int | None = None,
                                schedule: Schedule | None = None,
                                progress: Callable[[str], None] | None = None) -> dict:
    """Every policy under the cold-start protocol (models.revisit.coldstart) on the series in these files (the
    first `max_sources` usable ones by id, when given)."""
    sources, skipped, rows = _series(paths, tick)
    sources = sources[:max_sources]
    policies = evaluate_cold_start(sources, UpdatePredictor.load(PREVIOUS_MODEL), folds, schedule=schedule,
                                   progress=progress)
    return {"tick": tick, "rows": rows, "protocol_name": "cold start", "sources_used": len(sources),
            "sources_skipped": len(skipped), **policies}


def _cells(figures: dict | None) -> str:
    if figures is None:
        return "never reaches the target on validation"
    cells = [f"{key} {figures[key]:.3f}" if figures[key] is not None else f"{key} –"
             for key in ("timeliness", "friendliness", "delay_h", "fetches_per_item")]
    if "thresholds" in figures:
        return ", ".join(cells) + f" (θ per fold {figures['thresholds']})"
    return ", ".join(cells) + (f" (θ {figures['threshold']})" if "threshold" in figures else "")


def print_revisit(result: dict) -> None:
    print(f"{result['sources_used']} sources at {result['tick']} ticks ({result['rows']}; "
          f"{result['sources_skipped']} skipped: < 10 training or < 2 test events) — macro over sources")
    for name in [f"rc_{k}" for k in RC_RANGE] + ["adaptive"]:
        print(f"  {name:<16} {_cells(result[name])}")
    for name in ("poisson", "how", "logreg", "logreg_honest", "rhythm", "model", "model_honest", "model_previous",
                 "model_per_source"):
        if name not in result:
            continue
        print(f"  {name:<16} {_cells(result[name]) if 'timeliness' in result[name] else ''}")
        for key in ("at_t95", "at_t90"):
            print(f"    {key}  {_cells(result[name][key])}")
