"""In-process counters of work done per crawl, by which `sourcewatch crawl` knows it is finished.

A crawl runs its own worker, so every stage counts here. Each stage counts a
message only after it has sent what the message caused, so a crawl is idle
exactly when every request sent was fetched, every fetched page was looked at
by the link stage, and every set of links was planned by the frontier.
Counting per crawl keeps leftovers of earlier crawls (messages still in the
topics) from confusing the count.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass


@dataclass
class CrawlProgress:
    requests_sent: int = 0
    pages_fetched: int = 0
    pages_parsed: int = 0
    link_sets_sent: int = 0
    link_sets_planned: int = 0
    # Fetched source/listing pages, and those the pagination tagger has looked at.
    pages_to_tag: int = 0
    pages_tagged: int = 0
    tag_sets_sent: int = 0
    tag_sets_followed: int = 0
    # Fetched pages whose records are read (listings and revisits), and those the record stage has read.
    pages_to_extract: int = 0
    pages_extracted: int = 0
    records_sent: int = 0
    new_items_sent: int = 0
    # Fetched pages of discovery episodes, and those the discovery stage has advanced its episode with.
    pages_to_discover: int = 0
    pages_discovered: int = 0
    episodes_ended: int = 0
    # Fetched pages for the page index (when this process feeds it), and those it has taken in.
    pages_to_index: int = 0
    pages_indexed: int = 0
    # Fetched pages of topical crawls, and those the topical stage has advanced its site's crawl with.
    pages_to_crawl_topically: int = 0
    pages_crawled_topically: int = 0
    fetch_rows_written: int = 0
    record_rows_written: int = 0
    new_item_rows_written: int = 0

    def idle(self) -> bool:
        return (
            self.requests_sent == self.pages_fetched == self.pages_parsed
            and self.link_sets_sent == self.link_sets_planned
            and self.pages_to_tag == self.pages_tagged
            and self.tag_sets_sent == self.tag_sets_followed
            and self.pages_to_extract == self.pages_extracted
            and self.pages_to_discover == self.pages_discovered
            and self.pages_to_crawl_topically == self.pages_crawled_topically
            and self.pages_to_index == self.pages_indexed
        )

    def written(self) -> bool:
        """Every fetch, record and new item this crawl sent is in ClickHouse."""
        return (self.fetch_rows_written >= self.pages_fetched and self.record_rows_written >= self.records_sent
                and self.new_item_rows_written >= self.new_items_sent)


_by_crawl: defaultdict[str, CrawlProgress] = defaultdict(CrawlProgress)
# When this process last did anything for each crawl (monotonic seconds): how long a crawl has been idle here
# (streams.retention lets go of the state of crawls idle for long).
_last_active: dict[str, float] = {}
# Whether this process feeds the page index (its agent is loaded: a worker that owns the stores), so a crawl
# is idle only once its pages are indexed.
indexing_pages = False
# Rows the sink wrote to the metrics table (metrics belong to no crawl).
metrics_rows_written = 0


def of(crawl_id: str) -> CrawlProgress:
    _last_active[crawl_id] = time.monotonic()
    return _by_crawl[crawl_id]


def idle_seconds(crawl_id: str) -> float:
    """How long since this process last did anything for the crawl; a crawl it never saw (its state recovered
    from a changelog, or taken over at a rebalance) counts from now on."""
    now = time.monotonic()
    return now - _last_active.setdefault(crawl_id, now)


def idle_for(seconds: float) -> list[str]:
    """The crawls this process has done nothing for in `seconds`."""
    now = time.monotonic()
    return [crawl for crawl, last in _last_active.items() if now - last >= seconds]


def forget(crawl_id: str) -> None:
    """Drop a long-idle crawl's counters (a process that runs for months meets a crawl per revisit hour)."""
    _by_crawl.pop(crawl_id, None)
    _last_active.pop(crawl_id, None)
