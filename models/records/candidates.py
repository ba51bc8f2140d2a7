"""Candidate lists of a page and what describes each: the record sets a page's main list may be, from several
generators, and the features the list ranker (models.records.ranker) chooses among them by.

Generators: MDR's data regions (models.records.data_regions, with wrappers replaced by what they wrap and
`<br>` lines made elements — models.records.extraction), and sibling groups (an element's children of one tag
and class set, two or more; and of one tag sharing a class name where some add their own: "first", a post's
id). They overlap on clean lists and differ where one of them fails: MDR fragments a list whose records differ
in structure, or pairs alike items up; sibling groups miss records built of several siblings. Each
candidate is described page-relatively (its letters against the page's and the largest candidate's, its
rank), by its records (how many, how alike, linked, dated — a full date, a day of a month without its year, a
time of day: event and meeting lists show them — headed), by how new its newest date is against the page's
newest (a page of meetings or posts by year lists the years it keeps beside the current one), by where it
sits (landmark, depth, position in the document), by which generator made it, and by how much of its text
the site's other pages show (models.records.witnesses: template, not data).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import NamedTuple

import lxml.html
import numpy as np

from models.records.data_regions import DataRegion
from models.records.witnesses import Fingerprint, TemplateReader, structure_shown
from models.records.dates import date_in_text, mentions_time_of_day, names_day_of_month
from models.records.extraction import (
    CONTENT_TAGS,
    HEADINGS,
    LINE_CLASS,
    RegionCandidate,
    has_item_link,
    item_link,
    in_navigation,
    navigation_landmark,
    text_of,
    letters_of,
    ranked_candidates,
    record_anchors,
    region_template,
    sibling_groups,
)
from models.web.dom import document_place, text_content

# Sibling groups kept per page, by letters: the main list is among the largest; a page of thousands of small
# groups (menus, table cells) costs no more than this.
MAX_SIBLING_GROUPS = 40
# Candidates described for the ranker, the largest by letters: a page's main list has always been among its 64
# largest candidates (the best-matching candidate of every labelled Estuka and City Scrapers page ranks within
# the first 48), and describing the rest of a page of hundreds (pages of 1–2 MB hold 300–600) cost most of
# its extraction time. The page-relative features still count every candidate.
MAX_DESCRIBED = 64
FEATURES = (
    "log_records", "log_letters", "page_letter_share", "largest_letter_share", "letter_rank", "mdr_score_share",
    "linked_share", "dated_share", "day_share", "timed_share", "headed_share", "link_letter_share",
    "distinct_link_share", "record_letter_cv", "largest_record_share", "log_mean_record_letters", "in_navigation",
    "in_content", "log_depth", "position",
    "span", "from_mdr", "from_siblings", "lines", "table_rows", "list_items", "log_candidates",
    "template_letter_share", "template_record_share", "structure_on_witness", "data_on_witness", "has_witnesses",
    "regrouped", "holds_newest_date", "newest_date_lag", "named_aside", "named_main",
)
# What a page's own class and id names call the block a candidate sits in (the candidate's parent and its nearest
# ancestors): a widget beside the content — a sidebar, a carousel of recommendations, a search's filters — or
# the content itself — the results, the posts, the main column. Words begin a name's part ("sidebar-content",
# "mainContent", "search_results"); the ranker learns what each kind is worth.
NAMED_ANCESTORS = 7
_MENU_ROLES = frozenset({"navigation", "menu", "menubar"})
_ASIDE_NAMES = re.compile(r"(?<![a-z])(?:sidebar|aside|widget|carousel|slider|swiper|related|recommend|sponsor|"
                          r"trend|popular|featured|promo|advert|banner|filter|facet|breadcrumb|menu|nav|footer|"
                          r"header|toolbar|share|social)")
_MAIN_NAMES = re.compile(r"(?<![a-z])(?:main|content|result|list|product|item|post|article|event|news|search|"
                         r"entries|entry|calendar|meeting|agenda)")
# How far a dated candidate's newest date may lie behind the page's newest before it counts as wholly old.
NEWEST_DATE_HORIZON_DAYS = 3650


@dataclass
class ListCandidate:
    """A record set the page's main list may be: each record a list of adjacent sibling elements."""

    region: DataRegion
    texts: list[str]
    generator: str
    # The MDR ranking's score (letters, weighted for links and dates; 0 for other generators).
    mdr_score: float = 0.0
    # Another candidate holds the same elements grouped otherwise (MDR's records of two siblings, one each).
    regrouped: bool = False

    @property
    def records(self) -> list[list[lxml.html.HtmlElement]]:
        return self.region.records

    @cached_property
    def record_letters(self) -> list[int]:
        return [letters_of(text) for text in self.texts]

    @property
    def letters(self) -> int:
        return sum(self.record_letters)


