"""Per-node features of the PRNSM pagination tagger (Wu & Chang), from a page's clickable nodes.

For each `a`/`button` in document order: its parent tag, the character n-grams
(2–4) of its class names, of its href's query keys (values ignored) and of its
text, its text itself (for a pretrained sentence encoder), the paper's 8
heuristics and a few of our own. N-grams are hashed with CRC-32 (stable across
processes); the tagger folds the hashes into its buckets, embeds and
average-pools them.

Beyond the paper, and measured in the README's ablations: the class names also
come from the node's children and its two nearest ancestors (pagination
markup puts `pagination`/`pager` on the list around the links and icon classes
inside them), digits in the text n-grams all read as 0 (page "7" looks like
page "12"), and `EXTRA_HEURISTICS` below — among them how the link's target
relates to the page's own URL (the pages of one list share a URL template).
"""

from __future__ import annotations

import re
import zlib
from array import array
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import SplitResult, parse_qsl, urljoin, urlsplit, urlunsplit

import lxml.etree
import lxml.html

from models.pagination.data import clickable_nodes
from models.web.dom import normalize_space, text_content

MAX_NGRAMS = 64
_YEAR = re.compile(r"(?<!\d)(19|20)\d\d(?!\d)")
_DIGIT = re.compile(r"\d")
_PAGE_IN_PATH = re.compile(r"[/_-](?:p|pg|page|pages|seite|pagina|strona)[/_=-]?\d+", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
PAPER_HEURISTICS = 8
EXTRA_HEURISTICS = 8
HEURISTICS = PAPER_HEURISTICS + EXTRA_HEURISTICS
# Feature groups that an ablation can leave out (the paper's: w/o parent, class, query, text, heuristics).
FEATURE_GROUPS = ("parent", "classes", "query", "text", "heuristics")


# N-gram hashes, 4 bytes each (CRC-32 values): the caches below hold hundreds of thousands of rows of them, which
# as tuples of Python ints took ~40 bytes a hash — ~2.5 KB for a node text's 64 — and filled a worker that
# reads thousands of sites' pages with hundreds of MB.
Hashes = array
HASH_TYPE = "I"
if array(HASH_TYPE).itemsize != 4:  # read back as numpy's uint32 (models.pagination.tagger)
    raise ImportError(f"array type {HASH_TYPE!r} is not 4 bytes on this platform")


@dataclass(frozen=True)
class NodeFeatures:
    parent_tag: str
    class_ngrams: Hashes
    query_ngrams: Hashes
    text_ngrams: Hashes
    text: str
    heuristics: tuple[float, ...]


def hashed_ngrams(tokens: list[str], sizes: tuple[int, ...] = (2, 3, 4)) -> Hashes:
    """CRC-32 hashes of the character n-grams of each token, at most MAX_NGRAMS (the model folds them
    into its own number of buckets)."""
    grams = array(HASH_TYPE)
    for token in tokens:
        grams.extend(_token_ngrams(token, sizes))
        if len(grams) >= MAX_NGRAMS:
            return grams[:MAX_NGRAMS]
    return grams


@lru_cache(maxsize=200_000)
def _token_ngrams(token: str, sizes: tuple[int, ...]) -> Hashes:
    # Cached: class names, query keys and words recur on every node of a page and across pages (hashing
    # them was the tagger's largest cost once decoding was batched).
    padded = f"<{token}>"
    if padded.isascii():  # one character per byte: the n-grams sliced from the encoded token, encoded once
        encoded = padded.encode()
        return array(HASH_TYPE, [zlib.crc32(encoded[start:start + size])
                                 for size in sizes for start in range(max(1, len(encoded) - size + 1))])
    return array(HASH_TYPE, [zlib.crc32(padded[start:start + size].encode())
                             for size in sizes for start in range(max(1, len(padded) - size + 1))])


def node_text(node: lxml.html.HtmlElement) -> str:
    text = text_content(node) or node.get("value") or node.get("aria-label") or node.get("title") or ""
    if not text.strip():
        text = " ".join(image.get("alt", "") for image in node.iter("img"))
    return normalize_space(text)[:80]


def _class_values(node: lxml.html.HtmlElement) -> tuple[str, ...]:
    """The class attributes of the node, its descendants (icons) and its two nearest ancestors (the pager
    list), as written."""
    # A link without child elements (most) has only its own, read directly. Not by XPath, though it makes no
    # element object per descendant: lxml lets go of the GIL for an XPath, and beside a worker's event loop
    # each such call waited to take it back (streams.threads).
    if len(node):
        values = [value for element in node.iter(lxml.etree.Element) if (value := element.get("class")) is not None]
    else:
        own = node.get("class")
        values = [own] if own is not None else []
    parent = node.getparent()
    for ancestor in (parent, parent.getparent() if parent is not None else None):
        if ancestor is not None:
            values.append(ancestor.get("class") or "")
    return tuple(values)


def _is_number(text: str) -> bool:
    return text.isdigit() and len(text) <= 5


def _query_keys(query: str) -> list[str]:
    """The keys of a query string, as written (values ignored); none for one urllib refuses."""
    if not query:  # most hrefs: parse_qsl's argument checks cost more than the answer
        return []
    try:
        return [key for key, _ in parse_qsl(query, keep_blank_values=True)]
    except ValueError:
        return []


def _template(parts: SplitResult, keys: list[str] | None = None) -> str:
    """A URL with its numbers blanked and its query reduced to sorted keys (`keys`: its query's, when known):
    pages of one list share it."""
    keys = sorted(set(_query_keys(parts.query) if keys is None else keys))
    return _DIGITS.sub("0", f"{parts.netloc}{parts.path.rstrip('/')}?{'&'.join(keys)}")


@dataclass(frozen=True)
class _PageURL:
    """The page's own URL, split once for all its links."""

    parts: SplitResult
    base: str
    template: str
    own: str

    @classmethod
    def of(cls, page_url: str) -> _PageURL | None:
        try:
            parts = urlsplit(page_url) if page_url.startswith(("http://", "https://")) else None
        except ValueError:
            return None
        if parts is None:
            return None
        return cls(parts, urlunsplit(parts), _template(parts), parts.path.rstrip("/") + "/")


@lru_cache(maxsize=10_000)
def _page_url(page_url: str) -> _PageURL | None:
    return _PageURL.of(page_url)


def _target(href: str, split: SplitResult, page: _PageURL) -> tuple[SplitResult, bool]:
    """The link's target, split, and whether its query is the href's own. An absolute http(s) href, or one
    from the site's root without dot segments, gives the parts joining it to the page would give, from the
    href's own split (joining costs twice as much)."""
    if "\x00" in href:  # `split` is then empty (models.pagination.features._split)
        return urlsplit(urljoin(page.base, href)), False
    if href.startswith(("http://", "https://")):
        return split, True
    if href.startswith("/") and not href.startswith("//") and "/." not in href:
        # Built directly: a named tuple's _replace costs ten times as much.
        return SplitResult(page.parts.scheme, page.parts.netloc, split.path, split.query, split.fragment), True
    return urlsplit(urljoin(page.base, href)), False


def _relation_to_page(href: str, split: SplitResult, keys: list[str],
                      page: _PageURL | None) -> tuple[float, float, float]:
    """How a link's target relates to the page's own URL: the same URL template (numbers aside), the same
    path (query-string pagination), one path inside the other (/blog/ and /blog/page/2/). `split` and `keys`:
    the href's parts and query keys."""
    if page is None or not href or href.startswith(("#", "javascript:")):
        return 0.0, 0.0, 0.0
    try:
        target, own_query = _target(href, split, page)
    except ValueError:
        return 0.0, 0.0, 0.0
    if target.netloc != page.parts.netloc:
        return 0.0, 0.0, 0.0
    same_page = target.path == page.parts.path and target.query == page.parts.query
    other = target.path.rstrip("/") + "/"
    return (float(not same_page and _template(target, keys if own_query else None) == page.template),
            float(not same_page and target.path == page.parts.path),
            float(page.own != other and (other.startswith(page.own) or page.own.startswith(other))))


def _split(href: str) -> SplitResult:
    """The parts of an href as written; an empty one for an href urllib refuses (a broken IPv6 host, a NUL)."""
    try:
        return urlsplit(href) if "\x00" not in href else urlsplit("")
    except ValueError:
        return urlsplit("")


@dataclass(frozen=True)
class _HrefView:
    """What the features read of one href on one page (a page links to the same href from several nodes)."""

    query_ngrams: Hashes
    paper: tuple[float, ...]  # the paper's href heuristics: "page" in it, a digit, a year, its query keys
    page_in_path: float
    no_target: float  # empty, "#" or javascript:
    relations: tuple[float, float, float]  # to the page's own URL (_relation_to_page)


@lru_cache(maxsize=100_000)
def _href_view(href: str, page_url: str) -> _HrefView:
    # Cached by href and page URL: splitting and parsing hrefs was the features' largest cost, and a revisit
    # re-reads the same page's links.
    page = _page_url(page_url)
    split = _split(href)
    raw_keys = _query_keys(split.query)
    keys = [key.lower() for key in raw_keys]
    lowered = href.lower()
    return _HrefView(
        query_ngrams=hashed_ngrams(keys),
        paper=(float("page" in lowered), float(_DIGIT.search(href) is not None), float(bool(_YEAR.search(href))),
               min(len(keys), 2) / 2),
        page_in_path=float(bool(_PAGE_IN_PATH.search(split.path))),
        no_target=float(not href or href == "#" or lowered.startswith("javascript:")),
        relations=_relation_to_page(href, split, raw_keys, page))


@lru_cache(maxsize=100_000)
def _text_ngrams(text: str) -> Hashes:
    return hashed_ngrams(_DIGIT.sub("0", text.lower()).split() or [""])


@lru_cache(maxsize=100_000)
def _class_ngrams(values: tuple[str, ...]) -> Hashes:
    # Cached by the attributes as written: a page's links mostly repeat their own and their pager's classes.
    names: list[str] = []
    for value in values:
        names.extend(value.lower().split())
    return hashed_ngrams(list(dict.fromkeys(names)))


def clear_caches() -> None:
    """Forget every cached n-gram and href (a benchmark's cold pass: the caches otherwise hold what earlier pages
    had)."""
    for cached in (_token_ngrams, _text_ngrams, _class_ngrams, _href_view, _page_url):
        cached.cache_clear()


def page_features(root: lxml.html.HtmlElement, page_url: str = "",
                  nodes: list[lxml.html.HtmlElement] | None = None) -> list[NodeFeatures]:
    """The features of every clickable node (or of these, in document order); page_url (where the page was
    fetched from) feeds the link-to-page relations, which are 0 without it."""
    nodes = clickable_nodes(root) if nodes is None else nodes
    hrefs = [(node.get("href") or "").strip() for node in nodes]
    texts = [node_text(node) for node in nodes]
    has_href = [bool(href) for href in hrefs]
    views: dict[str, _HrefView] = {}
    features = []
    for index, node in enumerate(nodes):
        href, text = hrefs[index], texts[index]
        view = views.get(href)
        if view is None:
            view = views[href] = _href_view(href, page_url)
        own_classes = (node.get("class") or "").lower().split()
        neighbours = [texts[i] for i in (index - 1, index + 1) if 0 <= i < len(texts)]
        paper = (
            float(any("disabled" in name for name in own_classes) or node.get("disabled") is not None),
            *view.paper,
            float(text.isalnum()),
            float(index > 0 and has_href[index - 1]),
            float(index + 1 < len(nodes) and has_href[index + 1]),
        )
        extra = (
            float(_is_number(text)),
            # A run of page numbers: this number is one more or one less than a neighbour's.
            float(_is_number(text) and any(_is_number(n) and abs(int(n) - int(text)) == 1 for n in neighbours)),
            view.page_in_path,
            view.no_target,
            # Arrow-like labels: », ›, >, ->, …
            float(bool(text) and len(text) <= 3 and not any(character.isalnum() for character in text)),
            *view.relations,
        )
        parent = node.getparent()
        features.append(NodeFeatures(
            parent_tag=str(parent.tag).lower() if parent is not None else "",
            class_ngrams=_class_ngrams(_class_values(node)),
            query_ngrams=view.query_ngrams,
            text_ngrams=_text_ngrams(text),
            text=text,
            heuristics=paper + extra,
        ))
    return features
