"""Stage `extract_links`: pages.fetched → links.scored.

The core, `links_of`, reads a fetched HTML page's anchors (models.web.links.extract_anchors) in document
order. BFS does not rank, so anchors leave this stage unscored; learned policies score them later in the same
topic.
"""

from __future__ import annotations

from models.web.links import extract_anchors
from schemas.base import derived_event_id
from schemas.crawl import PageFetched
from schemas.links import LinksScored

HTML_TYPES = ("text/html", "application/xhtml+xml", "")


def is_html(page: PageFetched) -> bool:
    return page.content_type.split(";", 1)[0].strip().lower() in HTML_TYPES


def links_of(page: PageFetched) -> LinksScored | None:
    """The anchors of a fetched page, or None when it is not a parseable HTML page."""
    if not page.ok or not is_html(page):
        return None
    return LinksScored(
        event_id=derived_event_id(page.event_id, "links"),
        site=page.site,
        page_url=page.url,
        final_url=page.final_url,
        crawl_id=page.crawl_id,
        depth=page.depth,
        max_depth=page.max_depth,
        max_pages=page.max_pages,
        stop_at_ms=page.stop_at_ms,
        anchors=extract_anchors(page.body, page.final_url),
    )
