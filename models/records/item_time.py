"""When an item was published, read from its own (detail) page: many listings date their items by day alone,
while the item's page gives the time — what the revisit scheduler needs to learn a page's hours.

Machine-readable publication times come first (Open Graph / schema.org metadata, JSON-LD `datePublished`, a
`<time itemprop="datePublished">`); else the first date with a time of day written in the page's visible
text that falls on the day the listing gave (an item page also shows other dates: an event's, the site's
"updated" line; the listed day tells the publication's apart). A time without a time of day says nothing the
listing did not, so it is not one. A time without a zone is read as UTC, as the listing's dates are.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import lxml.html

from models.records.dates import EARLIEST_YEAR, date_in_text, has_time_of_day, in_utc, numeric_day_first
from models.records.extraction import drop_invisible
from models.web.dom import text_content

_PUBLISHED_META = ("article:published_time", "og:published_time", "datepublished", "dc.date.issued",
                   "dcterms.issued")
_JSON_LD_PUBLISHED = re.compile(r'"datePublished"\s*:\s*"([^"]+)"')


def _iso_time(value: str) -> datetime | None:
    """An ISO 8601 timestamp with a time of day, in UTC (a date alone, or text that is not one: None)."""
    value = value.strip()
    if len(value) < 16 or value[10] not in "T ":
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.year < EARLIEST_YEAR:  # a theme's placeholder for a page without a date
        return None
    return in_utc(moment)


def _machine_readable(root: lxml.html.HtmlElement) -> datetime | None:
    for meta in root.iter("meta"):
        name = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        if name in _PUBLISHED_META and (moment := _iso_time(meta.get("content") or "")):
            return moment
    for element in root.xpath('//*[@itemprop="datePublished"]'):
        if moment := _iso_time(element.get("datetime") or element.get("content") or text_content(element)):
            return moment
    for script in root.xpath('//script[@type="application/ld+json"]'):
        if (match := _JSON_LD_PUBLISHED.search(script.text or "")) and (moment := _iso_time(match[1])):
            return moment
    return None


def _same_day(moment: datetime, listed: datetime | None) -> bool:
    return listed is None or moment.date() == listed.astimezone(UTC).date()


def published_time(root: lxml.html.HtmlElement | None, listed: datetime | None) -> datetime | None:
    """The item's publication time from its page (see the module), or None; `listed`: the date its listing
    gave (None: undated). Changes `root` (invisible elements are dropped)."""
    if root is None:
        return None
    if (moment := _machine_readable(root)) and _same_day(moment, listed):
        return moment
    drop_invisible(root)
    texts = [text for text in root.itertext() if any(character.isdigit() for character in text)]
    day_first = numeric_day_first(texts, root.get("lang") or "")
    for text in texts:
        # A numeric date the page's own dates do not settle (05.03.2024) may be either way round: the listed
        # day tells which.
        for reading in (day_first, not day_first) if listed is not None else (day_first,):
            moment = date_in_text(text, reading)
            if moment is not None and has_time_of_day(moment) and _same_day(moment, listed):
                return moment
    return None