def page_candidates(root: lxml.html.HtmlElement | None, base_url: str) -> list[ListCandidate]:
    """Every generator's candidates for the page, each record set once. Changes `root` as
    models.records.extraction.ranked_candidates does."""
    if root is None:
        return []
    found = [mdr for mdr in map(_from_mdr, ranked_candidates(root, base_url)) if mdr.records]
    # A sibling group of the elements an MDR region holds is that region again, less its grouping where MDR
    # grouped several siblings: a title row and a details row are one record. Unless each of them links an
    # item of its own — then they are alike items MDR paired up (results that differ too much one by one, alike
    # two by two), and the group is the other reading of them, both kept for the ranker.
    regions = {_elements(candidate.records): candidate for candidate in found}
    groups = []
    for members in sibling_groups(root, 2, shared_classes=True):
        # Ranked by their raw text's letters (spacing holds none); only the groups kept are read as text.
        raw = [text_content(member) for member in members]
        region = regions.get(_elements([members]))
        if any(not text.isspace() for text in raw if text) and (region is None or _items_paired(region, base_url)):
            groups.append((sum(letters_of(text) for text in raw), members, region))
    groups.sort(key=lambda group: -group[0])
    for _, members, paired in groups[:MAX_SIBLING_GROUPS]:
        kept = [(member, text) for member in members if not label_row([member]) and (text := text_of([member]))]
        if len(kept) >= 2 and not all(navigation_landmark(member) for member, _ in kept):
            region = DataRegion(parent=members[0].getparent(), records=[[m] for m, _ in kept], span=1)
            found.append(ListCandidate(region, [text for _, text in kept], "siblings", regrouped=paired is not None))
            if paired is not None:
                paired.regrouped = True
    return found + _alike_unions(found)


def _alike_unions(regions: list[ListCandidate]) -> list[ListCandidate]:
    """A list split in parts built alike — a table of meetings per year under its heading, a list per column —
    as one candidate of all their records in page order: candidates of one template (the same parent path and
    record tag and class) under two or more parents, none inside another."""
    by_template: dict[str, list[ListCandidate]] = defaultdict(list)
    for region in regions:
        by_template[region_template(region)].append(region)
    alike = [parts for parts in by_template.values() if len(parts) > 1]
    if not alike:
        return []
    # Which candidate's record each element is the root of: parts that are fields of one list's records (a
    # row's cells, alike in every row) are that list, read finer, not a list split in parts.
    record_of = {node: (id(candidate), number) for candidate in regions
                 for number, nodes in enumerate(candidate.records) for node in nodes}
    unions = []
    for parts in alike:
        # One part per parent (MDR's region and a sibling group of one list are the same part), none inside another.
        by_parent = {}
        for part in sorted(parts, key=lambda part: -len(part.records)):
            by_parent.setdefault(part.region.parent, part)
        outer = [part for parent, part in by_parent.items()
                 if not any(ancestor in by_parent for ancestor in parent.iterancestors())]
        # Menus built alike (a desktop and a mobile one) are no list split in parts: their union's common
        # ancestor would hide that each lies in a menu. (Not any landmark: some sites wrap result groups in
        # `aside`.)
        if len(outer) < 2 or any(_in_menu(part.region.parent) for part in outer) or (
                _fields_of_records([part.region.parent for part in outer], record_of) and not _each_names_a_day(outer)):
            continue
        outer = _shown_once(outer)
        if len(outer) < 2:
            continue
        outer.sort(key=lambda part: document_place(part.records[0][0]))
        region = DataRegion(parent=_common_ancestor([part.region.parent for part in outer]),
                            records=[nodes for part in outer for nodes in part.records], span=outer[0].region.span)
        unions.append(ListCandidate(region, [text for part in outer for text in part.texts], "union"))
    return unions


