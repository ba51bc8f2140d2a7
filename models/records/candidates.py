"""Candidate lists of a page and what describes each: the record sets a page's main list may be, from several
generators, and the features the list ranker (models.records.ranker) chooses among them by.

Generators: MDR's data regions (models.records.data_regions, with wrappers replaced by what they wrap and
`<br>` lines made elements — models.records.extraction), and sibling groups (an element's children of one tag
and class set, two or more). They overlap on clean lists and differ where one of them fails: MDR fragments a
list whose records differ in structure; sibling groups miss records built of several siblings. Each
candidate is described page-relatively (its letters against the page's and the largest candidate's, its
rank), by its records (how many, how alike, linked, dated — a full date, a day of a month without its year, a
time of day: event and meeting lists show them — headed), by where it sits (landmark, depth,
position in the document), by which generator made it, and by how much of its text the site's other pages
show (models.records.witnesses: template, not data).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import lxml.html
import numpy as np

from models.records.data_regions import DataRegion
from models.records.witnesses import Fingerprint, structure_shown, template_shares
from models.records.dates import date_in_text, mentions_time_of_day, names_day_of_month
from models.records.extraction import (
    CONTENT_TAGS,
    LINE_CLASS,
    RegionCandidate,
    has_item_link,
    in_navigation,
    text_of,
    letters_of,
    ranked_candidates,
    sibling_groups,
)

# Sibling groups kept per page, by letters: the main list is among the largest; a page of thousands of small
# groups (menus, table cells) costs no more than this.
MAX_SIBLING_GROUPS = 40
FEATURES = (
    "log_records", "log_letters", "page_letter_share", "largest_letter_share", "letter_rank", "mdr_score_share",
    "linked_share", "dated_share", "day_share", "timed_share", "headed_share", "link_letter_share",
    "distinct_link_share", "record_letter_cv", "largest_record_share", "log_mean_record_letters", "in_navigation",
    "in_content", "log_depth", "position",
    "span", "from_mdr", "from_siblings", "lines", "table_rows", "list_items", "log_candidates",
    "template_letter_share", "template_record_share", "structure_on_witness", "data_on_witness", "has_witnesses",
)


@dataclass
class ListCandidate:
    """A record set the page's main list may be: each record a list of adjacent sibling elements."""

    region: DataRegion
    texts: list[str]
    generator: str
    # The MDR ranking's score (letters, weighted for links and dates; 0 for other generators).
    mdr_score: float = 0.0

    @property
    def records(self) -> list[list[lxml.html.HtmlElement]]:
        return self.region.records


def page_candidates(root: lxml.html.HtmlElement | None, base_url: str) -> list[ListCandidate]:
    """Every generator's candidates for the page, each record set once. Changes `root` as
    models.records.extraction.ranked_candidates does."""
    if root is None:
        return []
    found = [_from_mdr(candidate) for candidate in ranked_candidates(root, base_url)]
    # A sibling group of the elements an MDR region holds is that region less its grouping: MDR's records of
    # several siblings (a title row and a details row) are the finer reading.
    seen = {_elements(candidate.records) for candidate in found}
    groups = []
    for members in sibling_groups(root, 2):
        # Ranked by their raw text's letters (spacing holds none); only the groups kept are read as text.
        raw = [member.text_content() for member in members]
        if any(not text.isspace() for text in raw if text) and _elements([members]) not in seen:
            groups.append((sum(letters_of(text) for text in raw), members))
    groups.sort(key=lambda group: -group[0])
    for _, members in groups[:MAX_SIBLING_GROUPS]:
        kept = [(member, text) for member in members if (text := text_of([member]))]
        if len(kept) >= 2:
            region = DataRegion(parent=members[0].getparent(), records=[[m] for m, _ in kept], span=1)
            found.append(ListCandidate(region, [text for _, text in kept], "siblings"))
    return found


