"""Which of a record's dates says when the item was published and which when its event begins.

A list of events often shows both ("Posted 3 March 2026 — Concert, 12 April 2026, 19:30"), a news list only
the first, a meeting list only the second; most records show one date and say nothing of its kind. A date's
kind is told only where the page tells it: by markup (schema.org's datePublished / startDate, the classes
blog and calendar themes give a post's or an event's date, `<time pubdate>`), by the words written right
before it ("Posted", "Veröffentlicht", "When:", "Termin:"), or by being a range's first day (a run of days is
an event's, never a publication's). Nothing is guessed: a date whose kind the page does not tell — most of
them, and the other date beside a told one, which is as often an update's, a deadline's or an accession's as
the other kind (tried on the Estuka pages, 2026-11-28) — stays unknown, and the record's `date` (its first
date, part of its identity) is all it has of it.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import NamedTuple

import lxml.html

from models.records.dates import DATE_ATTRIBUTES, attribute_date, date_in_text, dates_in_text, month_numbers
from models.web.dom import text_content

PUBLISHED = "published"
EVENT = "event"
# schema.org properties and the class words blog, news and calendar themes give a date's element.
_PUBLISHED_PROPERTIES = {"datepublished", "datecreated", "uploaddate"}
_EVENT_PROPERTIES = {"startdate"}
_PUBLISHED_CLASS = re.compile(r"publish|posted|pubdate|post-?date|entry-?date|news-?date|article-?date|byline",
                              re.IGNORECASE)
_EVENT_CLASS = re.compile(r"dtstart|start-?date|date-?start|event-?(?:date|start|time)|tribe-event", re.IGNORECASE)
# Words written right before a date (up to four words between: "Published by Ann Lee on"), in the languages
# the date reader knows (models.records.dates); whole words, but for the scripts written without spaces.
_PUBLISHED_WORDS = re.compile(
    r"(?:\b(?:posted|published|publish date|submitted|added|veröffentlicht|erstellt|publié|publie le|publicado|"
    r"publicada|publicación|pubblicato|gepubliceerd|geplaatst|publicerad|publiceret|publisert|julkaistu|"
    r"opublikowano|publikováno|publikované|опубликовано|опубліковано|publicat|yayınlanma|diterbitkan|đăng)\b|"
    r"发布|發布|發佈|公開|投稿|게시)\W{0,3}(?:\w+\W{1,3}){0,4}$", re.IGNORECASE)
_EVENT_WORDS = re.compile(
    r"(?:\b(?:when|event date|starts?|starting|begins?|takes place|wann|termin|beginn|beginnt|veranstaltungsdatum|"
    r"quand|le rendez-vous|cuándo|fecha del evento|quando|wanneer|när|milloin|kiedy|когда|початок)\b|"
    r"日時|开始|開始|時間|일시)\W{0,3}(?:\w+\W{1,3}){0,4}$", re.IGNORECASE)
# After a date, the rest of a range of days: a day and its month ("– 14 March", "bis 14. März", "to 14.3.").
# (Not a bare number: "10 Feb 2017 - 12 Jacques Santer…" is a search result's date and snippet.)
_RANGE_AFTER = re.compile(r"\s*(?:[-–—]|to|till|until|bis|au|al|tot|do|по)\s*(\d{1,2})(?:\.\d{1,2}\.|\.?\s*(?:de\s+)?"
                          r"([^\W\d_]{3,12}))", re.IGNORECASE)
# Before a date, a range's first day: "12 – 14 April 2026", "12.–14. April".
_RANGE_BEFORE = re.compile(r"(?<![\d.])(\d{1,2})\.?\s*[-–—]\s*$")
# Inside a date, a run of days read as its first (models.records.dates: "Apr 6-7, 2016", "6–7 April 2016").
_DAYS_INSIDE = re.compile(r"(?<![\d-])\d{1,2}\.?\s*[-–—]\s*\d{1,2}(?![\d-])")
# Between a range's two dates: the second is the range's end, no date of a kind of its own.
_RANGE_JOIN = re.compile(r"^\s*(?:[-–—]|to|till|until|bis|au|al|tot|do|по)\s*$", re.IGNORECASE)
# How far back from a date its words are looked for.
_WORDS_BEFORE = 40
_UNIX_EPOCH = datetime(1970, 1, 1).date()


class RecordDates(NamedTuple):
    published: datetime | None
    event_start: datetime | None


def record_date_kinds(elements: list[lxml.html.HtmlElement], text: str, day_first: bool = False) -> RecordDates:
    """When the record's item was published and when its event begins, each where the record tells it."""
    told: list[tuple[datetime, str | None]] = [*_marked_dates(elements), *_written_dates(text, day_first)]
    kinds: dict[str, datetime] = {}
    for date, kind in told:
        if kind is not None:
            kinds.setdefault(kind, date)
    return RecordDates(kinds.get(PUBLISHED), kinds.get(EVENT))


