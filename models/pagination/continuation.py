"""A list's next slice named by its URL alone, for pagers the tagger does not tag ("Load more", "Older posts").

The tagger learned PAGE and NEXT from AutoPager and PRNSM, whose labellers left "load more" links unlabelled
(the PRNSM pages that have one mark no NEXT), so a watched list paged that way shows the stream no next page
and a burst of items pushed off its first page would be lost (agents.overflow). Such a link still names its
slice in its URL, in any language: the page's own address with one integer query parameter moved forward —
by one page (`?page=3` after `?page=2`; `?page=2` where the page shows none) or by the items the page lists
(`?offset=20` after `?offset=10` on a page of ten) — and the only link that moves that parameter forward.
Both tell it from other same-path links: a menu of categories or sections (`?cat=2` beside `?cat=3`), a
year's archive, an item's id; the list's own item links are never taken.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from urllib.parse import parse_qsl, urlsplit

import lxml.html

from models.pagination.data import clickable_urls
from models.records.main_list import extract_records
from models.web.dom import parse_html


def _split(url: str) -> tuple[tuple[str, str, str], dict[str, str]] | None:
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return None
    values = dict(query)
    if len(values) != len(query):
        return None  # a parameter given twice: not a plain slice address
    return (parts.scheme, parts.netloc.lower(), parts.path or "/"), values


def _moved_parameter(here: dict[str, str], there: dict[str, str]) -> tuple[str, int | None, int] | None:
    """(name, the page's value, the link's value) of the one integer parameter in which the link's query
    differs from the page's — the page's value None where it shows none; None if they differ otherwise."""
    changed = [name for name in here.keys() | there.keys() if here.get(name) != there.get(name)]
    if len(changed) != 1 or not there.get(changed[0], "").isdigit():
        return None
    name = changed[0]
    before = here.get(name)
    if before is not None and not before.isdigit():
        return None
    return name, (int(before) if before is not None else None), int(there[name])


def _one_slice_on(before: int | None, after: int, listed: int) -> bool:
    """Whether a parameter moved from `before` to `after` moves one page on (page numbers), or on by the
    `listed` items the page shows (offsets)."""
    return after == (before + 1 if before is not None else 2) or after == (before or 0) + listed


def continuation_link(page_url: str, link_urls: Sequence[str], listed: int, items: Iterable[str] = ()) -> int | None:
    """The index in `link_urls` of the link to the list's next slice, skipping the list's own item links
    `items`; None when the page names none. Its parameter must lead forward from the page in that one link
    alone: a menu of categories (`?cat=1` … `?cat=9`), of sibling sections (`?id=9` beside `?id=10`) or a
    numbered pager (the tagger's) offers several values ahead."""
    here = _split(page_url)
    if here is None or listed < 1:
        return None
    skipped = set(items)
    ahead: dict[str, set[int]] = defaultdict(set)
    slices: list[tuple[int, str]] = []
    for index, url in enumerate(link_urls):
        there = _split(url) if url and url not in skipped else None
        moved = _moved_parameter(here[1], there[1]) if there is not None and there[0] == here[0] else None
        if moved is None:
            continue
        name, before, after = moved
        if after > (before or 0):
            ahead[name].add(after)
        if _one_slice_on(before, after, listed):
            slices.append((index, name))
    return next((index for index, name in slices if len(ahead[name]) == 1), None)


def next_slice_link(root: lxml.html.HtmlElement | None, html: str, page_url: str) -> tuple[int, str] | None:
    """(its index among the page's clickable nodes, its URL) of the link that names the list's next slice
    (continuation_link), counted against the list the record extractor reads on the page (`html`, parsed
    apart: extraction reshapes its tree); None when there is none."""
    here = _split(page_url)
    if root is None or here is None:
        return None
    urls = clickable_urls(root, page_url)
    # Most pages link no other slice of their own address: read their list only where one might be.
    if not any((there := _split(url)) is not None and there[0] == here[0] and _moved_parameter(here[1], there[1])
               for url in urls if url):
        return None
    records = extract_records(parse_html(html), page_url).records
    index = continuation_link(page_url, urls, len(records), (record.item_url for record in records))
    return (index, urls[index]) if index is not None else None
