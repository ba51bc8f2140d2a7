"""Evaluation of record extraction with the metrics of DESIGN.md, sourcewatch beside the sibling-group baseline.

Estuka: per-page precision/recall/F1 of records (a predicted record matches a gold record when the gold
record's first field appears in its text, whitespace- and Unicode-normalised and case-insensitive, a label's
encoding faults forgiven — `_label_matcher`; one-to-one), averaged over pages. City Scrapers: one-to-one
recall of asserted items (title, or start date in a common rendering, in the record's text), exact-count
accuracy where the expected count is known, precision only over pages whose items are all asserted. Snapshots:
item-link recall over a listing and its pagination, and each labelled source page read alone: why it shows no
list, and whether a feed holds it. sourcewatch reads each page with the site's other pages as
witnesses of its template where the data set has them (models.records.witnesses); the baseline reads the page
alone.
"""

from __future__ import annotations

import re
import statistics
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from models.records.data import CityScrapersPage, EstukaPage, SnapshotList, SnapshotSourcePage
from models.records.extraction import ExtractedRecord, item_link, record_key, sibling_group_baseline
from models.records.list_feeds import list_feed_records, list_feed_urls
from models.records.main_list import extract_list, extract_records
from models.records.ranker import LargestRegion, Ranking
from models.records.witnesses import Fingerprint, merged, page_fingerprint, witnesses_by_site
from models.web.dom import normalize_space, parse_html

# (html, url, the fingerprint of the site's other pages) → the page's records.
Extractor = Callable[[str, str, Fingerprint], list[ExtractedRecord]]
Progress = Callable[[], None]


def ranked_extractor(ranker: Ranking | None = None) -> Extractor:
    """sourcewatch's extraction with this ranker (default: the shipped one)."""
    return lambda html, url, witness: extract_records(parse_html(html), url, ranker=ranker, witness=witness).records


def baseline_extractor(html: str, url: str, witness: Fingerprint = frozenset()) -> list[ExtractedRecord]:
    """The sibling-group baseline: it reads the page alone."""
    return sibling_group_baseline(parse_html(html), url)


class SitePage(Protocol):
    site: str
    html: str


def page_witnesses(pages: Sequence[SitePage]) -> list[Fingerprint]:
    """Each page's witnesses: the fingerprint of up to WITNESS_PAGES other pages of its site in the data set
    (Estuka: the site's other query pages; City Scrapers: other fixtures of the host)."""
    return witnesses_by_site([page.site for page in pages], [page_fingerprint(parse_html(page.html)) for page in pages])


# The extractor before the list ranker: the largest data region by MDR's ranking.
largest_region_extractor = ranked_extractor(LargestRegion())


def _fold(text: str) -> str:
    """Text as records and labels are compared: whitespace normalised, Unicode's compatibility forms as their
    plain letters ("…" as "...", "ﬁ" as "fi", full-width as ASCII: labels and pages write them either way),
    case-insensitive."""
    return unicodedata.normalize("NFKC", normalize_space(text)).casefold()


def _label_decoded(key: str) -> str:
    """A label mis-decoded where its page was UTF-8 read as Windows-1252 ("HPÂ®" for "HP®") as its page
    shows it; any other label as it is."""
    try:
        return unicodedata.normalize("NFKC", key).encode("cp1252").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return key


def _label_matcher(key: str) -> Callable[[str], bool]:
    """Whether a record's folded text shows the label: a "?" of the label also stands for the character an
    encoder could not write ("Your information ? Join AAdvantage" for "Your information › Join AAdvantage")."""
    folded = _fold(_label_decoded(key))
    if "?" not in folded:
        return lambda text: folded in text
    pattern = re.compile(re.escape(folded).replace(r"\?", "."))
    return lambda text: pattern.search(text) is not None


def one_to_one(matches: Sequence[Sequence[int]]) -> int:
    """The size of a maximum matching: matches[g] lists the records gold item g may match (Kuhn's
    augmenting paths; pages hold at most a few hundred records)."""
    owner: dict[int, int] = {}

    def assign(gold: int, visited: set[int]) -> bool:
        for record in matches[gold]:
            if record in visited:
                continue
            visited.add(record)
            if record not in owner or assign(owner[record], visited):
                owner[record] = gold
                return True
        return False

    return sum(1 for gold in range(len(matches)) if assign(gold, set()))