def _each_names_a_day(parts: list[ListCandidate]) -> bool:
    """Every record of every part names a day: the parts are lists of dated items (a year's meetings under each
    of a list's year headings, which a coarser reading takes as its records), not a row's fields, of which one
    at most holds the date."""
    return all(_dates_shown(text).day for part in parts for text in part.texts)


def _shown_once(parts: list[ListCandidate]) -> list[ListCandidate]:
    """The parts less each whose every record another part shows: a block of the latest items beside the whole
    list is that list shown again, not a part of it (parts that share a few items — a meeting under "Upcoming"
    and under its year — are kept)."""
    kept = sorted(parts, key=lambda part: len(part.records))
    for part in list(kept):
        others = {text for other in kept if other is not part for text in other.texts}
        if set(part.texts) <= others:
            kept.remove(part)
    return kept


def _in_menu(element: lxml.html.HtmlElement) -> bool:
    return any(node.tag == "nav" or node.get("role") in _MENU_ROLES for node in (element, *element.iterancestors()))


def _fields_of_records(parents: list[lxml.html.HtmlElement], record_of: dict) -> bool:
    """Every parent is, or lies inside, a record of another candidate, a different record each: the parts are
    the fields of listed records (a row's cells), not parts of a list."""
    held = []
    for parent in parents:
        owner = next((record_of[node] for node in itertools.chain((parent,), parent.iterancestors())
                      if node in record_of), None)
        if owner is None:
            return False
        held.append(owner)
    return len(set(held)) == len(held)


def _common_ancestor(elements: list[lxml.html.HtmlElement]) -> lxml.html.HtmlElement:
    """The nearest element that holds all of them."""
    common = [elements[0], *elements[0].iterancestors()]
    for element in elements[1:]:
        holding = set(element.iterancestors()) | {element}
        common = [node for node in common if node in holding]
    return common[0]


def _items_paired(candidate: ListCandidate, base_url: str) -> bool:
    """MDR grouped several siblings per record, each of which links an item."""
    return candidate.region.span > 1 and all(has_item_link([node], base_url)
                                             for nodes in candidate.records for node in nodes)


def _from_mdr(candidate: RegionCandidate) -> ListCandidate:
    """MDR's region as a candidate of its records that have text (an empty `<p>` between two is none) and are
    no table's label row."""
    region = candidate.region
    kept = [(nodes, text) for nodes, text in zip(candidate.records, candidate.texts, strict=True)
            if not label_row(nodes)]
    if len(kept) < len(region.records):
        region = DataRegion(parent=region.parent, records=[nodes for nodes, _ in kept], span=region.span)
    return ListCandidate(region, [text for _, text in kept], "mdr", candidate.score)


def label_row(nodes: list[lxml.html.HtmlElement]) -> bool:
    """A table's row that labels the items rather than being one: its column labels ("Date", "Meeting",
    "Minutes" — a row of header cells alone, or a row in the table's head), or a group's label in one cell
    across the columns ("2019 Meetings")."""
    if len(nodes) != 1 or nodes[0].tag != "tr":
        return False
    row = nodes[0]
    cells = [cell for cell in row if isinstance(cell.tag, str)]
    parent = row.getparent()
    return ((parent is not None and parent.tag == "thead") or (bool(cells) and all(cell.tag == "th" for cell in cells))
            or (len(cells) == 1 and _spans_columns(cells[0])))


