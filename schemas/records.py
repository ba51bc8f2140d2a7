"""records.extracted and changes.detected: the items of a listing page, one message each, and the new ones."""

from __future__ import annotations

from datetime import datetime

from schemas.crawl import CrawlScoped


def publication_date(date: datetime | None, published: datetime | None,
                     event_start: datetime | None) -> datetime | None:
    """An item's publication date as best known: the one its list tells, else its date where the list tells
    no event's (a record that tells only its event's dates shows no publication date: a date of another day
    would have been read as one — models.records.date_kinds)."""
    if published is not None:
        return published
    return date if event_start is None else None


class RecordExtracted(CrawlScoped):
    """One record of a source page's list, read from one of its pages (source_url names the list)."""

    # 2: `place` added; 3: `published` and `event_start`.
    schema_version: int = 3
    page_url: str
    item_url: str
    title: str = ""
    date: datetime | None = None
    snippet: str = ""
    # Where the listed event takes place, as the list shows it ("" where it shows none).
    place: str = ""
    # When the item was published and when its event begins, where the list tells which date is which
    # (`date` is the record's first date, whatever its kind).
    published: datetime | None = None
    event_start: datetime | None = None
    # Position on its page, from 0.
    position: int = 0
    # When the page it was read from was fetched.
    seen_at: datetime

    @property
    def publication(self) -> datetime | None:
        return publication_date(self.date, self.published, self.event_start)


class ItemDiscovered(CrawlScoped):
    """An item a source page lists now that no earlier read of it listed."""

    page_url: str
    item_url: str
    title: str = ""
    date: datetime | None = None
    published: datetime | None = None
    event_start: datetime | None = None
    first_seen: datetime

    @property
    def publication(self) -> datetime | None:
        return publication_date(self.date, self.published, self.event_start)
