"""URLs and links of a page: canonical URLs, hrefs resolved against the page, DOM tag paths, and a page's
anchors in document order (absolute canonical URL, text, tag path, nearby text), frames and meta refresh.

The one implementation the stream (agents) and the offline evaluations and training (models) share.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urljoin, urlsplit

import lxml.html
from w3lib.url import canonicalize_url

from models.web.dom import normalize_space, parse_html, text_content
from schemas.links import Anchor
from schemas.sites import site_of

_SKIPPED_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "ftp:", "file:", "#")
NEARBY_CHARS = 200
# A DNS name has at most 253 characters; a link to a longer host leads nowhere (and is no site to key by).
MAX_HOST_CHARS = 253


def canonical_url(url: str) -> str:
    """The form under which a URL is deduplicated: no fragment, sorted query, normalised escapes."""
    return canonicalize_url(url, keep_fragments=False)


@lru_cache(maxsize=262144)
def _resolve(base: str, href: str) -> str | None:
    try:
        absolute = urljoin(base, href)
        parts = urlsplit(absolute)
        if parts.scheme not in ("http", "https") or len(parts.hostname or "") > MAX_HOST_CHARS:
            return None
        return canonical_url(absolute)
    except ValueError:
        return None  # malformed href (bad port, bad IPv6 literal): not followable


def resolve_href(base: str, href: str) -> str | None:
    """The canonical absolute URL of an href on a page with this base, or None when not followable.

    Menus repeat on every page of a site: an absolute-path href depends only on the base's origin,
    so it is cached per origin, not per page.
    """
    if href.startswith("/") and not href.startswith("//"):
        parts = urlsplit(base)
        base = f"{parts.scheme}://{parts.netloc}/"
    elif href.startswith(("http://", "https://")):
        base = ""
    return _resolve(base, href)




def tag_path(element: lxml.html.HtmlElement, known: dict | None = None) -> str:
    """html/body/…/a; `known` memoises the paths of ancestors across the anchors of one page."""
    parent = element.getparent()
    if parent is None:
        return str(element.tag)
    if known is None:
        return f"{tag_path(parent)}/{element.tag}"
    path = known.get(parent)
    if path is None:
        path = known[parent] = tag_path(parent, known)
    return f"{path}/{element.tag}"


def _base_url(root: lxml.html.HtmlElement, page_url: str) -> str:
    base = root.find(".//base[@href]")
    return urljoin(page_url, base.get("href").strip()) if base is not None else page_url


def extract_anchors(html: str, page_url: str) -> list[Anchor]:
    """Every followable <a href> of a page, in document order."""
    root = parse_html(html)
    return _anchors(root, page_url) if root is not None else []


def _anchors(root: lxml.html.HtmlElement, page_url: str) -> list[Anchor]:
    base = _base_url(root, page_url)
    page_site = site_of(page_url)
    anchors: list[Anchor] = []
    paths: dict = {}
    nearby_texts: dict = {}
    for element in root.iter("a"):
        href = (element.get("href") or "").strip()
        if not href or href.lower().startswith(_SKIPPED_SCHEMES):
            continue
        url = resolve_href(base, href)
        if url is None:
            continue
        parent = element.getparent()
        if parent not in nearby_texts:
            nearby_texts[parent] = normalize_space(text_content(parent))[:NEARBY_CHARS] if parent is not None else ""
        anchors.append(
            Anchor(
                url=url,
                text=normalize_space(text_content(element))[:500],
                tag_path=tag_path(element, paths),
                nearby_text=nearby_texts[parent],
                same_site=site_of(url) == page_site,
            )
        )
    return anchors


def navigation_links(html: str, page_url: str) -> tuple[str | None, list[Anchor]]:
    """What leads on from a page without <a> links: its meta refresh target, and its frames' and iframes'
    sources as anchors (text: the frame's name or title), in document order."""
    root = parse_html(html)
    return _navigation(root, page_url) if root is not None else (None, [])


def every_way_on(html: str, page_url: str) -> tuple[str | None, list[Anchor]]:
    """A page's meta refresh target, and its <a> links then its frames, from one parse."""
    root = parse_html(html)
    if root is None:
        return None, []
    refresh, frames = _navigation(root, page_url)
    return refresh, _anchors(root, page_url) + frames


def _navigation(root: lxml.html.HtmlElement, page_url: str) -> tuple[str | None, list[Anchor]]:
    base = _base_url(root, page_url)
    refresh = None
    for meta in root.iter("meta"):
        if (meta.get("http-equiv") or "").lower() == "refresh":
            target = (meta.get("content") or "").partition(";")[2].strip()
            target = target.split("=", 1)[1].strip(" '\"") if target.lower().startswith("url") else target
            refresh = resolve_href(base, target) if target else None
            break
    page_site = site_of(page_url)
    paths: dict = {}
    frames = []
    for element in root.iter("frame", "iframe"):
        url = resolve_href(base, (element.get("src") or "").strip())
        if url is not None:
            frames.append(Anchor(url=url, text=normalize_space(element.get("title") or element.get("name") or ""),
                                 tag_path=tag_path(element, paths), same_site=site_of(url) == page_site))
    return refresh, frames