def _marked_dates(elements: list[lxml.html.HtmlElement]) -> list[tuple[datetime, str | None]]:
    """The dates of the record's date attributes (of any kind or none), then those written in elements whose
    markup tells a kind and that hold no date attribute (a calendar theme's
    `<span class="event-date">April 12, 2026</span>`)."""
    attributed, written = [], []
    for element in elements:
        for node in element.iter():
            # Only attributes tell a date or a kind (most of a record's elements have none).
            if not isinstance(node.tag, str) or not node.attrib:
                continue
            if date := attribute_date(node):
                if date.date() != _UNIX_EPOCH:  # an unset timestamp's placeholder
                    attributed.append((date, _marked_kind(node)))
            elif (kind := _marked_kind(node, parent=False)) and not _holds_date_attribute(node) and (
                    date := date_in_text(text_content(node))):
                written.append((date, kind))
    return attributed + written


def _holds_date_attribute(node: lxml.html.HtmlElement) -> bool:
    return any(isinstance(inner.tag, str) and any(inner.get(name) for name in DATE_ATTRIBUTES)
               for inner in node.iter())


def _marked_kind(node: lxml.html.HtmlElement, parent: bool = True) -> str | None:
    """The kind the node's markup (or its parent's: a `<meta>` or `<time>` inside a marked element) tells."""
    if node.get("data-start"):
        return EVENT
    if node.tag == "time" and node.get("pubdate") is not None:
        return PUBLISHED
    for element in (node, node.getparent()) if parent else (node,):
        if element is not None and (kind := _kind_of_markup(element.get("itemprop"), element.get("class"))):
            return kind
    return None


@functools.lru_cache(maxsize=4096)
def _kind_of_markup(itemprop: str | None, classes: str | None) -> str | None:
    """What an element's schema.org property or classes say of the date it holds (a list repeats them on every
    record: read once)."""
    prop = (itemprop or "").lower()
    if prop in _PUBLISHED_PROPERTIES:
        return PUBLISHED
    if prop in _EVENT_PROPERTIES:
        return EVENT
    if classes and _EVENT_CLASS.search(classes):
        return EVENT
    if classes and _PUBLISHED_CLASS.search(classes):
        return PUBLISHED
    return None


def _written_dates(text: str, day_first: bool) -> list[tuple[datetime, str | None]]:
    dates: list[tuple[datetime, str | None]] = []
    previous_end = 0
    for start, end, date in dates_in_text(text, day_first):
        before = text[max(previous_end, start - _WORDS_BEFORE):start]
        if dates and dates[-1][1] != PUBLISHED and _RANGE_JOIN.match(before):
            # A range's end (a publication date has none: "Posted 3 March — 12 April" is two dates).
            previous_end = end
            continue
        first_day = _RANGE_BEFORE.search(before)
        if first_day and not 1 <= int(first_day[1]) < date.day:
            first_day = None  # "Meeting 53 - January 16": a number, not the range's first day
        if first_day:
            date = date.replace(day=int(first_day[1]))
        kind = (PUBLISHED if _PUBLISHED_WORDS.search(before)
                else EVENT if (_EVENT_WORDS.search(before) or first_day or _DAYS_INSIDE.search(text, start, end)
                               or _range_follows(text, end)) else None)
        dates.append((date, kind))
        previous_end = end
    return dates


def _range_follows(text: str, end: int) -> bool:
    """The date at `end` is a range's first day: a connector, a day and its month follow."""
    match = _RANGE_AFTER.match(text, end)
    return bool(match) and 1 <= int(match[1]) <= 31 and (match[2] is None or match[2].lower() in month_numbers())