def _spans_columns(cell: lxml.html.HtmlElement) -> bool:
    span = cell.get("colspan", "1").strip()
    return span.isdigit() and int(span) > 1


def _elements(records: list[list[lxml.html.HtmlElement]]) -> frozenset:
    return frozenset(id(node) for nodes in records for node in nodes)


def shortlist(candidates: list[ListCandidate]) -> list[int]:
    """The indices of the candidates worth describing: the MAX_DESCRIBED largest by letters, in page order."""
    if len(candidates) <= MAX_DESCRIBED:
        return list(range(len(candidates)))
    # The order candidate_features ranks them in.
    largest = np.argsort([-c.letters for c in candidates])[:MAX_DESCRIBED]
    return sorted(int(index) for index in largest)


def candidate_features(candidates: list[ListCandidate], root: lxml.html.HtmlElement, base_url: str,
                       witness: Fingerprint = frozenset(), described: Sequence[int] | None = None) -> np.ndarray:
    """(len(described), len(FEATURES)): the features of candidates[i] for each i in `described` (default:
    every candidate), page-relative figures counting every candidate — see the module; `witness`: the
    fingerprint of the site's other pages (models.records.witnesses), empty where none are known."""
    described = range(len(candidates)) if described is None else described
    if not described:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    order = {element: index for index, element in enumerate(root.iter())}
    total_elements = max(len(order), 1)
    page_letters = max(letters_of(text_content(root)), 1)  # spacing holds no letters: not normalised
    letters = [c.letters for c in candidates]
    largest = max(max(letters), 1)
    rank = {index: position for position, index in enumerate(np.argsort([-value for value in letters]))}
    best_score = max(max(c.mdr_score for c in candidates), 1.0)
    template = TemplateReader(witness)
    # Candidates of one page share records (MDR's and the sibling groups' readings of one list): each
    # record's dates and links are read once.
    dates_read: dict[str, _DatesShown] = {}
    records_read: dict[tuple, _RecordLinks] = {}
    anchors_read: dict[lxml.html.HtmlElement, _Anchor] = {}
    rows, newest, named = [], [], []
    for index in described:
        candidate = candidates[index]
        records, texts, per_record, size = candidate.records, candidate.texts, candidate.record_letters, letters[index]
        dates = [dates_read.get(text) or dates_read.setdefault(text, _dates_shown(text)) for text in texts]
        read = [records_read.get(key) or records_read.setdefault(key, _record_links(nodes, base_url, anchors_read))
                for nodes in records if (key := tuple(nodes))]
        mean = sum(per_record) / len(per_record) if per_record else 0.0
        link_letters = sum(record.link_letters for record in read)
        hrefs = set().union(*(record.hrefs for record in read))
        parent = candidate.region.parent
        tag = records[0][0].tag
        rows.append([
            math.log1p(len(records)), math.log1p(size), size / page_letters, size / largest,
            rank[index] / len(candidates), candidate.mdr_score / best_score,
            sum(record.linked for record in read) / len(records),
            sum(shown.dated for shown in dates) / len(texts),
            sum(shown.day for shown in dates) / len(texts),
            sum(shown.timed for shown in dates) / len(texts),
            sum(record.headed for record in read) / len(records),
            link_letters / max(size, 1), min(len(hrefs) / len(records), 2.0),
            _spread(per_record) / mean if mean else 0.0,
            max(per_record) / max(size, 1), math.log1p(mean),
            float(in_navigation(parent)), float(_in_content(parent)),
            math.log1p(sum(1 for _ in parent.iterancestors())), order.get(records[0][0], 0) / total_elements,
            float(len(records[0])), float(candidate.generator == "mdr"), float(candidate.generator == "siblings"),
            float(records[0][0].get("class") == LINE_CLASS), float(tag == "tr"), float(tag == "li"),
            math.log1p(len(candidates)), *_witness_features(candidate.region, template), float(candidate.regrouped),
        ])
        named.append(_named(parent))
        newest.append(max((shown.date for shown in dates if shown.date is not None), default=None))
    page_newest = max((date for date in newest if date is not None), default=None)
    for row, date, names in zip(rows, newest, named):
        row.extend(_newest_date_features(date, page_newest))
        row.extend(names)
    return np.asarray(rows, dtype=np.float32)