def _prf(matched: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = matched / predicted if predicted else 0.0
    recall = matched / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(statistics.fmean(values), 4) if values else None


def _timed(extractor: Extractor, html: str, url: str, witness: Fingerprint, times: list[float]
           ) -> list[ExtractedRecord]:
    started = time.perf_counter()
    records = extractor(html, url, witness)
    times.append((time.perf_counter() - started) * 1000)
    return records


def merged_away(records: Sequence[ExtractedRecord]) -> int:
    """How many of a page's records the stream would take for another record of the page: the same link, title
    and date (record_key) — one item to it, the others never reported."""
    return len(records) - len({record_key(record) for record in records})


def _timing(times: list[float]) -> dict:
    if not times:
        return {}
    ordered = sorted(times)
    return {"ms_p50": round(ordered[len(ordered) // 2], 2),
            "ms_p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
            "pages_per_s": round(len(times) / (sum(times) / 1000), 2)}


ESTUKA_URL = "https://estuka.invalid/"


def estuka_prf(texts: Sequence[str], keys: Sequence[str]) -> tuple[float, float, float]:
    """Precision, recall and F1 of records (their texts) against a page's labelled records (their first
    fields)."""
    folded = [_fold(text) for text in texts]
    matches = [[i for i, text in enumerate(folded) if shown(text)] for shown in map(_label_matcher, keys)]
    return _prf(one_to_one(matches), len(texts), len(keys))


def estuka_f1(texts: Sequence[str], keys: Sequence[str]) -> float:
    return estuka_prf(texts, keys)[2]


def evaluate_estuka(pages: Sequence[EstukaPage], extractors: Sequence[Extractor], witnesses: Sequence[Fingerprint],
                    progress: Progress | None = None) -> dict:
    """Per-page figures, macro over pages; `extractors[i]` reads page i (a ranker trained without its
    cross-validation fold), with `witnesses[i]`."""
    scores: list[tuple[str, float, float, float]] = []
    times: list[float] = []
    counts: list[int] = []
    told: Counter[str] = Counter()
    merged_records = 0
    for page, read, witness in zip(pages, extractors, witnesses, strict=True):
        records = _timed(read, page.html, ESTUKA_URL, witness, times)
        counts.append(len(records))
        merged_records += merged_away(records)
        told.update(kind for record in records for kind, date in (("published told", record.published),
                                                                    ("event told", record.event_start)) if date)
        scores.append((page.category, *estuka_prf([record.text for record in records], page.keys)))
        if progress:
            progress()
    by_category: dict[str, list[float]] = defaultdict(list)
    for category, _, _, f1 in scores:
        by_category[category].append(f1)
    return {
        "precision": _mean(s[1] for s in scores), "recall": _mean(s[2] for s in scores),
        "f1": _mean(s[3] for s in scores), "count_accuracy": None, "pages": len(scores),
        "records_per_page": _mean(counts), "records_merged_away": merged_records,
        "date_kinds": dict(sorted(told.items())),
        "by_category": {category: _mean(values) for category, values in sorted(by_category.items())},
        **_timing(times),
    }


def date_renderings(start: str) -> list[str]:
    """Common ways a page writes the date of an ISO start time, case-folded."""
    try:
        moment = datetime.fromisoformat(start)
    except ValueError:
        return []
    month, short, day, year = moment.strftime("%B"), moment.strftime("%b"), moment.day, moment.year
    forms = [
        moment.strftime("%Y-%m-%d"), f"{moment.month}/{day}/{year}", moment.strftime("%m/%d/%Y"),
        f"{moment.month}/{day}/{year % 100:02d}", moment.strftime("%m/%d/%y"), f"{month} {day}, {year}",
        f"{short} {day}, {year}", f"{short}. {day}, {year}", f"{day} {month} {year}", f"{month} {day} {year}",
        f"{month} {day}", f"{short} {day}", f"{short}. {day}", moment.strftime("%B %d"), f"{moment.month}/{day}",
    ]
    return [form.casefold() for form in dict.fromkeys(forms)]


def asserted_found(page: CityScrapersPage, texts: Sequence[str]) -> int:
    """How many of the page's asserted items the records (their texts) show, one record per item."""
    folded = [_fold(text) for text in texts]
    return one_to_one([_item_matches(item, folded) for item in page.items]) if page.items else 0


def _item_matches(item: tuple[str, str], texts: Sequence[str]) -> list[int]:
    title, start = item
    title = _fold(title)
    dates = date_renderings(start) if start else []
    return [i for i, text in enumerate(texts)
            if (title and title in text) or any(_contains_date(text, form) for form in dates)]


def _contains_date(text: str, form: str) -> bool:
    """The date form occurs in the text and is not the start of a longer number ("May 1" in "May 10")."""
    at = text.find(form)
    while at >= 0:
        end = at + len(form)
        if end >= len(text) or not text[end].isdigit():
            return True
        at = text.find(form, at + 1)
    return False


def evaluate_city_scrapers(pages: Sequence[CityScrapersPage], extractors: Sequence[Extractor],
                           witnesses: Sequence[Fingerprint], progress: Progress | None = None) -> dict:
    """`extractors[i]` reads page i, with `witnesses[i]`."""
    per_role: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    times: list[float] = []
    for page, read, witness in zip(pages, extractors, witnesses, strict=True):
        records = _timed(read, page.html, page.url, witness, times)
        found = asserted_found(page, [record.text for record in records])
        group = "listing" if page.role == "listing" else "detail_or_auxiliary"
        scores = per_role[group]
        scores["pages"].append(page.host)
        scores["records"].append(len(records))
        scores["merged_away"].append(merged_away(records))
        if page.items:
            scores["found"].append(found)
            scores["asserted"].append(len(page.items))
            scores["recall_by_host"].append((page.host, found / len(page.items)))
        if page.expected_count is not None:
            scores["count_ok"].append(len(records) == page.expected_count)
        if page.complete and page.items:
            scores["precision"].append(found / len(records) if records else 0.0)
        _tally_date_kinds(page, records, scores["date_kinds"])
        if progress:
            progress()
    return {group: _city_scrapers_summary(scores) for group, scores in per_role.items()} | {"timing": _timing(times)}


def _tally_date_kinds(page: CityScrapersPage, records: Sequence[ExtractedRecord], tally: list) -> None:
    """How the records' dates were told apart (models.records.date_kinds), appended to `tally` as words: each
    record's told kinds, and for each asserted meeting with a start that a record shows on its day, whether
    that record tells it as the event's start, as a publication date (the meeting's own day: a wrong kind,
    unless the page's markup calls it so), or not at all."""
    tally.extend(kind for record in records for kind, date in (("published told", record.published),
                                                               ("event told", record.event_start)) if date)
    folded = [_fold(record.text) for record in records]
    for title, start in page.items:
        if not start:
            continue
        day = datetime.fromisoformat(start).date()
        shown = [records[i] for i in _item_matches((title, start), folded)
                 if records[i].date and records[i].date.date() == day]
        if shown:
            record = shown[0]
            tally.append("meeting shown")
            if record.event_start and record.event_start.date() == day:
                tally.append("meeting told as event")
            if record.published and record.published.date() == day:
                tally.append("meeting told as published")


def _city_scrapers_summary(scores: dict[str, list]) -> dict:
    recall = sum(scores["found"]) / sum(scores["asserted"]) if scores["asserted"] else None
    precision = _mean(scores["precision"])
    by_host: dict[str, list[float]] = defaultdict(list)
    for host, value in scores["recall_by_host"]:
        by_host[host].append(value)
    return {
        "recall": round(recall, 4) if recall is not None else None,
        "precision": precision,
        "precision_pages": len(scores["precision"]),
        # Precision is known only on the few fully asserted pages; elsewhere F1 is the recall.
        "f1": round(2 * precision * recall / (precision + recall), 4) if precision and recall else recall,
        "f1_is_recall": not precision,
        "count_accuracy": _mean(float(ok) for ok in scores["count_ok"]),
        "count_pages": len(scores["count_ok"]),
        "pages": len(scores["pages"]),
        "records_per_page": _mean(scores["records"]),
        "records_merged_away": sum(scores["merged_away"]),
        "items": sum(scores["asserted"]),
        "by_category": {host: _mean(values) for host, values in sorted(by_host.items())},
        "date_kinds": dict(sorted(Counter(scores["date_kinds"]).items())),
    }


def evaluate_snapshots(lists: Sequence[SnapshotList], ranker: Ranking | None = None, baseline: bool = False) -> dict:
    """Item-link recall of each known listing, read page by page as one list; `item_recall` also counts an
    item whose feed title a record shows (listings that link their items to another site, e.g. an event's
    own page, cannot reach the feed's link)."""
    per_list = {}
    no_list: Counter[str] = Counter()
    for listing in lists:
        parsed = [(parse_html(html), url) for url, html in listing.pages]
        linked = listing.item_urls & _page_links(parsed)  # before extraction edits the pages
        if baseline:
            records = [r for root, url in parsed for r in sibling_group_baseline(root, url)]
        else:
            witness = merged(page_fingerprint(parse_html(html)) for _, html in listing.witness_pages)
            extractions = extract_list(parsed, ranker, witness)
            records = [r for extraction in extractions for r in extraction.records]
            no_list.update(extraction.no_list for extraction in extractions if extraction.no_list)
        links = {record.item_url for record in records}
        texts = [_fold(record.text) for record in records]
        by_title = {url for url, title in listing.item_titles.items() if any(_fold(title) in t for t in texts)}
        titled = {record.item_url for record in records
                  if _fold(record.title) == _fold(listing.item_titles.get(record.item_url, "\0"))}
        per_list[listing.name] = {
            "pages": len(listing.pages), "items": len(listing.item_urls), "records": len(records),
            "items_linked": len(linked), "links_found": len(linked & links),
            "titles_known": len(listing.item_titles.keys() & links), "titles_right": len(listing.item_urls & titled),
            "item_link_recall": round(len(listing.item_urls & links) / len(listing.item_urls), 4),
            "item_recall": round(len(listing.item_urls & (links | by_title)) / len(listing.item_urls), 4)}
    items = sum(result["items"] for result in per_list.values())
    linked = sum(result["items_linked"] for result in per_list.values())
    found = sum(result["links_found"] for result in per_list.values())
    titles = sum(result["titles_known"] for result in per_list.values())
    return {
        "item_link_recall": round(sum(r["item_link_recall"] * r["items"] for r in per_list.values()) / items, 4),
        "item_recall": round(sum(r["item_recall"] * r["items"] for r in per_list.values()) / items, 4),
        # The "where links are internal": items the listing's own pages link to (a listing that
        # links each item to another site's page cannot give the feed's link).
        "items_linked": linked,
        "linked_item_link_recall": round(found / linked, 4) if linked else None,
        # Of the items found by their link with a title in the feed, the share whose record's title is the feed's.
        "title_accuracy": round(sum(r["titles_right"] for r in per_list.values()) / titles, 4) if titles else None,
        "listings": len(per_list), "items": items, "by_listing": per_list,
        # The listings' pages read without a list, by the reason the reading gave (models.records.no_list).
        **({} if baseline else {"pages_without_a_list": dict(sorted(no_list.items()))}),
    } if per_list else {}


def evaluate_source_pages(pages: Sequence[SnapshotSourcePage], ranker: Ranking | None = None) -> dict:
    """Each labelled source page read alone, as a user's `watch URL` first reads it (no witness pages): how many
    show no list and why (models.records.no_list), and of those, the ones whose list a feed holds
    (models.records.list_feeds) — the feed named, found among the site's files, and read as records; a feed
    the snapshot does not hold (a Google Calendar's) is named only."""
    no_list: Counter[str] = Counter()
    in_feeds: Counter[str] = Counter()
    by_page = {}
    for page in pages:
        reason = extract_records(parse_html(page.html), page.url, ranker=ranker).no_list
        if not reason:
            continue
        no_list[reason] += 1
        feeds = list_feed_urls(page.html, page.url, reason)
        files = [(feed, file) for feed in feeds if (file := page.file_for(feed)) is not None]
        read = []
        for feed, file in files:
            try:
                read += list_feed_records(file.read_text(encoding="utf-8", errors="replace"), feed, page.url,
                                          datetime.now(UTC))
            except ValueError:
                continue
        in_feeds.update({"feed_named": bool(feeds), "feed_in_snapshot": bool(files), "read_from_feed": bool(read)})
        by_page[page.name] = {"no_list": reason, "feeds": feeds, "records_from_feed": len(read)}
    return {"pages": len(pages), "without_a_list": dict(sorted(no_list.items())),
            # Of the pages without a list: a feed named as holding it, that feed among the snapshot's files, and
            # records read from it.
            "list_in_a_feed": {key: in_feeds[key] for key in ("feed_named", "feed_in_snapshot", "read_from_feed")},
            "by_page": by_page}


def _page_links(parsed: Sequence[tuple]) -> set[str]:
    """Every link target on a listing's pages, as item links are resolved."""
    return {link for root, url in parsed if root is not None
            for anchor in root.iter("a") if (link := item_link(url, anchor.get("href")))}
