"""A list kept in an embedded calendar: the public iCalendar feed behind a page's Google Calendar frame, read as
the page's records.

Clubs, schools and associations often publish their events only as a Google Calendar shown in a frame: the
page itself holds no list (models.records.no_list says `in_a_frame`), and the frame is drawn by a script. But
every public Google Calendar also publishes its events as an iCalendar feed, at an address its embed names:
each `src` of the frame's address is a calendar's id (plain, or base64 in newer embeds), and its feed is
`/calendar/ical/<id>/public/basic.ics` on the same host. The country holiday calendars embeds add beside the
organisation's own are left out: they are nobody's news.

A feed's events become records: the title its SUMMARY, the date its start, the place its LOCATION, the
snippet its DESCRIPTION's text, the publication time its CREATED (when the event was put on the calendar:
what a watcher of the page waits for). A repeating event gives one record per occurrence within the window
read (a month back, a year ahead). An event has no page of its own outside Google; its link is the embedding
page with the event's UID as fragment, so a record's identity (link, title, date) is the event's. A feed cut at
the size a message carries is read up to its last whole event.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, date, datetime, time, timedelta
from itertools import islice, takewhile
from urllib.parse import parse_qs, quote, urljoin, urlsplit, urlunsplit

import icalendar
import recurring_ical_events

from models.records.dates import in_utc
from models.records.extraction import ExtractedRecord
from models.web.dom import fragment_text, normalize_space, parse_html

# A Google Calendar embed's path: /calendar/embed, and the account-scoped /calendar/u/0/embed, /calendar/b/1/embed.
_EMBED_PATH = re.compile(r"^/calendar/(?:[bu]/\d+/)?embed/?$")
_FEED_PATH = "/calendar/ical/{calendar}/public/basic.ics"
# Public holiday calendars (en.usa#holiday@group.v.calendar.google.com, ja.japanese#holiday@…).
_HOLIDAYS = "#holiday@group.v.calendar.google.com"
# The occurrences read: what a watcher acts on lies ahead; the recent past shows what was just added.
WINDOW_BEFORE = timedelta(days=31)
WINDOW_AFTER = timedelta(days=366)
# A room-booking calendar repeats events daily for years: a list, not an archive.
MAX_EVENTS = 300
_TOO_FREQUENT = {"SECONDLY", "MINUTELY"}
SNIPPET_CHARS = 300


class CalendarUnreadable(ValueError):
    """The feed is no iCalendar document the reader can take apart."""


def calendar_feeds(html: str, page_url: str) -> list[str]:
    """The iCalendar feeds of the calendars the page embeds in its frames (its own: holiday calendars left
    out), in the page's order, each once."""
    root = parse_html(html)
    if root is None:
        return []
    feeds: list[str] = []
    for frame in root.iter("iframe", "frame"):
        address = (frame.get("src") or frame.get("data-src") or "").strip()
        for feed in _feeds_of(urljoin(page_url, address)) if address else ():
            if feed not in feeds:
                feeds.append(feed)
    return feeds


def _feeds_of(embed_url: str) -> list[str]:
    parts = urlsplit(embed_url)
    if parts.scheme not in ("http", "https") or not _EMBED_PATH.match(parts.path):
        return []
    calendars = (_calendar_id(value) for value in parse_qs(parts.query).get("src", []))
    return [urlunsplit((parts.scheme, parts.netloc, _FEED_PATH.format(calendar=quote(calendar, safe="")), "", ""))
            for calendar in calendars if calendar and not calendar.endswith(_HOLIDAYS)]


def _calendar_id(value: str) -> str:
    """A calendar's id as the embed names it: an address (`club@gmail.com`, `…@group.calendar.google.com`), or
    that address in base64 (newer embeds)."""
    value = value.strip()
    if "@" in value or not value:
        return value
    try:
        decoded = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return value
    return decoded if "@" in decoded and decoded.isprintable() else value


def is_calendar(body: str) -> bool:
    """Whether a fetched body is an iCalendar document (a feed's server may call it text/plain)."""
    return body.lstrip("\ufeff \t\r\n")[:15].upper() == "BEGIN:VCALENDAR"


def calendar_records(feed: str, page_url: str, now: datetime) -> list[ExtractedRecord]:
    """The records of an iCalendar feed embedded in the page at `page_url`: every event occurring from a month
    before `now` to a year after, soonest first, at most MAX_EVENTS. Raises CalendarUnreadable."""
    end = now + WINDOW_AFTER
    try:
        calendar = icalendar.Calendar.from_ical(_closed(feed))
        for event in calendar.walk("VEVENT"):
            rule = event.get("RRULE")
            if rule is not None and _TOO_FREQUENT & {str(freq).upper() for freq in rule.get("FREQ", [])}:
                # A series every second or minute is no calendar's (Google's has none): its first occurrence
                # only, where expanding it would take millions.
                del event["RRULE"]
        # In order of their start, lazily: a busy series stops at MAX_EVENTS, not after its last occurrence.
        occurrences = recurring_ical_events.of(calendar).after(now - WINDOW_BEFORE)
        events = [(start, event) for start, event in islice(takewhile(
            lambda pair: pair[0] < end, ((_start(event), event) for event in occurrences)), MAX_EVENTS)]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CalendarUnreadable(f"{type(error).__name__}: {error}") from None
    records: list[ExtractedRecord] = []
    # The library orders an all-day event by its day in the calendar's zone; here all are read in UTC.
    for start, event in sorted(events, key=lambda pair: pair[0]):
        title = normalize_space(str(event.get("SUMMARY", "")))
        place = normalize_space(str(event.get("LOCATION", "")))
        snippet = fragment_text(str(event.get("DESCRIPTION", "")))[:SNIPPET_CHARS]
        uid = str(event.get("UID", "")) or f"{title}-{start.isoformat()}"
        records.append(ExtractedRecord(
            item_url=f"{page_url.split('#', 1)[0]}#event-{quote(uid, safe='@.-_')}", title=title, date=start,
            snippet=snippet, position=len(records), text=normalize_space(f"{title} {start:%Y-%m-%d %H:%M} {place}"),
            place=place, published=_created(event), event_start=start))
    return records


def _created(event: icalendar.Event) -> datetime | None:
    """When the event was put on the calendar; None where the feed does not say, or says it wrongly (one
    event's broken field does not cost the others)."""
    try:
        created = event.get("CREATED")
        return _moment(created.dt) if created is not None else None
    except (ValueError, TypeError, AttributeError):
        return None


def _closed(feed: str) -> str:
    """The feed, or where it was cut (a feed past the size a message carries arrives truncated) its events up to
    the last whole one, closed."""
    if "END:VCALENDAR" in feed[-64:].upper():
        return feed
    last = feed.rfind("END:VEVENT")
    return feed if last < 0 else feed[:last] + "END:VEVENT\r\nEND:VCALENDAR\r\n"


def _start(event: icalendar.Event) -> datetime:
    if event.get("DTSTART") is None:
        raise ValueError(f"an event without a start ({event.get('UID', 'no UID')})")
    return _moment(event.decoded("DTSTART"))


def _moment(value: date | datetime) -> datetime:
    """A start or creation time in UTC; an all-day event's day at midnight UTC (a day, no time of day); a
    floating time (no zone) taken as UTC."""
    if isinstance(value, datetime):
        return in_utc(value)
    return datetime.combine(value, time(), tzinfo=UTC)
