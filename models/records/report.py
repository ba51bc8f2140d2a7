"""`sourcewatch eval records` and `sourcewatch records`: evaluation reports and a source's current records.

The data set is recognised from the folder: a `labels.jsonl` means City
Scrapers, site folders with a `manifest.json` mean site snapshots (item recall
over each known listing and its pagination), anything else the Estuka testbed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from models.records.data import is_city_scrapers, load_city_scrapers, load_estuka, load_snapshot_lists
from models.records.evaluation import (
    Extractor,
    baseline_extractor,
    evaluate_city_scrapers,
    evaluate_estuka,
    evaluate_snapshots,
    largest_region_extractor,
    ranked_extractor,
)
from models.records.ranker import LargestRegion, ListRanker
from models.records.training import labelled_pages, rankers_by_held_out_category, train_list_ranker

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
    """sourcewatch's figures on the folder's data, with the extractor before the list ranker (the largest MDR
    region) under `largest_region` and the sibling-group baseline under `baseline`, same run. On the Estuka
    testbed sourcewatch's figures are cross-validated: each category read by a ranker trained without it. City
    Scrapers and the site snapshots are read by the shipped ranker, which never saw them (trained on Estuka)."""
    kind = data_kind(directory)
    if kind == "sites":
        lists = list(load_snapshot_lists(directory))
        return {"data": kind, **evaluate_snapshots(lists), "largest_region": evaluate_snapshots(lists, LargestRegion()),
                "baseline": evaluate_snapshots(lists, baseline=True)}
    pages = list(load_city_scrapers(directory) if kind == "city-scrapers" else load_estuka(directory))
    if not pages:
        raise NoRecordData(f"{directory}: no readable pages ({kind} labels, but their HTML files are missing)")
    if kind == "estuka":
        if len({page.category for page in pages}) < 2:
            raise NoRecordData(f"{directory}: the list ranker is cross-validated by category — it needs two "
                               "categories or more")
        with progress_bar("candidates: features and labels", len(pages)) as advance:
            labelled = labelled_pages(pages, advance)
        categories = sorted({page.category for page in pages})
        with progress_bar("list ranker: one per held-out category", len(categories)) as advance:
            rankers = rankers_by_held_out_category(labelled, progress=lambda _: advance())
        sourcewatch: Extractor | dict[str, Extractor] = {c: ranked_extractor(r) for c, r in rankers.items()}
        protocol = {"sourcewatch": f"cross-validated: {len(categories)} folds, one category held out each"}
    else:
        sourcewatch = ranked_extractor()
        protocol = {"sourcewatch": "the shipped list ranker (trained on the Estuka testbed only)"}
    evaluate = evaluate_city_scrapers if kind == "city-scrapers" else evaluate_estuka
    results = {}
    for name, extractor in (("sourcewatch", sourcewatch), ("largest_region", largest_region_extractor),
                            ("baseline", baseline_extractor)):
        with progress_bar(f"{name}: extracting", len(pages)) as advance:
            results[name] = evaluate(pages, extractor, progress=advance)
    if kind == "city-scrapers":
        # The listing pages are the figures; detail/auxiliary pages are reported apart.
        results = {name: {**result.pop("listing"), **result} for name, result in results.items()}
    return {"data": kind, **results["sourcewatch"], "largest_region": results["largest_region"],
            "baseline": results["baseline"], "protocol": protocol}


def train_records_ranker(directory: Path, progress_bar: ProgressFactory) -> ListRanker:
    """The list ranker trained on every page of the Estuka testbed in `directory`."""
    if data_kind(directory) != "estuka":
        raise NoRecordData(f"{directory}: the list ranker trains on the Estuka testbed (data records.csv)")
    pages = list(load_estuka(directory))
    with progress_bar("candidates: features and labels", len(pages)) as advance:
        labelled = labelled_pages(pages, advance)
    return train_list_ranker(labelled)


def _line(name: str, result: dict) -> str:
    figures = [f"{key} {result[key]:.3f}" for key in ("precision", "recall", "f1", "count_accuracy")
               if result.get(key) is not None]
    timing = result.get("timing", result)
    if "ms_p50" in timing:
        figures.append(f"extraction p50/p99 {timing['ms_p50']}/{timing['ms_p99']} ms, {timing['pages_per_s']} pages/s")
    if result.get("records_per_page") is not None:
        figures.append(f"{result['records_per_page']} records per page")
    return f"  {name:<15} " + ", ".join(figures)


def print_evaluation(result: dict) -> None:
    names = (("sourcewatch", result), ("largest region", result["largest_region"]), ("baseline", result["baseline"]))
    if result["data"] == "sites":
        print(f"site snapshots: {result['listings']} listings with known items ({result['items']} items)")
        for name, figures in names:
            print(f"  {name:<15} item-link recall {figures['item_link_recall']:.3f}, "
                  f"item recall (link or feed title) {figures['item_recall']:.3f}")
        return
    print(f"{result['data']}: {result['pages']} pages; sourcewatch: {result['protocol']['sourcewatch']}")
    for name, figures in names:
        print(_line(name, figures))
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
