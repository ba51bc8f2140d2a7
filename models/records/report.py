"""`sourcewatch eval records` and `sourcewatch records`: evaluation reports and a source's current records.

The data set is recognised from the folder: a `labels.jsonl` means City
Scrapers, site folders with a `manifest.json` mean site snapshots (item recall
over each known listing and its pagination), anything else the Estuka testbed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from models.records.data import is_city_scrapers, load_city_scrapers, load_estuka, load_snapshot_lists
from models.records.evaluation import EXTRACTORS, evaluate_city_scrapers, evaluate_estuka, evaluate_snapshots

ProgressFactory = Callable[[str, int], object]


class NoRecordData(ValueError):
    pass


def data_kind(directory: Path) -> str:
    if is_city_scrapers(directory):
        return "city-scrapers"
    if any(directory.glob("*/manifest.json")):
        return "sites"
    if any(directory.rglob("data records.csv")):
        return "estuka"
    raise NoRecordData(f"{directory}: neither City Scrapers (labels.jsonl), site snapshots (*/manifest.json) "
                       "nor the Estuka testbed (data records.csv)")


def evaluate_records(directory: Path, progress_bar: ProgressFactory) -> dict:
    """sourcewatch's figures on the folder's data, with the sibling-group baseline's under `baseline`."""
    kind = data_kind(directory)
    if kind == "sites":
        lists = list(load_snapshot_lists(directory))
        return {"data": kind, **evaluate_snapshots(lists), "baseline": evaluate_snapshots(lists, baseline=True)}
    pages = list(load_city_scrapers(directory) if kind == "city-scrapers" else load_estuka(directory))
    if not pages:
        raise NoRecordData(f"{directory}: no readable pages ({kind} labels, but their HTML files are missing)")
    evaluate = evaluate_city_scrapers if kind == "city-scrapers" else evaluate_estuka
    results = {}
    for name, extractor in EXTRACTORS.items():
        with progress_bar(f"{name}: extracting", len(pages)) as advance:
            results[name] = evaluate(pages, extractor, progress=advance)
    if kind == "city-scrapers":
        # The listing pages are the figures; detail/auxiliary pages are reported apart.
        results = {name: {**result.pop("listing"), **result} for name, result in results.items()}
    return {"data": kind, **results["sourcewatch"], "baseline": results["baseline"]}


def _line(name: str, result: dict) -> str:
    figures = [f"{key} {result[key]:.3f}" for key in ("precision", "recall", "f1", "count_accuracy")
               if result.get(key) is not None]
    timing = result.get("timing", result)
    if "ms_p50" in timing:
        figures.append(f"extraction p50/p99 {timing['ms_p50']}/{timing['ms_p99']} ms, {timing['pages_per_s']} pages/s")
    return f"  {name:<12} " + ", ".join(figures)


def print_evaluation(result: dict) -> None:
    if result["data"] == "sites":
        print(f"site snapshots: {result['listings']} listings with known items ({result['items']} items)")
        for name, figures in (("sourcewatch", result), ("baseline", result["baseline"])):
            print(f"  {name:<12} item-link recall {figures['item_link_recall']:.3f}, "
                  f"item recall (link or feed title) {figures['item_recall']:.3f}")
        return
    print(f"{result['data']}: {result['pages']} pages")
    print(_line("sourcewatch", result))
    print(_line("baseline", result["baseline"]))
    if result["data"] == "city-scrapers":
        print(f"  (precision only over the {result['precision_pages']} fully asserted pages; count accuracy over "
              f"{result['count_pages']} pages with a known count; detail/auxiliary pages apart in --json)")


def current_records(rows: list[dict]) -> list[str]:
    """Printable lines of a source's records, newest first sight first."""
    lines = []
    for row in rows:
        date = str(row["date"])[:10] if row["date"] else "          "
        lines.append(f"  {date}  {row['title'][:60]:<60}  {row['item_url'] or '(no link)'}")
    return lines
