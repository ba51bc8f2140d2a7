"""MDR: mining the data regions of a page (Liu, Grossman & Zhai, KDD 2003), without per-site rules.

A data region is a run of similar *generalized nodes* under one parent: each
generalized node is 1…MAX_GENERALIZED adjacent sibling subtrees, and adjacent
generalized nodes are similar when the normalized edit distance between their
tag strings (pre-order tag names) is at most SIMILARITY_THRESHOLD. Each
generalized node of a region is one data record; where a region's nodes are
single rows whose own children are all alike (a grid of cards, a table row
holding several items), the records are those children (MDR's record
identification step).

Efficiency: one walk of the tree writes every element's tag once (as a small
integer) into a flat pre-order list, and an element's tag string — capped at
TAG_STRING_CAP tokens — is a slice of it, cut only for the elements compared
(see TagStrings); where every child of a parent is alike, larger spans are not
tried (they cannot cover more); the edit distance is RapidFuzz's C
implementation over the integer sequences, and pairs whose lengths already
differ by more than the threshold allows are skipped without computing it (a
length bound on the normalized distance).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import lxml.etree
import lxml.html
from rapidfuzz.distance import Levenshtein

MAX_GENERALIZED = 4
SIMILARITY_THRESHOLD = 0.3
TAG_STRING_CAP = 300
# Odd sibling nodes (an ad, a header row) that may sit between two parts of one data region.
MAX_INTERLOPERS = 2
# Share of class names two roots must have in common to count as built by one template.
CLASS_AGREEMENT = 0.5
# A row's children are records only when each has this much structure (see _row_children_are_records).
MIN_CELL_TAGS = 4
# Elements that never carry records, skipped in tag strings and as candidates.
IGNORED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "link", "meta", "br", "wbr", "head",
                          "iframe", "input", "option", "select"})


@dataclass(frozen=True)
class DataRegion:
    """One data region: its records, each a list of adjacent sibling elements."""

    parent: lxml.html.HtmlElement
    records: list[list[lxml.html.HtmlElement]]
    # Number of sibling subtrees per generalized node (MDR's k).
    span: int


class TagStrings:
    """Pre-order tag-name sequences of the subtrees under a root as integer tuples, and each element's
    children, read in one walk of the tree.

    A subtree's pre-order is contiguous in its document's pre-order, so the walk writes every element's tag
    code once, into a flat list, and keeps where each element's subtree begins and ends there: a tag string
    is a slice, cut (and kept) only for the elements MDR compares. An element that holds no content (a
    script, an svg) starts a list of its own: its subtree is in no ancestor's string, but in its own."""

    def __init__(self, root: lxml.html.HtmlElement) -> None:
        self.codes: dict[str, int] = {}
        self.cache: dict[lxml.html.HtmlElement, tuple[int, ...]] = {}
        self._place: dict[lxml.html.HtmlElement, tuple[list[int], int, int]] = {}
        self._children: dict[lxml.html.HtmlElement, list[lxml.html.HtmlElement]] = {}
        self._classes: dict[lxml.html.HtmlElement, frozenset[str]] = {}
        self._walk(root)

    def _walk(self, root: lxml.html.HtmlElement) -> None:
        open_elements: list[tuple[list[int], int, list[lxml.html.HtmlElement]]] = []
        codes, place, children_of = self.codes, self._place, self._children
        for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
            if event == "start":
                if open_elements and _holds_content(element):
                    flat, _, siblings = open_elements[-1]
                    siblings.append(element)
                else:
                    flat = []
                open_elements.append((flat, len(flat), []))
                flat.append(codes.setdefault(element.tag, len(codes)))
                continue
            flat, begin, children = open_elements.pop()
            place[element] = (flat, begin, len(flat))
            children_of[element] = children

    def children(self, element: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
        """element_children of an element under the root."""
        return self._children[element]

    def of(self, element: lxml.html.HtmlElement) -> tuple[int, ...]:
        """The element's pre-order tag codes, the first TAG_STRING_CAP of them."""
        string = self.cache.get(element)
        if string is None:
            flat, begin, end = self._place[element]
            string = self.cache[element] = tuple(flat[begin:min(end, begin + TAG_STRING_CAP)])
        return string

    def of_group(self, elements: list[lxml.html.HtmlElement]) -> tuple[int, ...]:
        """Adjacent siblings' strings one after the other, each cut at TAG_STRING_CAP, the whole at twice that."""
        if len(elements) == 1:
            return self.of(elements[0])
        places = [self._place[element] for element in elements]
        flat, begin, _ = places[0]
        # Siblings none of whose strings is cut lie side by side in the flat list: one slice.
        if all(end - start <= TAG_STRING_CAP for _, start, end in places) and \
                all(a[2] == b[1] and a[0] is b[0] for a, b in zip(places, places[1:])):
            return tuple(flat[begin:min(places[-1][2], begin + TAG_STRING_CAP * 2)])
        return tuple(code for element in elements for code in self.of(element))[:TAG_STRING_CAP * 2]

    def alike(self, left: list[lxml.html.HtmlElement], right: list[lxml.html.HtmlElement]) -> bool:
        """Two generalized nodes are alike when their roots share tags and class names (the site's template
        says so) or their tag strings are similar (MDR's test, for pages without class names)."""
        return all(map(self._same_classes, left, right)) or similar(self.of_group(left), self.of_group(right))

    def class_names(self, element: lxml.html.HtmlElement) -> frozenset[str]:
        """The element's class names, once per element (MDR compares each element with its neighbours at every
        span)."""
        found = self._classes.get(element)
        if found is None:
            found = self._classes[element] = frozenset((element.get("class") or "").split())
        return found

    def _same_classes(self, left: lxml.html.HtmlElement, right: lxml.html.HtmlElement) -> bool:
        """Same tag, and class names that mostly agree (Jaccard ≥ CLASS_AGREEMENT; order ignored)."""
        if left.tag != right.tag:
            return False
        raw = left.get("class")
        if raw == right.get("class"):
            # One class attribute, as siblings built from one template mostly write it: no sets to compare.
            return bool(raw) and not raw.isspace()
        a, b = self.class_names(left), self.class_names(right)
        return bool(a and b) and len(a & b) >= CLASS_AGREEMENT * len(a | b)


def element_children(element: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The element children that can hold content (no comments, scripts, styles, form plumbing)."""
    return [child for child in element.iterchildren(lxml.etree.Element) if child.tag not in IGNORED_TAGS]


def _holds_content(node: lxml.html.HtmlElement) -> bool:
    """What element_children keeps, for a node met in a walk (which also meets comments)."""
    return isinstance(node.tag, str) and node.tag not in IGNORED_TAGS


def similar(a: tuple[int, ...], b: tuple[int, ...], threshold: float = SIMILARITY_THRESHOLD) -> bool:
    """Normalized edit distance (distance / longer length) of two tag strings ≤ threshold."""
    longer = max(len(a), len(b))
    if longer == 0:
        return True
    # The distance is at least the length difference: skip pairs that cannot be similar.
    if abs(len(a) - len(b)) > threshold * longer:
        return False
    return Levenshtein.distance(a, b, score_cutoff=int(threshold * longer)) <= threshold * longer


def _runs(children: list[lxml.html.HtmlElement], tags: TagStrings, span: int, start: int) -> Iterator[tuple[int, int]]:
    """(first child index, number of generalized nodes) of each run of ≥ 2 similar adjacent generalized
    nodes of `span` siblings, starting at child `start`."""
    run_start, count = start, 1
    position = start
    while position + 2 * span <= len(children):
        left, right = children[position:position + span], children[position + span:position + 2 * span]
        if tags.alike(left, right):
            count += 1
        else:
            if count >= 2:
                yield run_start, count
            run_start, count = position + span, 1
        position += span
    if count >= 2:
        yield run_start, count


def _regions_under(parent: lxml.html.HtmlElement, tags: TagStrings) -> list[tuple[int, int, int]]:
    """MDR's region choice under one parent: (span, first child, generalized nodes) of non-overlapping runs,
    those covering the most children first and, for about equal cover, the smaller span."""
    children = tags.children(parent)
    if len(children) < 2:
        return []
    single = list(_runs(children, tags, 1, 0))
    if single == [(0, len(children))]:
        # Alike children, all of them: a larger span covers fewer (see the sort below) and overlaps this.
        return [(1, 0, len(children))]
    candidates = [(1, first, count) for first, count in single] + [
                  (span, first, count)
                  for span in range(2, min(MAX_GENERALIZED, len(children) // 2) + 1)
                  for start in range(span)
                  for first, count in _runs(children, tags, span, start)]
    # Any run of alike single nodes is also a run of alike pairs, triples…, which may cover one node more
    # at an edge: a larger span must cover more than that to win.
    candidates.sort(key=lambda c: (-(c[0] * c[2] - c[0] * (c[0] - 1)), c[0], c[1]))
    taken: list[tuple[int, int, int]] = []
    covered: set[int] = set()
    for span, first, count in candidates:
        indices = set(range(first, first + span * count))
        if indices & covered:
            continue
        covered |= indices
        taken.append((span, first, count))
    return taken


def _row_children_are_records(rows: list[list[lxml.html.HtmlElement]], tags: TagStrings) -> bool:
    """True when every row is one element whose ≥ 2 children are alike, structured and linked: records laid
    out in rows (a grid of cards). Plain fields side by side — a table row's date, title and place — are not."""
    if any(len(row) != 1 for row in rows):
        return False
    for (row,) in rows:
        cells = tags.children(row)
        if len(cells) < 2:
            return False
        if any(len(tags.of(cell)) < MIN_CELL_TAGS or not _has_link(cell) for cell in cells):
            return False
        first = tags.of(cells[0])
        if not all(similar(first, tags.of(cell)) for cell in cells[1:]):
            return False
    return True


def _has_link(element: lxml.html.HtmlElement) -> bool:
    return element.tag == "a" and bool(element.get("href")) or any(True for _ in element.iterfind(".//a[@href]"))


def _merged(groups: list[list[list[lxml.html.HtmlElement]]], tags: TagStrings) -> list[list[list[lxml.html.HtmlElement]]]:
    """Runs of one parent joined across at most MAX_INTERLOPERS odd nodes between them (an ad, a header
    row) when their generalized nodes are alike: one region, not two fragments."""
    ordered = sorted(groups, key=lambda records: records[0][0].getparent().index(records[0][0]))
    merged = [ordered[0]] if ordered else []
    for records in ordered[1:]:
        last = merged[-1]
        parent = last[-1][-1].getparent()
        gap = parent.index(records[0][0]) - parent.index(last[-1][-1]) - 1
        if len(records[0]) == len(last[0]) and gap <= MAX_INTERLOPERS and tags.alike(last[-1], records[0]):
            merged[-1] = last + records
        else:
            merged.append(records)
    return merged


def find_data_regions(root: lxml.html.HtmlElement) -> list[DataRegion]:
    """Every data region of the page, in document order of their parents (unranked)."""
    body = root.find("body")
    top = body if body is not None else root
    tags = TagStrings(top)
    regions = []
    for parent in top.iter():
        # len() counts every child node in C: most elements have fewer than two, and hold no region.
        if len(parent) < 2 or not isinstance(parent.tag, str) or parent.tag in IGNORED_TAGS:
            continue
        children = tags.children(parent)
        runs = [[children[first + i * span:first + (i + 1) * span] for i in range(count)]
                for span, first, count in _regions_under(parent, tags)]
        for records in _merged(runs, tags):
            if _row_children_are_records(records, tags):
                cells = [[cell] for (row,) in records for cell in tags.children(row)]
                regions.append(DataRegion(parent=parent, records=cells, span=1))
            else:
                regions.append(DataRegion(parent=parent, records=records, span=len(records[0])))
    return regions
