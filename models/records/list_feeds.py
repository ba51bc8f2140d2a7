"""Where a page's list is kept in a feed, not in the page: which feed holds it, and its records.

A page that shows no list itself (models.records.no_list) may keep it in a feed: a Google Calendar in a frame
(`in_a_frame`: the calendar's iCalendar feed, models.records.calendars), or the RSS/Atom feed of its own
section it advertises where it shows only its menu or nothing visible (models.records.page_feeds).
The stream fetches that feed and reads it as the page's records (agents.list_feeds); the evaluation reads the
site snapshots' pages the same way.
"""

from __future__ import annotations

from datetime import datetime

from models.records.calendars import calendar_feeds, calendar_records, is_calendar
from models.records.extraction import ExtractedRecord
from models.records.no_list import IN_A_FRAME, MENU_ONLY, NO_TEXT
from models.records.page_feeds import feed_records, own_feeds

# Where the page shows no list of its own, but a feed of its section it advertises may hold it: a page whose
# list is drawn by a script (its menu alone, or nothing visible). Not a page of prose (`no_repeats`): an article,
# whose feed under its path is its comments.
_FEED_STANDS_IN = (MENU_ONLY, NO_TEXT)


def list_feed_urls(html: str, page_url: str, no_list: str) -> list[str]:
    """The feeds that hold the list of a page whose read showed none for `no_list`: the calendars it embeds, else
    the first feed of its own section it advertises; none where it showed a list."""
    if no_list == IN_A_FRAME:
        return calendar_feeds(html, page_url)
    if no_list in _FEED_STANDS_IN:
        return own_feeds(html, page_url)[:1]
    return []


def list_feed_records(body: str, feed_url: str, page_url: str, now: datetime) -> list[ExtractedRecord]:
    """The records of a feed that holds the list of the page at `page_url` (a calendar's events linked there, a
    section feed's entries to their own pages). Raises ValueError (models.records.calendars.CalendarUnreadable,
    models.records.page_feeds.FeedUnreadable)."""
    if is_calendar(body):
        return calendar_records(body, page_url, now)
    return feed_records(body, feed_url, page_url)
