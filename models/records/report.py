"""`sourcewatch eval records`, `sourcewatch train records` and `sourcewatch records`: evaluation reports, the
shipped ranker's training, a source's current records.

The data set is recognised from the folder: a `labels.jsonl` means City Scrapers, a `data records.csv` below
it the Estuka testbed, site folders with a `manifest.json` the site snapshots (item recall over each known
listing and its pagination); a folder holding Estuka and City Scrapers folders (`<data>/records`) means both,
cross-validated together.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from models.records.data import (
    is_city_scrapers,
    load_city_scrapers,
    load_estuka,
    load_snapshot_lists,
    load_source_pages,
)
from models.records.dates import has_time_of_day
from models.records.evaluation import (
    baseline_extractor,
    evaluate_city_scrapers,
    evaluate_estuka,
    evaluate_snapshots,
    evaluate_source_pages,
    largest_region_extractor,
    page_witnesses,
    ranked_extractor,
)
from models.records.ranker import LargestRegion, ListRanker
from models.records.training import (
    LabelledPage,
    city_scrapers_fold,
    city_scrapers_labelled,
    estuka_fold,
    estuka_labelled,
    rankers_by_held_out_fold,
    train_list_ranker,
)

ProgressFactory = Callable[[str, int], object]
LABELLED_SETS = ("estuka", "city-scrapers")


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


def labelled_sets(directory: Path) -> dict[str, Path]:
    """The labelled record data sets in `directory`: itself, or its Estuka and City Scrapers folders."""
    if not directory.is_dir():
        raise NoRecordData(f"{directory}: no such folder")
    if is_city_scrapers(directory) or not any(directory.glob("*/labels.jsonl")):
        kind = data_kind(directory)
        return {kind: directory} if kind in LABELLED_SETS else {}
    return {kind: folder for folder in sorted(directory.iterdir()) if folder.is_dir()
            and (kind := _kind_or_none(folder)) in LABELLED_SETS}


def _kind_or_none(folder: Path) -> str | None:
    try:
        return data_kind(folder)
    except NoRecordData:
        return None


class _LabelledSet:
    """One data set's pages, each page's witnesses and CV fold, and its labelled pages."""

    def __init__(self, kind: str, folder: Path, progress_bar: ProgressFactory) -> None:
        self.kind = kind
        self.pages: Sequence = list(load_estuka(folder) if kind == "estuka" else load_city_scrapers(folder))
        if not self.pages:
            raise NoRecordData(f"{folder}: no readable pages ({kind} labels, but their HTML files are missing)")
        with progress_bar(f"{kind}: witnesses", 1) as advance:
            self.witnesses = page_witnesses(self.pages)
            advance()
        fold = estuka_fold if kind == "estuka" else city_scrapers_fold
        self.folds = [fold(page) for page in self.pages]
        label = estuka_labelled if kind == "estuka" else city_scrapers_labelled
        with progress_bar(f"{kind}: candidates, features and labels", len(self.pages)) as advance:
            self.labelled: list[LabelledPage] = label(self.pages, self.witnesses, advance)


def _labelled(directory: Path, progress_bar: ProgressFactory) -> list[_LabelledSet]:
    sets = labelled_sets(directory)
    if not sets:
        raise NoRecordData(f"{directory}: no Estuka testbed or City Scrapers folder")
    return [_LabelledSet(kind, folder, progress_bar) for kind, folder in sets.items()]


def evaluate_records(directory: Path, progress_bar: ProgressFactory) -> dict:
    """sourcewatch's figures on the folder's data, with the extractor before the list ranker (the largest MDR
    region) under `largest_region` and the sibling-group baseline under `baseline`, same run. On Estuka and
    City Scrapers sourcewatch's figures are cross-validated (models.records.training): each fold read by a
    ranker trained without it. The site snapshots are read by the shipped ranker, which never saw them."""
    if data_kind(directory) == "sites" and not labelled_sets(directory):
        lists = list(load_snapshot_lists(directory))
        return {"data": "sites", **evaluate_snapshots(lists),
                "largest_region": evaluate_snapshots(lists, LargestRegion()),
                "baseline": evaluate_snapshots(lists, baseline=True),
                "source_pages": evaluate_source_pages(list(load_source_pages(directory)))}
    sets = _labelled(directory, progress_bar)
    folds = sorted({fold for data in sets for fold in data.folds})
    if len(folds) < 2:
        raise NoRecordData(f"{directory}: the list ranker is cross-validated by category or site — it needs two "
                           "folds or more")
    labelled = [page for data in sets for page in data.labelled]
    with progress_bar("list ranker: one per held-out fold", len(folds)) as advance:
        rankers = rankers_by_held_out_fold(labelled, folds, progress=lambda _: advance())
    results = {"data": "records", "protocol": {
        "sourcewatch": f"cross-validated: {len(folds)} folds (each Estuka category; City Scrapers' sites in "
                       "groups), each read by a ranker trained on the others"}}
    for data in sets:
        evaluate = evaluate_estuka if data.kind == "estuka" else evaluate_city_scrapers
        extractors = {"sourcewatch": [ranked_extractor(rankers[fold]) for fold in data.folds],
                      "largest_region": [largest_region_extractor] * len(data.pages),
                      "baseline": [baseline_extractor] * len(data.pages)}
        figures = {}
        for name, per_page in extractors.items():
            with progress_bar(f"{data.kind}, {name}: extracting", len(data.pages)) as advance:
                figures[name] = evaluate(data.pages, per_page, data.witnesses, progress=advance)
        if data.kind == "city-scrapers":
            # The listing pages are the figures; detail/auxiliary pages are reported apart.
            figures = {name: {**result.pop("listing"), **result} for name, result in figures.items()}
        results[data.kind] = {**figures["sourcewatch"], "largest_region": figures["largest_region"],
                              "baseline": figures["baseline"]}
    return results


def train_records_ranker(directory: Path, progress_bar: ProgressFactory) -> ListRanker:
    """The list ranker trained on every labelled page of the Estuka testbed and City Scrapers in `directory`."""
    sets = _labelled(directory, progress_bar)
    return train_list_ranker([page for data in sets for page in data.labelled])


def _line(name: str, result: dict) -> str:
    figures = [f"{key} {result[key]:.3f}" for key in ("precision", "recall", "f1", "count_accuracy")
               if result.get(key) is not None]
    timing = result.get("timing", result)
    if "ms_p50" in timing:
        figures.append(f"extraction p50/p99 {timing['ms_p50']}/{timing['ms_p99']} ms, {timing['pages_per_s']} pages/s")
    if result.get("records_per_page") is not None:
        figures.append(f"{result['records_per_page']} records per page")
    if result.get("records_merged_away"):
        figures.append(f"{result['records_merged_away']} records sharing another's link, title and date")
    return f"  {name:<15} " + ", ".join(figures)


def print_evaluation(result: dict) -> None:
    if result["data"] == "sites":
        print(f"site snapshots: {result['listings']} listings with known items ({result['items']} items)")
        for name, figures in (("sourcewatch", result), ("largest region", result["largest_region"]),
                              ("baseline", result["baseline"])):
            print(f"  {name:<15} item-link recall {figures['item_link_recall']:.3f} "
                  f"({figures['linked_item_link_recall']:.3f} of the {figures['items_linked']} items the listings "
                  f"link), item recall (link or feed title) {figures['item_recall']:.3f}, "
                  f"title as the feed's on {figures['title_accuracy']:.3f} of those found by link")
        pages = result["source_pages"]
        feeds = pages["list_in_a_feed"]
        reasons = ", ".join(f"{reason} {n}" for reason, n in pages["without_a_list"].items()) or "none"
        print(f"labelled source pages read alone: {pages['pages']}; without a list: {reasons}; of these, a feed "
              f"holds the list of {feeds['feed_named']} ({feeds['feed_in_snapshot']} in the snapshot, "
              f"{feeds['read_from_feed']} read from it)")
        return
    print(f"sourcewatch: {result['protocol']['sourcewatch']}")
    for kind in LABELLED_SETS:
        if kind not in result:
            continue
        figures = result[kind]
        print(f"{kind}: {figures['pages']} pages")
        for name, one in (("sourcewatch", figures), ("largest region", figures["largest_region"]),
                          ("baseline", figures["baseline"])):
            print(_line(name, one))
        kinds = figures.get("date_kinds") or {}
        print(f"  dates told apart: {kinds.get('published told', 0)} records with a publication date, "
              f"{kinds.get('event told', 0)} with an event's start"
              + (f"; of {kinds.get('meeting shown', 0)} asserted meetings a record shows on their day, "
                 f"{kinds.get('meeting told as event', 0)} told as the event's start, "
                 f"{kinds.get('meeting told as published', 0)} as a publication date" if kind == "city-scrapers" else ""))
        if kind == "city-scrapers":
            print(f"  (precision only over the {figures['precision_pages']} fully asserted pages; count accuracy "
                  f"over {figures['count_pages']} pages with a known count; detail/auxiliary pages apart in --json)")


def current_records(rows: list[dict]) -> list[str]:
    """Printable lines of a source's records, newest first sight first."""
    lines = []
    for row in rows:
        lines.append(f"  {_when(row['date']):<16}  {_in_columns(row['title'], 60)}  {row['item_url'] or '(no link)'}")
        if row.get("place"):
            lines.append(f"{_BELOW}at {row['place']}")
        told = [f"{kind} {_when(row[key])}" for kind, key in (("published", "published"),
                                                              ("event starts", "event_start")) if row.get(key)]
        if told:
            lines.append(f"{_BELOW}{', '.join(told)}")
    return lines


# Where a record's further lines start: under its title.
_BELOW = " " * 20


def _when(value: datetime | str | None) -> str:
    """A record's date as a reader wants it: the day, and the hour where the page tells it (an event's). Rows
    read through a worker that holds chDB carry it as ISO text."""
    if not value:
        return ""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return moment.strftime("%Y-%m-%d %H:%M" if has_time_of_day(moment) else "%Y-%m-%d")


def _in_columns(text: str, width: int) -> str:
    """The text cut and padded to `width` terminal columns: a wide character (CJK) takes two, so titles in
    Japanese or Chinese keep the links after them in one column."""
    shown, used = [], 0
    for char in text:
        columns = 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
        if used + columns > width:
            break
        shown.append(char)
        used += columns
    return "".join(shown) + " " * (width - used)
