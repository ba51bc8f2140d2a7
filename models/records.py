"""Records of a listing page: the ranked MDR data regions turned into item link, title, date and snippet.

`extract_records(root, url)` reads one page; `extract_list(pages)` reads the
pages of one paginated list with one template (the region of the first page
that has records fixes the parent's tag path and the record shape; later pages
use their region that matches it) and keeps each item once.

Region ranking: MDR ranks regions by number of records × record size; here the
size is the record's text length, a region only counts records with text,
regions whose records carry item links are preferred (the seed's filter: a
record set is kept when its records link to their items), and regions inside
the page's navigation landmarks (nav, header, footer, aside) are not content. A *wrapper* region
(a few big generalized nodes that each hold a finer region with more records,
e.g. two columns of results) gives way to the finer region.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html

from models.data_regions import DataRegion, TagStrings, find_data_regions, similar
from models.record_dates import record_date

SNIPPET_CHARS = 300
TITLE_CHARS = 300
# A region counts as linked when at least this share of its records has an item link.
LINKED_SHARE = 0.5
# Unlinked regions compete at this fraction of their score (tables of meetings often have no links).
UNLINKED_WEIGHT = 0.5
# A finer region inside a region's records replaces it when it holds this share of the region's text.
WRAPPER_TEXT_SHARE = 0.5
NAVIGATION_TAGS = frozenset({"nav", "header", "footer", "aside"})
NAVIGATION_ROLES = frozenset({"navigation", "banner", "contentinfo", "menu", "menubar"})
INVISIBLE_TAGS = ("script", "style", "noscript", "template")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_NOT_ITEM_LINKS = ("#", "javascript:", "mailto:", "tel:", "data:")


@dataclass(frozen=True)
class ExtractedRecord:
    item_url: str
    title: str
    date: datetime | None
    snippet: str
    position: int
    text: str


@dataclass
class Extraction:
    """The records of a page (its main region) and what identifies that region's template."""

    records: list[ExtractedRecord] = field(default_factory=list)
    # Tag path of the region's parent and the tag string of its first record (for multi-page alignment).
    template_path: str = ""
    # The largest and second-largest data regions' texts (features of the source-page classifier).
    region_texts: tuple[str, str] = ("", "")
    regions: int = 0


