"""A page's main list as records: the candidate record sets of the page (models.records.candidates), the one
built like the list's template where an earlier page of the same list gave one, else the list ranker's
choice (models.records.ranker); and a paginated list read page by page with its first page's template.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from copy import deepcopy
from urllib.parse import urlsplit

import lxml.html

from models.records.candidates import ListCandidate, candidate_features, label_row, page_candidates, shortlist
from models.records.data_regions import DataRegion, element_children
from models.records.dates import numeric_day_first
from models.records.extraction import (
    HEADINGS,
    NAVIGATION_TAGS,
    Extraction,
    in_navigation,
    item_link,
    list_links,
    record_anchors,
    text_of,
    build_record,
    hidden_elements,
    record_key,
    record_signature,
    region_template,
    tag_path,
)
from models.records.no_list import no_list_reason
from models.records.ranker import Ranking, default_ranker
from models.records.witnesses import Fingerprint
from models.web.dom import document_place, element_at, read_once

# A hidden element holding this many links may be a list's store (fewer: a collapsed menu or a dialog's
# buttons, not worth a second reading).
MIN_HIDDEN_LINKS = 3
LONE = "lone"  # the generator name of a lone item's candidate
# A lone item's record never reaches past these: beyond them lies the page, not the list.
_LIST_BOUNDS = NAVIGATION_TAGS | {"main", "body", "html"}


def _extraction(regions: list[ListCandidate], chosen: ListCandidate | None, base_url: str) -> Extraction:
    texts = [" ".join(c.texts) for c in regions[:2]]
    texts += [""] * (2 - len(texts))
    if chosen is None:
        return Extraction(region_texts=(texts[0], texts[1]), regions=len(regions))
    language = chosen.region.parent.getroottree().getroot().get("lang") or ""
    day_first = numeric_day_first(chosen.texts, language)
    links = list_links(chosen.records, base_url)
    if chosen.generator == LONE and _opens_with_own_heading(chosen.records[0]):
        # No other record shows which link words are a label ("Learn More"): beside the item's own heading, the
        # longer of the two titles it. Only there: a record that holds the list's heading (a lone row's whole
        # table under "News") would be titled "News" where the link's words fell shorter, and read again as a
        # list, its item titled otherwise, would pass for another item.
        links = links._replace(shared_texts=frozenset(text for a in record_anchors(chosen.records[0])
                                                      if (text := text_of([a]))))
    nodes_of = chosen.records[1:] if _is_page_title(chosen.records[0]) else chosen.records
    records = [build_record(nodes, base_url, position, day_first, links) for position, nodes in enumerate(nodes_of)]
    return Extraction(records=records, template=region_template(chosen),
                      region_texts=(texts[0], texts[1]), regions=len(regions),
                      in_navigation=in_navigation(chosen.region.parent))


def extract_records(root: lxml.html.HtmlElement | None, base_url: str, template: str = "",
                    ranker: Ranking | None = None, witness: Fingerprint = frozenset()) -> Extraction:
    """The records of one page's main list — the candidate built like `template` (from an earlier page of the
    same list) where the page has one, else the one the list ranker chooses (default: the shipped one), told
    by `witness` (the fingerprint of the site's other pages) what is the site's template; no records when the
    page has no repeated structure. Changes `root`.

    A page whose visible part shows no list may keep its list in elements it hides for a script to show
    (cards in a `display:none` store that the page's script deals into "upcoming" and "past" grids): the page
    is then read again with its hidden elements shown, and that reading is taken where it shows a list. A page
    that shows no list says why (`no_list`)."""
    with read_once():
        extraction = _extract_records(root, base_url, template, ranker, witness)
        extraction.no_list = no_list_reason(root, extraction)
        return extraction


def _extract_records(root: lxml.html.HtmlElement | None, base_url: str, template: str, ranker: Ranking | None,
                     witness: Fingerprint) -> Extraction:
    revealed = _revealed_copy(root) if root is not None else None
    extraction = _read(root, base_url, template, ranker, witness)
    if revealed is not None and not _shows_a_list(extraction):
        second = _read(revealed, base_url, template, ranker, witness)
        if _shows_a_list(second):
            second.from_hidden = True
            return second
    if root is not None and not _shows_a_list(extraction) and (lone := _lone_item(root, base_url)):
        one = _extraction([], lone, base_url)
        one.region_texts, one.regions = extraction.region_texts, extraction.regions
        return one
    return extraction


def _opens_with_own_heading(nodes: list[lxml.html.HtmlElement]) -> bool:
    """A lone item's run that `_item_run` took back to the item's own heading: it opens with a heading that links
    nothing."""
    first = nodes[0]
    return len(nodes) > 1 and next(first.iter(*HEADINGS), None) is not None and not any(True for _ in first.iter("a"))


def _is_page_title(nodes: list[lxml.html.HtmlElement]) -> bool:
    """A list's first record that is the page's title — its text an `h1`'s, no link — is the row the list's
    heading stands in (clallam-lgbt: `<div class=row><h1>Events</h1></div>` before the posts' row), no item."""
    titles = [heading for node in nodes for heading in node.iter("h1")]
    return bool(titles) and not any(True for _ in record_anchors(nodes)) and text_of(nodes) == text_of(titles)


def _lone_item(root: lxml.html.HtmlElement, base_url: str) -> ListCandidate | None:
    """A list of one item yet, where the page shows no list: the one page below the page's own path
    (…/events/ → …/events/batizado-2020/) that its content links, as one record — the largest element around
    the link that links nothing else and holds no heading beside it (the list's own heading bounds the
    list), with the siblings of its item where the item is a run of them (`_item_run`). None where the content
    links no such page or several (a list of several is a list, or a pager)."""
    below = _path_below(base_url)
    if not below:
        return None
    targets: dict[str, lxml.html.HtmlElement] = {}
    for anchor in root.iter("a"):
        url = item_link(base_url, anchor.get("href"))
        path = urlsplit(url).path if url else ""
        if path.startswith(below) and len(path) > len(below) and not in_navigation(anchor):
            targets.setdefault(url, anchor)
    if len(targets) != 1:
        return None
    [(url, record)] = targets.items()
    for parent in record.iterancestors():
        if parent.tag in _LIST_BOUNDS or _links_elsewhere(parent, url, base_url) or _heading_beside(parent, record):
            break
        record = parent
    run = _item_run(record, url, base_url)
    text = text_of(run)
    if not text or record.getparent() is None:
        return None
    return ListCandidate(DataRegion(parent=record.getparent(), records=[run], span=len(run)), [text], LONE)


def _item_run(record: lxml.html.HtmlElement, url: str, base_url: str) -> list[lxml.html.HtmlElement]:
    """The record with the siblings of its item, where the item is written as a run of siblings beside the list's
    heading (`<h1>Events</h1> <h2>AGM</h2> <p>…</p> <a>Learn More</a>`): back to the item's own heading where
    the record holds none (a "Learn More" link) and the item has one, on to the next heading where the record
    holds one; never over an `h1` (the list's) or over a sibling that links elsewhere."""
    has_heading = next(record.iter(*HEADINGS), None) is not None
    run = [record]
    for sibling in record.itersiblings(preceding=not has_heading):
        if not isinstance(sibling.tag, str):
            continue  # a comment
        heading = next(sibling.iter(*HEADINGS), None)
        if _links_elsewhere(sibling, url, base_url) or (heading is not None and (has_heading or heading.tag == "h1")):
            break
        run.insert(len(run) if has_heading else 0, sibling)
        if heading is not None:
            return run
    # Back to no heading of the item's own: the siblings before are the page's (an introduction), not the item's.
    return run if has_heading else [record]


def _path_below(base_url: str) -> str:
    """The path the page's items live below: the page's own, as a folder (/en/events/ for /en/events/,
    /en/events/index.html and /en/events, /events/ for /events.html); "" for a site's root."""
    path = urlsplit(base_url).path or "/"
    folder, _, name = path.rpartition("/")
    if name and not name.startswith("index."):
        folder = f"{folder}/{name.rsplit('.', 1)[0]}"
    return f"{folder}/" if folder else ""


def _links_elsewhere(element: lxml.html.HtmlElement, url: str, base_url: str) -> bool:
    return any(target and target != url for a in element.iter("a") if (target := item_link(base_url, a.get("href"))))


def _heading_beside(parent: lxml.html.HtmlElement, record: lxml.html.HtmlElement) -> bool:
    """The parent holds, neither inside the record nor around it, the list's heading: a page's `h1`, or a heading
    of the record's own heading's level or above (a card's own heading beside its overlay link is lower)."""
    own = {*record.iter(*HEADINGS), *record.iterancestors(*HEADINGS)}
    own_level = min((int(heading.tag[1]) for heading in own), default=0)
    return any(heading not in own and (heading.tag == "h1" or int(heading.tag[1]) <= own_level)
               for heading in parent.iter(*HEADINGS))


def _shows_a_list(extraction: Extraction) -> bool:
    """Records outside the navigation, one or more of them dated or linking to an item's page."""
    return not extraction.in_navigation and any(record.date or record.item_url for record in extraction.records)


def _revealed_copy(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """A copy of the page with its hidden elements shown, where one of them holds links enough for a list;
    else None (most pages: a copy costs a few milliseconds, and a reading twice that)."""
    hidden = hidden_elements(root)
    if not any(_holds_links(element, MIN_HIDDEN_LINKS) for element in hidden):
        return None
    # Found in the copy by their places, not by searching it again: on a large page that search costs as much
    # as the copy, and what read_once remembers of the page itself stays true (nothing of the copy is in it).
    places = [document_place(element) for element in hidden]
    copy = deepcopy(root)
    for place in places:
        element = element_at(copy, place)
        element.attrib.pop("hidden", None)
        element.attrib.pop("style", None)
    return copy


def _holds_links(element: lxml.html.HtmlElement, count: int) -> bool:
    """Whether `count` or more links (`a[@href]`) lie below the element. Walked, not asked of XPath: lxml lets go
    of the GIL for an XPath, and in a worker each call waits for it (streams.threads) — a page hides 16 elements
    on average, 32 at the 90th percentile."""
    links = (anchor for anchor in element.iterdescendants("a") if anchor.get("href") is not None)
    return sum(1 for _ in itertools.islice(links, count)) >= count


def _read(root: lxml.html.HtmlElement | None, base_url: str, template: str, ranker: Ranking | None,
          witness: Fingerprint) -> Extraction:
    candidates = page_candidates(root, base_url)
    ranker = ranker or default_ranker()
    alike = [index for index, candidate in enumerate(candidates) if template and region_template(candidate) == template]
    chosen = candidates[alike[0]] if len(alike) == 1 else None
    if len(alike) > 1:
        # Lists built alike (a menu and the list, each a `ul` of `li` under the same path): the ranker picks
        # among them, as it picked the list from among them at the first read.
        features = candidate_features(candidates, root, base_url, witness, alike)
        chosen = candidates[alike[ranker.choose(features)]]
    if chosen is None and template and root is not None:
        chosen = _single_record(root, template)
    if chosen is None and candidates:
        described = shortlist(candidates)
        index = ranker.choose(candidate_features(candidates, root, base_url, witness, described))
        chosen = candidates[described[index]] if index is not None else None
    # The data regions, largest first (the source-page classifier reads the two largest).
    return _extraction([c for c in candidates if c.generator == "mdr"], chosen, base_url)


def _single_record(root: lxml.html.HtmlElement, template: str) -> ListCandidate | None:
    """The records built like the template on a page that has too few of them for a region (the last page
    of a list often holds one item): the template parent's children with the template's tag and class."""
    path, roots = template.split("|", 1)
    signatures = roots.split("+")
    span = len(signatures)
    for parent in root.iter():
        if isinstance(parent.tag, str) and tag_path(parent) == path:
            children = element_children(parent)
            # A table's label rows are built like its rows (a `tr`), and no more items here than in a region.
            records = [children[i:i + span] for i in range(len(children) - span + 1)
                       if [record_signature(child) for child in children[i:i + span]] == signatures
                       and not label_row(children[i:i + span])]
            texts = [text_of(nodes) for nodes in records]
            if records and all(texts):
                return ListCandidate(DataRegion(parent=parent, records=records, span=span), texts, "template")
    return None


def extract_list(pages: Sequence[tuple[lxml.html.HtmlElement | None, str]], ranker: Ranking | None = None,
                 witness: Fingerprint = frozenset()) -> list[Extraction]:
    """The records of each page of one paginated list, read with the template of its first page that has
    records; an item is kept on the first page it appears on only."""
    template = ""
    seen: set[str] = set()
    extractions = []
    for root, url in pages:
        extraction = extract_records(root, url, template, ranker, witness)
        template = template or extraction.template
        unique = []
        for record in extraction.records:
            if record_key(record) in seen:
                continue
            seen.add(record_key(record))
            unique.append(record)
        extraction.records = unique
        extractions.append(extraction)
    return extractions
