"""The breadth-first frontier of a crawl, within each site (run by stage `extract_links` as it finds a page's links).

The core, `BfsFrontier`, keeps two mappings: the URLs a crawl has already
enqueued (per crawl and site), and how many pages each crawl has enqueued per
site. In the worker both are Faust tables backed by changelog topics keyed
within the site's partition, so the state follows the site to whichever worker
owns it. Kafka delivers a site's pages in order of fetch completion, and BFS
order holds because each page's children go out one level deeper than it.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from schemas.base import derived_event_id
from schemas.crawl import BFS_REASON, CrawlRequest
from schemas.links import LinksScored
from schemas.sites import site_of


def seen_key(crawl_id: str, url: str) -> str:
    return f"{crawl_id}\x00{url}"


def budget_key(crawl_id: str, site: str) -> str:
    return f"{crawl_id}\x00{site}"


class BfsFrontier:
    def __init__(self, seen: MutableMapping[str, int], enqueued: MutableMapping[str, int]) -> None:
        # seen: crawl+URL → depth at which it was first planned; enqueued: crawl+site → pages planned.
        self.seen = seen
        self.enqueued = enqueued

    def next_requests(self, links: LinksScored) -> list[CrawlRequest]:
        """The unseen same-site links of a page, one level deeper, within depth and page budget."""
        for url in (links.page_url, links.final_url):
            # Only the site's own URLs (a redirect may end on another site, whose links are never followed):
            # each key lives in its site's partition (streams.retention finds it there).
            if site_of(url) == links.site:
                self.seen.setdefault(seen_key(links.crawl_id, url), links.depth)
        budget = budget_key(links.crawl_id, links.site)
        # The page itself (a seed) counts against the budget the first time its site is seen.
        planned = self.enqueued.get(budget) or 1
        requests: list[CrawlRequest] = []
        if links.depth < links.max_depth:
            for anchor in links.anchors:
                if planned >= links.max_pages:
                    break
                key = seen_key(links.crawl_id, anchor.url)
                if key in self.seen or site_of(anchor.url) != links.site:
                    continue
                self.seen[key] = links.depth + 1
                planned += 1
                requests.append(
                    CrawlRequest(
                        event_id=derived_event_id(links.event_id, anchor.url),
                        site=links.site,
                        url=anchor.url,
                        crawl_id=links.crawl_id,
                        depth=links.depth + 1,
                        max_depth=links.max_depth,
                        max_pages=links.max_pages,
                        stop_at_ms=links.stop_at_ms,
                        reason=BFS_REASON,
                        referrer=links.final_url,
                    )
                )
        # Most of a crawl's pages plan nothing new (deepest, or their site's budget spent): writing the same count
        # back would be one changelog message per page for nothing.
        if requests:
            self.enqueued[budget] = planned
        return requests
