"""records.extracted and changes.detected: the items of a listing page, one message each, and the new ones."""

from __future__ import annotations

from datetime import datetime

from schemas.crawl import CrawlScoped


class RecordExtracted(CrawlScoped):
    """One record of a source page's list, read from one of its pages (source_url names the list)."""

    # 2: `place` added.
    schema_version: int = 2
    page_url: str
    item_url: str
    title: str = ""
    date: datetime | None = None
    snippet: str = ""
    # Where the listed event takes place, as the list shows it ("" where it shows none).
    place: str = ""
    # Position on its page, from 0.
    position: int = 0
    # When the page it was read from was fetched.
    seen_at: datetime


class ItemDiscovered(CrawlScoped):
    """An item a source page lists now that no earlier read of it listed."""

    page_url: str
    item_url: str
    title: str = ""
    date: datetime | None = None
    first_seen: datetime
