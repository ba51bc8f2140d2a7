"""What a site's other pages say about one of its list pages: text they share with it is the site's template.

A list page and the site's other pages (the next page of the list, the pages met on the way to it) are built
from one template and differ in their data (DCADE's observation: the region whose content changes from page
to page while its structure repeats is the data). A page's fingerprint is the set of its visible text nodes
(hashed, case-folded) and of its structure (each element's parent path and its own tag and classes, as a
list's template names its records). A candidate list whose text the witnesses show is template — a menu, a
sidebar, a footer's link list; one whose structure they show with other text is data that changes from page
to page. Stable hashes (CRC-32), because a fingerprint is stored with the site and read by another process.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence

import lxml.html

from models.records.data_regions import DataRegion
from models.records.extraction import letters_of, prepare_page, record_signature, tag_path
from models.web.dom import normalize_space

Fingerprint = frozenset[int]
# Other pages of a site kept as witnesses of its template: a few show what repeats; more cost memory per site.
WITNESS_PAGES = 3


def _node_key(text: str) -> int | None:
    folded = normalize_space(text).casefold()
    return zlib.crc32(folded.encode()) if letters_of(folded) else None


def _structure_key(parent_path: str, element: lxml.html.HtmlElement) -> int:
    return zlib.crc32(f"\x00{parent_path}|{record_signature(element)}".encode())


def page_fingerprint(root: lxml.html.HtmlElement | None) -> Fingerprint:
    """The hashes of the page's visible text nodes that hold letters and of its structure. Changes `root`
    (models.records.extraction.prepare_page)."""
    if root is None:
        return frozenset()
    prepare_page(root)
    keys = {key for text in root.itertext() if (key := _node_key(text)) is not None}
    paths = {root: root.tag}
    for parent in root.iter():
        if not isinstance(parent.tag, str):
            continue
        path = paths.pop(parent, None) or tag_path(parent)
        for child in parent:
            if isinstance(child.tag, str):
                keys.add(_structure_key(path, child))
                paths[child] = f"{path}/{child.tag}"
    return frozenset(keys)


def structure_shown(region: DataRegion, witness: Fingerprint) -> bool:
    """Whether a witness page holds elements built like the region's records, under the same path."""
    return _structure_key(tag_path(region.parent), region.records[0][0]) in witness


def merged(fingerprints: Iterable[Fingerprint]) -> Fingerprint:
    return frozenset().union(*fingerprints)


class TemplateReader:
    """How much of a page's records the witness pages show, each text node and each record read once (one
    page's candidates hold the same records and text nodes many times over)."""

    def __init__(self, witness: Fingerprint) -> None:
        self.witness = witness
        self._texts: dict[str, tuple[int, int]] = {}  # text node → its letters, those the witnesses show
        self._records: dict[tuple, tuple[int, int]] = {}

    def shares(self, records: list[list[lxml.html.HtmlElement]]) -> tuple[float, float]:
        """(share of the records' letters in text nodes the witness pages show, share of the records all of
        whose text the witness pages show); zeros where there are no witnesses."""
        if not self.witness:
            return 0.0, 0.0
        seen_letters = all_letters = template_records = 0
        for nodes in records:
            key = tuple(nodes)
            read = self._records.get(key) or self._records.setdefault(key, self._record(nodes))
            record_letters, record_seen = read
            seen_letters += record_seen
            all_letters += record_letters
            template_records += record_letters > 0 and record_seen == record_letters
        return (seen_letters / all_letters if all_letters else 0.0), template_records / max(len(records), 1)

    def _record(self, nodes: list[lxml.html.HtmlElement]) -> tuple[int, int]:
        """(the record's letters, those in text nodes the witness pages show)."""
        texts = self._texts
        record_letters = record_seen = 0
        for node in nodes:
            for text in node.itertext():
                read = texts.get(text)
                if read is None:
                    letters = letters_of(text)
                    read = texts[text] = (letters, letters if letters and _node_key(text) in self.witness else 0)
                record_letters += read[0]
                record_seen += read[1]
        return record_letters, record_seen


def witnesses_by_site(sites: Sequence[Hashable], fingerprints: Sequence[Fingerprint],
                      most: int = WITNESS_PAGES) -> list[Fingerprint]:
    """For each page (its site, its fingerprint), the merged fingerprint of up to `most` other pages of its
    site, in the order given."""
    pages_of: dict[Hashable, list[int]] = defaultdict(list)
    for index, site in enumerate(sites):
        pages_of[site].append(index)
    return [merged(fingerprints[other] for other in [o for o in pages_of[site] if o != index][:most])
            for index, site in enumerate(sites)]