def normalize_space(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _text(elements: Iterable[lxml.html.HtmlElement]) -> str:
    return normalize_space(" ".join(element.text_content() or "" for element in elements))


def item_link(base_url: str, href: str | None) -> str:
    """The absolute http(s) URL of an item link, or '' for fragments, scripts, mail and broken hrefs."""
    href = (href or "").strip()
    if not href or href.startswith(_NOT_ITEM_LINKS):
        return ""
    try:
        absolute = urljoin(base_url, href)
    except ValueError:
        return ""
    parts = urlsplit(absolute)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return absolute.split("#", 1)[0]


def _main_link(elements: list[lxml.html.HtmlElement], base_url: str) -> tuple[str, str]:
    """(item URL, title) of a record: a link inside a heading first, else the link with the longest text,
    else the first link (an image link)."""
    anchors = [a for element in elements for a in ([element] if element.tag == "a" else element.iter("a"))]
    linked = [(a, url) for a in anchors if (url := item_link(base_url, a.get("href")))]
    if not linked:
        return "", ""
    in_heading = [(a, url) for a, url in linked
                  if any(ancestor.tag in ("h1", "h2", "h3", "h4", "h5", "h6") for ancestor in a.iterancestors())
                  or any(True for _ in a.iter("h1", "h2", "h3", "h4", "h5", "h6"))]
    anchor, url = (in_heading or sorted(linked, key=lambda pair: -len(_text([pair[0]]))))[0]
    return url, _text([anchor])


def _heading_text(elements: list[lxml.html.HtmlElement]) -> str:
    for element in elements:
        for heading in element.iter("h1", "h2", "h3", "h4", "h5", "h6", "strong", "b"):
            if text := _text([heading]):
                return text
    return ""


def build_record(elements: list[lxml.html.HtmlElement], base_url: str, position: int) -> ExtractedRecord:
    text = _text(elements)
    url, title = _main_link(elements, base_url)
    title = title or _heading_text(elements) or text
    return ExtractedRecord(item_url=url, title=title[:TITLE_CHARS], date=record_date(elements, text),
                           snippet=text[:SNIPPET_CHARS], position=position, text=text)


@dataclass
class _Candidate:
    region: DataRegion
    # The records that have text, and their texts.
    records: list[list[lxml.html.HtmlElement]]
    texts: list[str]
    score: float
    elements: set[lxml.html.HtmlElement]

    @property
    def text_chars(self) -> int:
        return sum(len(text) for text in self.texts)


def _has_item_link(elements: list[lxml.html.HtmlElement], base_url: str) -> bool:
    return any(item_link(base_url, a.get("href"))
               for element in elements for a in ([element] if element.tag == "a" else element.iter("a")))


def _in_navigation(element: lxml.html.HtmlElement) -> bool:
    """Inside a page landmark that holds navigation, not content (nav, header, footer, aside)."""
    return any(node.tag in NAVIGATION_TAGS or node.get("role") in NAVIGATION_ROLES
               for node in (element, *element.iterancestors()))


def _candidate(region: DataRegion, base_url: str) -> _Candidate | None:
    with_text = [(nodes, text) for nodes in region.records if (text := _text(nodes))]
    if len(with_text) < 2 or _in_navigation(region.parent):
        return None
    records = [nodes for nodes, _ in with_text]
    texts = [text for _, text in with_text]
    linked = sum(1 for nodes in records if _has_item_link(nodes, base_url)) / len(records)
    weight = 1.0 if linked >= LINKED_SHARE else UNLINKED_WEIGHT
    elements = {element for nodes in records for element in nodes}
    return _Candidate(region, records, texts, sum(len(text) for text in texts) * weight, elements)


def _inside(candidate: _Candidate, outer: _Candidate) -> bool:
    """True when candidate's records lie inside one of outer's records."""
    parent = candidate.region.parent
    return parent in outer.elements or any(ancestor in outer.elements for ancestor in parent.iterancestors())


def _without_wrappers(candidates: list[_Candidate]) -> list[_Candidate]:
    kept = []
    for outer in candidates:
        finer = [inner for inner in candidates if inner is not outer and len(inner.records) > len(outer.records)
                 and inner.text_chars >= WRAPPER_TEXT_SHARE * outer.text_chars and _inside(inner, outer)]
        if not finer:
            kept.append(outer)
    return kept


def tag_path(element: lxml.html.HtmlElement) -> str:
    """The element's path of tag names from the root, e.g. html/body/div/ul."""
    return "/".join(reversed([element.tag] + [a.tag for a in element.iterancestors()]))


def _drop_invisible(root: lxml.html.HtmlElement) -> None:
    """Remove what a reader never sees: scripts, styles and elements hidden by attribute or inline style
    (their text would otherwise count as record text)."""
    lxml.etree.strip_elements(root, *INVISIBLE_TAGS, with_tail=False)
    hidden = [element for element in root.iter() if isinstance(element.tag, str) and (
        element.get("hidden") is not None or element.get("aria-hidden") == "true"
        or _HIDDEN_STYLE.search(element.get("style") or ""))]
    for element in hidden:
        if element.getparent() is not None:
            element.drop_tree()


def ranked_candidates(root: lxml.html.HtmlElement | None, base_url: str) -> list[_Candidate]:
    """The page's data regions, best first. Removes the page's invisible elements from `root`."""
    if root is None:
        return []
    _drop_invisible(root)
    candidates = [c for region in find_data_regions(root) if (c := _candidate(region, base_url))]
    return sorted(_without_wrappers(candidates), key=lambda c: -c.score)


def _extraction(candidates: list[_Candidate], chosen: _Candidate | None, base_url: str) -> Extraction:
    texts = [" ".join(c.texts) for c in candidates[:2]]
    texts += [""] * (2 - len(texts))
    if chosen is None:
        return Extraction(region_texts=(texts[0], texts[1]), regions=len(candidates))
    records = [build_record(nodes, base_url, position) for position, nodes in enumerate(chosen.records)]
    return Extraction(records=records, template_path=tag_path(chosen.region.parent),
                      region_texts=(texts[0], texts[1]), regions=len(candidates))


def extract_records(root: lxml.html.HtmlElement | None, base_url: str) -> Extraction:
    """The records of one page's main data region; no records when the page has no repeated structure."""
    candidates = ranked_candidates(root, base_url)
    return _extraction(candidates, candidates[0] if candidates else None, base_url)


def _matching(candidates: list[_Candidate], template: _Candidate, tags: TagStrings) -> _Candidate | None:
    """The candidate region built like the template: same parent path and similar record shape."""
    path = tag_path(template.region.parent)
    shape = tags.of_group(template.region.records[0])
    for candidate in candidates:
        if tag_path(candidate.region.parent) == path and similar(tags.of_group(candidate.region.records[0]), shape):
            return candidate
    return None


def extract_list(pages: Sequence[tuple[lxml.html.HtmlElement | None, str]]) -> list[Extraction]:
    """The records of each page of one paginated list, read with one template; an item (by link) is kept on
    the first page it appears on only."""
    tags = TagStrings()
    template: _Candidate | None = None
    seen: set[str] = set()
    extractions = []
    for root, url in pages:
        candidates = ranked_candidates(root, url)
        chosen = (_matching(candidates, template, tags) if template else None) or \
            (candidates[0] if candidates else None)
        template = template or chosen
        extraction = _extraction(candidates, chosen, url)
        unique = []
        for record in extraction.records:
            if record.item_url and record.item_url in seen:
                continue
            seen.add(record.item_url)
            unique.append(record)
        extraction.records = unique
        extractions.append(extraction)
    return extractions


def sibling_group_baseline(root: lxml.html.HtmlElement | None, base_url: str) -> list[ExtractedRecord]:
    """The baseline: the largest group of an element's children sharing tag and class (groups whose members
    each hold a larger such group — wrappers — skipped)."""
    if root is None:
        return []
    best: list[lxml.html.HtmlElement] = []
    for parent in root.iter():
        if not isinstance(parent.tag, str):
            continue
        groups: dict[tuple[str, str], list[lxml.html.HtmlElement]] = {}
        for child in parent:
            if isinstance(child.tag, str) and child.tag not in ("script", "style", "option", "br"):
                groups.setdefault((child.tag, child.get("class") or ""), []).append(child)
        for members in groups.values():
            if len(members) > len(best):
                best = members
    return [build_record([element], base_url, position) for position, element in enumerate(best)]
