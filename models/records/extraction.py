"""Records of a listing page: the ranked MDR data regions turned into item link, title, date and snippet.

`extract_records(root, url)` reads one page; `extract_list(pages)` reads the
pages of one paginated list with one template (the region of the first page
that has records fixes the parent's tag path and the records' tag and class;
later pages use their region built the same way where they have one) and keeps
each item once.

Region ranking: MDR ranks regions by number of records × record size; here the
size is the number of letters in the record's text, a region only counts records with text,
regions whose records carry item links are preferred (the seed's filter: a
record set is kept when its records link to their items), and regions inside
the page's navigation landmarks (nav, header, footer, aside) are not content. A *wrapper* region
(a few big generalized nodes that each hold a finer region with more records,
e.g. two columns of results) gives way to the finer region.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple, Protocol
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html

from models.records.data_regions import DataRegion, element_children, find_data_regions
from models.records.place import record_place
from models.records.date_kinds import record_date_kinds
from models.records.dates import date_in_text, record_date
from models.web.dom import normalize_space, remembered, text_content, tree_changed

SNIPPET_CHARS = 300
TITLE_CHARS = 300
# A region counts as linked when at least this share of its records has an item link.
LINKED_SHARE = 0.5
# Unlinked regions compete at this fraction of their score (tables of meetings often have no links).
UNLINKED_WEIGHT = 0.5
# A finer region inside a region's records replaces it when it holds this share of the region's text.
WRAPPER_TEXT_SHARE = 0.5
MERGED_TEXT_SHARE = 0.8
DATED_BONUS = 1.0
NAVIGATION_TAGS = frozenset({"nav", "header", "footer", "aside"})
BLOCK_TAGS = frozenset({"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "br",
                        "tr", "td", "th", "table", "section", "article", "header", "footer", "aside", "main",
                        "nav", "blockquote", "pre", "figure", "figcaption", "address", "hr", "time"})
# Lines of an element split by <br> become elements of this class once there are this many.
LINE_CLASS = "sourcewatch-line"
MIN_LINES = 3
CONTENT_TAGS = frozenset({"main", "article"})
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
NAVIGATION_ROLES = frozenset({"navigation", "banner", "contentinfo", "menu", "menubar"})
INVISIBLE_TAGS = ("script", "style", "noscript", "template")
# `aria-hidden` is not among them: it hides an element from screen readers, not from the eye (Google Play's
# book titles carry it: the link for the eye, the cover's alt text for the ear).
_MAYBE_HIDDEN = lxml.etree.XPath("//*[@hidden or @style]")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
# A class word, bounded by any non-letter ("card-title", "entry_title", "headline"), that names a title.
_TITLE_CLASS = re.compile(r"(?<![a-z])(?:title|headline)(?![a-z])", re.IGNORECASE)
# The ASCII characters that are not letters, for letters_of.
_ASCII_NOT_LETTERS = bytes(code for code in range(128) if not chr(code).isalpha())
_ASCII_RUNS = re.compile(r"[\x00-\x7f]+")
_NOT_ITEM_LINKS = ("#", "javascript:", "mailto:", "tel:", "data:")


@dataclass(frozen=True)
class ExtractedRecord:
    item_url: str
    title: str
    date: datetime | None
    snippet: str
    position: int
    text: str
    # Where the listed event takes place, as the record shows it ("" where it shows none).
    place: str = ""
    # When the item was published and when its event begins, each where the record tells which date is which
    # (models.records.date_kinds); `date` is the record's first date whatever its kind.
    published: datetime | None = None
    event_start: datetime | None = None


class Item(Protocol):
    item_url: str
    title: str
    date: datetime | None


def record_key(record: Item) -> str:
    """What identifies an item: its link, title and date (two events may link to one conference site, and a
    series' meetings may share a title and a link)."""
    return f"{record.item_url}\x00{record.title}\x00{record.date.isoformat() if record.date else ''}"


@dataclass
class Extraction:
    """The records of a page (its main region) and what identifies that region's template."""

    records: list[ExtractedRecord] = field(default_factory=list)
    # What identifies the region's template on the list's other pages (see _template).
    template: str = ""
    # The largest and second-largest data regions' texts (features of the source-page classifier).
    region_texts: tuple[str, str] = ("", "")
    regions: int = 0
    # The region lies inside a navigation landmark (see in_navigation): on a page with no other repeated
    # structure — a list of one item yet — that is the menu, not the list.
    in_navigation: bool = False
    # The list was read from elements the page hides (for its script to show): see main_list.extract_records.
    from_hidden: bool = False
    # Why the page shows no list (models.records.no_list): "" where it shows one.
    no_list: str = ""


def text_of(elements: Iterable[lxml.html.HtmlElement]) -> str:
    """The elements' text as a reader sees it, spaces normalised (once per run of elements inside
    models.web.dom.read_once)."""
    elements = tuple(elements)
    return remembered(("text of", elements),
                      lambda: normalize_space(" ".join(text_content(element) for element in elements)))


def _separate_blocks(root: lxml.html.HtmlElement) -> None:
    """Put a space at both edges of every block element, so that text_content() reads as a reader sees it:
    "Meetup 1" and "March 1, 2024" in two paragraphs do not run together, "<b>Meet</b>up" stays one word."""
    for element in root.iter(*BLOCK_TAGS):
        element.text = " " + (element.text or "")
        element.tail = " " + (element.tail or "")


def _wrap_lines(root: lxml.html.HtmlElement) -> None:
    """Make each `<br>`-separated line of an element whose content is inline an element of its own (a
    `span.LINE_CLASS`): meeting pages often list one meeting per line, and MDR compares elements, not lines."""
    # Only the parents of `<br>` elements can hold lines (in any order: wrapping one moves no other's children).
    parents = dict.fromkeys(br.getparent() for br in root.iter("br"))
    for element in [e for e in parents if e is not None and isinstance(e.tag, str) and e.tag not in INVISIBLE_TAGS]:
        children = list(element)
        if sum(1 for child in children if child.tag == "br") < MIN_LINES - 1 or any(
                isinstance(child.tag, str) and child.tag in BLOCK_TAGS and child.tag != "br" for child in children):
            continue
        line = lxml.html.Element("span", {"class": LINE_CLASS})
        line.text, element.text = element.text, None
        lines = [line]
        for child in children:
            element.remove(child)  # its tail goes with it
            if child.tag == "br":
                line = lxml.html.Element("span", {"class": LINE_CLASS})
                line.text = child.tail
                lines.append(line)
            else:
                line.append(child)
        for line in lines:
            if (line.text or "").strip() or len(line):
                element.append(line)


# Memoized: a page asks for the same links once per candidate that holds them (urljoin was a fifth of the
# extraction time on large pages).
@functools.lru_cache(maxsize=16384)
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


class ListLinks(NamedTuple):
    """What the records of one list link to and with what words: a link target or anchor text that several
    records show is the list's, not an item's — a tag, category, brand or committee page every record links,
    a "Meeting details" or "Read more" label."""

    shared_urls: frozenset[str] = frozenset()
    shared_texts: frozenset[str] = frozenset()


def list_links(records: list[list[lxml.html.HtmlElement]], base_url: str) -> ListLinks:
    urls: Counter[str] = Counter()
    texts: Counter[str] = Counter()
    for elements in records:
        anchors = list(record_anchors(elements))
        urls.update({url for a in anchors if (url := item_link(base_url, a.get("href")))})
        texts.update({text for a in anchors if (text := text_of([a]))})
    return ListLinks(frozenset(url for url, records in urls.items() if records > 1),
                     frozenset(text for text, records in texts.items() if records > 1))


def _main_link(elements: list[lxml.html.HtmlElement], base_url: str,
               links: ListLinks = ListLinks()) -> tuple[str, str]:
    """(item URL, title) of a record: a link inside a heading first (the record's own before one the list's
    other records link too), else the record's own link with the longest text (a card's tag link must not
    stand for its post), else any link with the longest text, else the first link (an image link). The title
    is that link's text, unless other records show the same words on a link (a label, "Read more…"): then the
    longer of the record's first heading (a card whose title is not a link; not a short stat line a tile heads
    with) and the longest text of any of its links."""
    linked = [(a, url) for a in record_anchors(elements) if (url := item_link(base_url, a.get("href")))]
    if not linked:
        return "", ""
    in_heading = [(a, url) for a, url in linked
                  if any(ancestor.tag in HEADINGS for ancestor in a.iterancestors())
                  or any(True for _ in a.iter(*HEADINGS))]
    own = [(a, url) for a, url in linked if url not in links.shared_urls]
    anchor, url = ([pair for pair in in_heading if pair in own] or in_heading or _longest_text_first(own or linked))[0]
    # A card wrapped whole in its link is titled by the heading inside the link, or the element its class calls
    # the title (`card-title`, `ev-title`), not the card's every word.
    title = _heading_text([anchor], HEADINGS) or _class_titled_text(anchor) or text_of([anchor])
    if not in_heading and (not title or title in links.shared_texts):
        title = max(_heading_text(elements, HEADINGS), text_of([_longest_text_first(linked)[0][0]]), key=len)
    return url, title


def _longest_text_first(linked: list[tuple[lxml.html.HtmlElement, str]]) -> list[tuple[lxml.html.HtmlElement, str]]:
    return sorted(linked, key=lambda pair: -len(text_of([pair[0]])))


def _heading_text(elements: list[lxml.html.HtmlElement], tags: tuple[str, ...] = (*HEADINGS, "strong", "b")) -> str:
    for element in elements:
        for heading in element.iter(*tags):
            if text := text_of([heading]):
                return text
    return ""


def _class_titled_text(anchor: lxml.html.HtmlElement) -> str:
    """The text of the first element inside the link whose class names a title or headline."""
    for node in anchor.iterdescendants():
        if isinstance(node.tag, str) and _TITLE_CLASS.search(node.get("class") or "") and (text := text_of([node])):
            return text
    return ""


def _anchor_text(elements: list[lxml.html.HtmlElement]) -> str:
    texts = [text_of([a]) for a in record_anchors(elements)]
    return max(texts, key=len, default="")


def build_record(elements: list[lxml.html.HtmlElement], base_url: str, position: int,
                 day_first: bool = False, links: ListLinks = ListLinks()) -> ExtractedRecord:
    """One record of a list; `links`: what the list's records link in common (list_links)."""
    text = text_of(elements)
    url, title = _main_link(elements, base_url, links)
    title = title or _heading_text(elements) or _anchor_text(elements) or text
    published, event_start = record_date_kinds(elements, text, day_first)
    return ExtractedRecord(item_url=url, title=title[:TITLE_CHARS], date=record_date(elements, text, day_first),
                           snippet=text[:SNIPPET_CHARS], position=position, text=text,
                           place=record_place(elements, text), published=published, event_start=event_start)


@dataclass
class RegionCandidate:
    region: DataRegion
    # The records that have text, and their texts.
    records: list[list[lxml.html.HtmlElement]]
    texts: list[str]
    score: float
    elements: set[lxml.html.HtmlElement]
    text_chars: int


def record_anchors(elements: list[lxml.html.HtmlElement]) -> Iterator[lxml.html.HtmlElement]:
    """A record's anchors: an anchor element itself, every anchor inside any other element."""
    for element in elements:
        yield from [element] if element.tag == "a" else element.iter("a")


def has_item_link(elements: list[lxml.html.HtmlElement], base_url: str) -> bool:
    return any(item_link(base_url, a.get("href")) for a in record_anchors(elements))


def navigation_landmark(element: lxml.html.HtmlElement) -> bool:
    """A landmark that holds navigation: records that are such landmarks themselves (a desktop and a mobile
    `header`) are the page's frame, no list."""
    return element.tag in NAVIGATION_TAGS or element.get("role") in NAVIGATION_ROLES


def in_navigation(element: lxml.html.HtmlElement) -> bool:
    """Inside a page landmark that holds navigation, not content (nav, header, footer, aside) — the nearest
    landmark decides, because broken markup can put the page's main content inside its navigation."""
    for node in (element, *element.iterancestors()):
        if node.tag in CONTENT_TAGS or node.get("role") == "main":
            return False
        if navigation_landmark(node):
            return True
    return False


def _candidate(region: DataRegion, base_url: str) -> RegionCandidate | None:
    if in_navigation(region.parent):  # asked first: a menu's records are not read as text
        return None
    with_text = [(nodes, text) for nodes in region.records if (text := text_of(nodes))]
    if len(with_text) < 2 or all(navigation_landmark(nodes[0]) for nodes, _ in with_text):
        return None
    records = [nodes for nodes, _ in with_text]
    texts = [text for _, text in with_text]
    linked = sum(1 for nodes in records if has_item_link(nodes, base_url)) / len(records)
    weight = 1.0 if linked >= LINKED_SHARE else UNLINKED_WEIGHT
    elements = {element for nodes in records for element in nodes}
    # Size counts letters (any script), so a pager's page numbers or a column of prices weigh nothing.
    letters = sum(map(letters_of, texts))
    return RegionCandidate(region, records, texts, letters * weight, elements, sum(len(text) for text in texts))


def _with_dated_bonus(candidates: list[RegionCandidate]) -> None:
    """News and event lists date their items: a region's score grows by up to DATED_BONUS times with the share
    of its records that show a date. Only regions the bonus could lift to the top are examined."""
    if not candidates:
        return
    within_reach = max(c.score for c in candidates) / (1 + DATED_BONUS)
    for candidate in candidates:
        if candidate.score >= within_reach:
            dated = sum(1 for text in candidate.texts if date_in_text(text) is not None) / len(candidate.texts)
            candidate.score *= 1 + DATED_BONUS * dated


def _finer(inners: list[RegionCandidate], outer: RegionCandidate) -> bool:
    """Whether these regions inside outer's records hold its data more finely: more records between them and
    most of its text (almost all of it when several are merged: records with small lists inside — tags, a
    line of facts — are records, not wrappers)."""
    share = WRAPPER_TEXT_SHARE if len(inners) == 1 else MERGED_TEXT_SHARE
    return (sum(len(inner.records) for inner in inners) > len(outer.records)
            and sum(inner.text_chars for inner in inners) >= share * outer.text_chars
            and _links_inside(outer, set().union(*(inner.elements for inner in inners))))


def _links_inside(outer: RegionCandidate, inner_elements: set[lxml.html.HtmlElement]) -> bool:
    """Whether the finer regions hold outer's links (a record's title link outside them — beside its date
    and summary fields — means outer's records are the records and the finer regions their fields)."""
    links = [a for nodes in outer.records for element in nodes for a in element.iter("a") if a.get("href")]
    inside = sum(1 for a in links if any(node in inner_elements for node in (a, *a.iterancestors())))
    return inside >= WRAPPER_TEXT_SHARE * len(links)


def _merged_candidate(parts: list[RegionCandidate]) -> RegionCandidate:
    """One region of several alike regions (one per record of a wrapper: a table per year, a list per column)."""
    records = [nodes for part in parts for nodes in part.records]
    region = DataRegion(parent=parts[0].region.parent, records=records, span=parts[0].region.span)
    return RegionCandidate(region, records, [text for part in parts for text in part.texts],
                      sum(part.score for part in parts), set().union(*(part.elements for part in parts)),
                      sum(part.text_chars for part in parts))


def _without_wrappers(candidates: list[RegionCandidate]) -> list[RegionCandidate]:
    """The candidates with wrappers replaced by what they wrap: a wrapper's records each hold a finer region
    (one with more records and most of the text replaces it; several built alike, one per record, are merged
    into one region that replaces it)."""
    owners: dict[lxml.html.HtmlElement, list[int]] = defaultdict(list)
    for index, candidate in enumerate(candidates):
        for element in candidate.elements:
            owners[element].append(index)
    # outer index → template → the regions built that way inside outer's records
    inside: dict[int, dict[str, list[RegionCandidate]]] = defaultdict(lambda: defaultdict(list))
    for inner in candidates:
        parent = inner.region.parent
        for index in {i for ancestor in (parent, *parent.iterancestors()) for i in owners.get(ancestor, ())}:
            inside[index][region_template(inner)].append(inner)
    kept: list[RegionCandidate] = []
    merged: dict[frozenset, RegionCandidate] = {}
    for index, outer in enumerate(candidates):
        groups = [group for group in inside[index].values() if _finer(group, outer)]
        if any(len(group) == 1 for group in groups):
            continue
        if groups:
            candidate = _merged_candidate(max(groups, key=lambda group: sum(c.score for c in group)))
            merged.setdefault(frozenset(candidate.elements), candidate)
            continue
        kept.append(outer)
    return kept + list(merged.values())


def record_signature(element: lxml.html.HtmlElement) -> str:
    return f"{element.tag}.{'.'.join(sorted((element.get('class') or '').split()))}"


def region_template(candidate) -> str:
    """What a list's pages share: the tag path of the region's parent and the tag and class of its records."""
    return f"{tag_path(candidate.region.parent)}|{'+'.join(map(record_signature, candidate.records[0]))}"


def tag_path(element: lxml.html.HtmlElement) -> str:
    """The element's path of tag names from the root, e.g. html/body/div/ul."""
    return "/".join(reversed([element.tag] + [a.tag for a in element.iterancestors()]))


def drop_invisible(root: lxml.html.HtmlElement) -> None:
    """Remove what a reader never sees: scripts, styles and elements hidden by attribute or inline style
    (their text would otherwise count as record text)."""
    for element in hidden_elements(root):
        if element.getparent() is not None:
            element.drop_tree()
    lxml.etree.strip_elements(root, *INVISIBLE_TAGS, with_tail=False)
    tree_changed()


def hidden_elements(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The elements hidden by the `hidden` attribute or an inline style (found once per tree inside
    models.web.dom.read_once: a page's reading asks before it reads and again as it drops them)."""
    return remembered(("hidden elements", root), lambda: [
        element for element in _MAYBE_HIDDEN(root)
        if element.get("hidden") is not None or _HIDDEN_STYLE.search(element.get("style") or "")])


def prepare_page(root: lxml.html.HtmlElement) -> None:
    """The page as the extraction reads it: invisible elements removed, `<br>` lines made elements, blocks
    spaced apart."""
    drop_invisible(root)
    _wrap_lines(root)
    _separate_blocks(root)
    tree_changed()


def ranked_candidates(root: lxml.html.HtmlElement | None, base_url: str) -> list[RegionCandidate]:
    """The page's data regions, best first. Changes `root` (prepare_page)."""
    if root is None:
        return []
    prepare_page(root)
    candidates = _without_wrappers([c for region in find_data_regions(root) if (c := _candidate(region, base_url))])
    _with_dated_bonus(candidates)
    return sorted(candidates, key=lambda c: -c.score)


def sibling_groups(root: lxml.html.HtmlElement, min_members: int, shared_classes: bool = False
                   ) -> Iterator[list[lxml.html.HtmlElement]]:
    """Under every element, its children grouped by tag and sorted class names: groups of `min_members` or more.
    With `shared_classes`, also the children of one tag that share a class name where more of them share it
    than any one class set holds: items some of which add classes of their own (a position — "first",
    "clearLeft" —, a post's id)."""
    for parent in root.iter():
        # len() counts every child node in C: most elements have too few children to hold a group.
        if len(parent) < min_members or not isinstance(parent.tag, str):
            continue
        by_class: dict[tuple[str, str], list[lxml.html.HtmlElement]] = defaultdict(list)
        children = element_children(parent)
        for child in children:
            by_class[(child.tag, " ".join(sorted((child.get("class") or "").split())))].append(child)
        yield from (members for members in by_class.values() if len(members) >= min_members)
        # Only where some tag comes in several class sets (most parents' children do not).
        if shared_classes and len(by_class) > len({tag for tag, _ in by_class}):
            yield from _sharing_a_class(children, by_class, min_members)


def _sharing_a_class(children: list[lxml.html.HtmlElement],
                     by_class: dict[tuple[str, str], list[lxml.html.HtmlElement]], min_members: int
                     ) -> Iterator[list[lxml.html.HtmlElement]]:
    """Per tag of several class sets, the children carrying the class name most of them carry, where more
    carry it than any one class set holds."""
    sets_by_tag: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (tag, classes), members in by_class.items():
        sets_by_tag[tag].append((classes, len(members)))
    for tag, sets in sets_by_tag.items():
        if len(sets) < 2:
            continue
        carrying: dict[str, int] = defaultdict(int)
        for classes, members in sets:
            for name in classes.split():
                carrying[name] += members
        if not carrying:
            continue
        name = max(carrying, key=carrying.__getitem__)
        if carrying[name] >= min_members and carrying[name] > max(members for _, members in sets):
            yield [child for child in children if child.tag == tag and name in (child.get("class") or "").split()]


def letters_of(text: str) -> int:
    """How many of the text's characters are letters (str.isalpha). ASCII letters are counted by deleting the
    rest in C: a large page's candidates count ~2 million characters, one bool object each by `map`; only the
    others (a page's few curly quotes and accented names, or a whole text in another script) are asked one
    by one."""
    ascii_letters = len(text.encode("ascii", "ignore").translate(None, _ASCII_NOT_LETTERS))
    if text.isascii():
        return ascii_letters
    return ascii_letters + sum(map(str.isalpha, _ASCII_RUNS.sub("", text)))


def sibling_group_baseline(root: lxml.html.HtmlElement | None, base_url: str) -> list[ExtractedRecord]:
    """The baseline (issue 17's): every element's children grouped by tag and sorted classes, groups of three
    or more; the group with the most letters, skipping groups where one member holds over half of them.
    Nothing else: no data-region mining, no landmarks, no dates."""
    if root is None:
        return []
    drop_invisible(root)
    _separate_blocks(root)
    best, most = [], 0
    for members in sibling_groups(root, 3):
        letters = [letters_of(text_of([member])) for member in members]
        if sum(letters) > most and max(letters) <= sum(letters) / 2:
            best, most = members, sum(letters)
    return [build_record([element], base_url, position) for position, element in enumerate(best)]