def _named(parent: lxml.html.HtmlElement) -> tuple[float, float]:
    """(named as a widget beside the content, named as content) by the class and id names of the candidate's
    parent and its nearest ancestors."""
    nearest = itertools.islice(itertools.chain((parent,), parent.iterancestors()), NAMED_ANCESTORS)
    names = " ".join(f"{node.get('class') or ''} {node.get('id') or ''}" for node in nearest).lower()
    return float(_ASIDE_NAMES.search(names) is not None), float(_MAIN_NAMES.search(names) is not None)


def _spread(letters: list[int]) -> float:
    """The population standard deviation of the records' letters, in exact integers (statistics.pstdev's
    fractions cost a page of hundreds of candidates several milliseconds)."""
    count, total = len(letters), sum(letters)
    return math.sqrt((count * sum(value * value for value in letters) - total * total) / (count * count))


def _newest_date_features(newest: datetime | None, page_newest: datetime | None) -> tuple[float, float]:
    """(whether the candidate holds the page's newest date, how far its newest lies behind it: 0 the same day,
    1 undated or NEWEST_DATE_HORIZON_DAYS behind), the newest taken over the described candidates."""
    if newest is None or page_newest is None:
        return 0.0, 1.0
    days = (page_newest - newest).days
    return float(days <= 0), min(math.log1p(days) / math.log1p(NEWEST_DATE_HORIZON_DAYS), 1.0)


class _DatesShown(NamedTuple):
    date: datetime | None  # the first full date written
    dated: bool
    day: bool  # a day of a month, with or without its year
    timed: bool  # a time of day


def _dates_shown(text: str) -> _DatesShown:
    date = date_in_text(text)
    dated = date is not None
    return _DatesShown(date, dated, dated or names_day_of_month(text), mentions_time_of_day(text))


class _RecordLinks(NamedTuple):
    linked: bool  # links an item
    headed: bool  # holds a heading
    link_letters: int
    hrefs: frozenset[str]


class _Anchor(NamedTuple):
    item: bool  # links an item (models.records.extraction.item_link)
    letters: int
    href: str | None


def _record_links(nodes: list[lxml.html.HtmlElement], base_url: str,
                  anchors_read: dict[lxml.html.HtmlElement, _Anchor]) -> _RecordLinks:
    """`anchors_read`: each anchor read once for the page's records (a wrapper's records hold a finer list's)."""
    anchors = []
    for element in record_anchors(nodes):
        anchor = anchors_read.get(element)
        if anchor is None:
            href = element.get("href")
            anchor = anchors_read[element] = _Anchor(bool(item_link(base_url, href)),
                                                     letters_of(text_content(element)), href)
        anchors.append(anchor)
    headed = any(node.tag in HEADINGS or any(True for _ in node.iter(*HEADINGS)) for node in nodes)
    return _RecordLinks(any(anchor.item for anchor in anchors), headed, sum(anchor.letters for anchor in anchors),
                        frozenset(anchor.href for anchor in anchors if anchor.href))


def _witness_features(region: DataRegion, template: TemplateReader) -> tuple[float, ...]:
    """What the site's other pages show of the candidate: its text (template), its structure, its structure
    with other text (data that changes from page to page), and whether there were witnesses at all."""
    witness = template.witness
    letter_share, record_share = template.shares(region.records)
    shown = float(bool(witness) and structure_shown(region, witness))
    return letter_share, record_share, shown, shown * (1.0 - record_share), float(bool(witness))


def _in_content(element: lxml.html.HtmlElement) -> bool:
    return any(node.tag in CONTENT_TAGS or node.get("role") == "main" for node in (element, *element.iterancestors()))