def _from_mdr(candidate: RegionCandidate) -> ListCandidate:
    return ListCandidate(candidate.region, candidate.texts, "mdr", candidate.score)


def _elements(records: list[list[lxml.html.HtmlElement]]) -> frozenset:
    return frozenset(id(node) for nodes in records for node in nodes)


def candidate_features(candidates: list[ListCandidate], root: lxml.html.HtmlElement, base_url: str,
                       witness: Fingerprint = frozenset()) -> np.ndarray:
    """(candidates, len(FEATURES)) — see the module; `witness`: the fingerprint of the site's other pages
    (models.records.witnesses), empty where none are known."""
    if not candidates:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    order = {element: index for index, element in enumerate(root.iter())}
    total_elements = max(len(order), 1)
    page_letters = max(letters_of(text_of([root])), 1)
    record_letters = [[letters_of(text) for text in c.texts] for c in candidates]
    letters = [sum(per_record) for per_record in record_letters]
    largest = max(max(letters), 1)
    rank = {index: position for position, index in enumerate(np.argsort([-value for value in letters]))}
    best_score = max(max(c.mdr_score for c in candidates), 1.0)
    texts_read: dict[str, tuple[int, bool]] = {}
    rows = []
    for index, (candidate, size, per_record) in enumerate(zip(candidates, letters, record_letters)):
        records, texts = candidate.records, candidate.texts
        dated = [date_in_text(text) is not None for text in texts]
        mean = statistics.fmean(per_record) if per_record else 0.0
        anchors = [a for nodes in records for node in nodes for a in ([node] if node.tag == "a" else node.iter("a"))]
        link_letters = sum(letters_of(a.text_content()) for a in anchors)
        hrefs = {a.get("href") for a in anchors if a.get("href")}
        parent = candidate.region.parent
        tag = records[0][0].tag
        rows.append([
            math.log1p(len(records)), math.log1p(size), size / page_letters, size / largest,
            rank[index] / len(candidates), candidate.mdr_score / best_score,
            sum(has_item_link(nodes, base_url) for nodes in records) / len(records),
            sum(dated) / len(texts),
            sum(day or names_day_of_month(text) for day, text in zip(dated, texts)) / len(texts),
            sum(mentions_time_of_day(text) for text in texts) / len(texts),
            sum(any(node.tag in _HEADINGS or any(True for _ in node.iter(*_HEADINGS)) for node in nodes)
                for nodes in records) / len(records),
            link_letters / max(size, 1), min(len(hrefs) / len(records), 2.0),
            statistics.pstdev(per_record) / mean if mean else 0.0,
            max(per_record) / max(size, 1), math.log1p(mean),
            float(in_navigation(parent)), float(_in_content(parent)),
            math.log1p(sum(1 for _ in parent.iterancestors())), order.get(records[0][0], 0) / total_elements,
            float(len(records[0])), float(candidate.generator == "mdr"), float(candidate.generator == "siblings"),
            float(records[0][0].get("class") == LINE_CLASS), float(tag == "tr"), float(tag == "li"),
            math.log1p(len(candidates)), *_witness_features(candidate.region, witness, texts_read),
        ])
    return np.asarray(rows, dtype=np.float32)


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def _witness_features(region: DataRegion, witness: Fingerprint, texts_read: dict[str, tuple[int, bool]]
                      ) -> tuple[float, ...]:
    """What the site's other pages show of the candidate: its text (template), its structure, its structure
    with other text (data that changes from page to page), and whether there were witnesses at all."""
    letter_share, record_share = template_shares(region.records, witness, texts_read)
    shown = float(bool(witness) and structure_shown(region, witness))
    return letter_share, record_share, shown, shown * (1.0 - record_share), float(bool(witness))


def _in_content(element: lxml.html.HtmlElement) -> bool:
    return any(node.tag in CONTENT_TAGS or node.get("role") == "main" for node in (element, *element.iterancestors()))
