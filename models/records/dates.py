"""The date a record shows: machine-readable attributes first, then dates written in the record's text.

Handles ISO dates, CJK 年月日 dates (with 民國 years: ROC year + 1911), numeric
day/month/year and year-first (2021/11/2) forms and dates with month names ("March 5, 2024", "5. März
2024", "5 de marzo de 2024") in the languages of MONTH_LANGUAGES, whose month names and
abbreviations come from dateparser's locale data; a time of day written right after the date
("5 Mar 2024 21:00", "05.03.2024, 9.30 pm") makes it exact. Parsing every snippet with
dateparser's search instead costs ~10 ms a record; these patterns cost microseconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import cache

import lxml.html
from dateparser.languages.loader import default_loader

from models.web.dom import remembered, text_content

ROC_YEAR_OFFSET = 1911
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2}))?")
_CJK = re.compile(r"(民國|民国)?\s*(\d{2,4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]")
_NUMERIC = re.compile(r"(?<![\d/.])(\d{1,2})[/.](\d{1,2})[/.](\d{4}|\d{2})(?![\d/.])")
# Year first, as East Asian pages write it: 2021/11/2, 2021.11.02 (dotted only with two-digit month and day: a
# version number such as 2019.1.2 is none).
_YEAR_FIRST = re.compile(r"(?<![\d/.])(\d{4})(?:/(\d{1,2})/(\d{1,2})|\.(\d{2})\.(\d{2}))(?![\d/]|\.\d)")
# A month word with a day and a year around it, in either order; the day may be a run of days in that month
# ("6-7 Apr 2016", "Apr 6-7, 2016": event lists), read as its first day.
_DAY_MONTH_YEAR = re.compile(r"(?<!\w)(?:(\d{1,2})\.?\s*[-–—]\s*)?(\d{1,2})(?:st|nd|rd|th|er|\.|º)?\s+(?:de\s+)?"
                             r"([^\W\d_]{3,12})\.?,?\s+(?:de\s+)?(\d{4})(?!\d)")
_MONTH_DAY_YEAR = re.compile(r"(?<!\w)([^\W\d_]{3,12})\.?\s+(\d{1,2})(?:st|nd|rd|th)?"
                             r"(?:\s*[-–—]\s*(\d{1,2})(?:st|nd|rd|th)?)?,?\s+(\d{4})(?!\d)")
# A time of day right after a date: an optional joining word, hours and minutes, an optional am/pm.
_TIME_AFTER = re.compile(r"\s*(?:,|at|um|à|a las|alle|om|kl\.?|·|-|—)?\s*(\d{1,2})[:.h](\d{2})(?!\d)"
                         r"(?:\s*([ap])\.?m\.?(?!\w))?", re.IGNORECASE)
# What every written date above holds (a four-digit year, digits around a / or ., or 年): a text without any
# holds none, and is told so by one scan instead of five.
_DATE_HINT = re.compile(r"\d{4}|\d[/.]\d|年")
_DIGIT = re.compile(r"\d")
# A date line: an element's whole text is a date, beside weekday names, am/pm and at most this many other words
# ("Posted", "Updated"); a title such as "SPCC Minutes 1/17/19" has more.
DATE_LINE_CHARS = 60
DATE_LINE_WORDS = 1
_WORD = re.compile(r"[^\W\d_]+")
DATE_ATTRIBUTES = ("datetime", "content", "data-date", "data-start")
_ONE_DAY = timedelta(days=1)
# Years before this are no date: an unset date's placeholder ("0001-01-01", "1 January 0001": Go's and Hugo's zero
# time, which theme templates print for a post without one).
EARLIEST_YEAR = 1000
# A month word beside a day, with or without a year (event lists often leave the year out: "Apr 17", "17 avril").
_DAY_MONTH = re.compile(r"(?<!\w)(\d{1,2})(?:st|nd|rd|th|er|\.|º)?\s*(?:de\s+)?([^\W\d_]{3,12})(?![^\W\d_])")
_MONTH_DAY = re.compile(r"(?<!\w)([^\W\d_]{3,12})\.?\s*(\d{1,2})(?:st|nd|rd|th)?(?!\d)")
# A time of day anywhere: 18:30, 6:30 pm, 6 p.m.
_TIME_OF_DAY = re.compile(r"(?<![\d:])(?:[01]?\d|2[0-3])(?::[0-5]\d(?![\d:])|(?::[0-5]\d)?\s*[ap]\.?m\.?(?!\w))",
                          re.IGNORECASE)
# Earlier languages win where two name different months alike.
MONTH_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "nb", "da", "fi", "pl", "cs", "sk", "ru", "uk",
                   "ro", "hu", "tr", "id", "ms", "vi", "ca", "el")
_WEEKDAY_KEYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "am", "pm")
_MONTH_KEYS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december")


@cache
def month_numbers() -> dict[str, int]:
    """Month name or abbreviation (lower case, no final dot) → month number, from dateparser's locales."""
    numbers: dict[str, int] = {}
    for locale in default_loader.get_locales(languages=list(MONTH_LANGUAGES), allow_conflicting_locales=True):
        for number, key in enumerate(_MONTH_KEYS, start=1):
            for name in locale.info.get(key, []):
                numbers.setdefault(name.lower().rstrip("."), number)
    return numbers


@cache
def _weekday_words() -> frozenset[str]:
    """Weekday names and abbreviations and the am/pm words (lower case, no final dot), from dateparser's
    locales: the words a date line may show beside its date."""
    return frozenset(name.lower().rstrip(".") for locale in default_loader.get_locales(
        languages=list(MONTH_LANGUAGES), allow_conflicting_locales=True)
        for key in _WEEKDAY_KEYS for name in locale.info.get(key, []))


def in_utc(moment: datetime) -> datetime:
    """The moment in UTC; one written without a zone (a floating time, a producer that left it out) taken as
    UTC, as the extraction writes its dates."""
    return moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def has_time_of_day(moment: datetime) -> bool:
    """Whether a date read from a page says when in its day (midnight is how a date without a time reads)."""
    return bool(moment.hour or moment.minute or moment.second)


def _utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime | None:
    if year < EARLIEST_YEAR:
        return None
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError:
        return None


def numeric_day_first(texts: list[str], language: str = "") -> bool:
    """Whether a list's numeric dates (3/4/2024) put the day first: decided by any of its dates that can only
    be read one way (25/03/2024, 03/25/2024), else by the page's language — month first only in US English."""
    for text in texts:
        for match in _NUMERIC.finditer(text):
            first, second = int(match[1]), int(match[2])
            if first > 12 >= second:
                return True
            if second > 12 >= first:
                return False
    return not language.lower().startswith(("en-us", "en_us")) and language.lower() not in ("en", "")


def _with_time(date: datetime, text: str, end: int) -> datetime:
    """The date with the time of day written right after it (at `end` in the text), if one is."""
    match = _TIME_AFTER.match(text, end)
    if not match:
        return date
    hour, minute = int(match[1]), int(match[2])
    if match[3]:
        if not 1 <= hour <= 12:
            return date
        hour = hour % 12 + (12 if match[3].lower() == "p" else 0)
    return date.replace(hour=hour, minute=minute) if hour < 24 and minute < 60 else date


def date_in_text(text: str, day_first: bool = False) -> datetime | None:
    """The first date written in the text (with the time of day written right after it, if one is), or None;
    numeric dates read day first when `day_first`."""
    found = _written_dates(text, day_first, first_only=True)
    if not found:
        return None
    _, end, date = min(found, key=lambda item: item[0])
    return date if has_time_of_day(date) else _with_time(date, text, end)


def dates_in_text(text: str, day_first: bool = False) -> list[tuple[int, int, datetime]]:
    """Every date written in the text, in text order, as (start, end, date) — each with the time of day written
    right after it, if one is; a date written inside another's span (a pattern's second reading) once."""
    dates: list[tuple[int, int, datetime]] = []
    for start, end, date in sorted(_written_dates(text, day_first, first_only=False), key=lambda item: item[:2]):
        if dates and start < dates[-1][1]:
            continue
        dates.append((start, end, date if has_time_of_day(date) else _with_time(date, text, end)))
    return dates


def _written_dates(text: str, day_first: bool, first_only: bool) -> list[tuple[int, int, datetime]]:
    """(start, end, date) of the dates each form reads in the text: every one, or each form's first (the
    first match of the numeric forms, the first valid one of the forms with month names). Scanned once per
    text inside models.web.dom.read_once: a page's candidate lists share their records' texts."""
    return remembered(("written dates", text, day_first, first_only),
                      lambda: _scan_written_dates(text, day_first, first_only))


def _scan_written_dates(text: str, day_first: bool, first_only: bool) -> list[tuple[int, int, datetime]]:
    if not _DATE_HINT.search(text):
        return []
    found: list[tuple[int, int, datetime]] = []
    for match in _ISO.finditer(text):
        hour, minute = (int(match[4]), int(match[5])) if match[4] else (0, 0)
        if date := _utc(int(match[1]), int(match[2]), int(match[3]), hour, minute):
            found.append((match.start(), match.end(), date))
        if first_only:
            break
    for match in _CJK.finditer(text):
        year = int(match[2])
        if match[1] or year < ROC_YEAR_OFFSET - 1000:
            year += ROC_YEAR_OFFSET
        if date := _utc(year, int(match[3]), int(match[4])):
            found.append((match.start(), match.end(), date))
        if first_only:
            break
    for match in _YEAR_FIRST.finditer(text):
        month, day = (match[2], match[3]) if match[2] else (match[4], match[5])
        if date := _utc(int(match[1]), int(month), int(day)):
            found.append((match.start(), match.end(), date))
        if first_only:
            break
    for match in _NUMERIC.finditer(text):
        first, second, year = int(match[1]), int(match[2]), int(match[3])
        year += 2000 if year < 100 else 0
        month, day = (second, first) if day_first else (first, second)
        if date := _utc(year, month, day) or _utc(year, day, month):
            found.append((match.start(), match.end(), date))
        if first_only:
            break
    months = month_numbers()
    # (pattern, the first day's group, the last day's group, the month's group)
    for pattern, first_day, last_day, month_group in ((_DAY_MONTH_YEAR, 1, 2, 3), (_MONTH_DAY_YEAR, 2, 3, 1)):
        for match in pattern.finditer(text):
            month = months.get(match[month_group].lower())
            days = [int(day) for day in (match[first_day], match[last_day]) if day]
            if len(days) == 2 and days[0] >= days[1]:
                days = days[1:]  # "Meeting 53 - 16 January 2024": a number before the date, no range
            if month and (date := _utc(int(match[4]), month, days[0])):
                found.append((match.start(), match.end(), date))
                if first_only:
                    break
    return found


def names_day_of_month(text: str) -> bool:
    """Whether the text names a day of a month by the month's name, with or without a year ("Apr 17")."""
    if not _DIGIT.search(text):
        return False
    months = month_numbers()
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        for match in pattern.finditer(text):
            if match[month_group].lower() in months and 1 <= int(match[day_group]) <= 31:
                return True
    return False


def mentions_time_of_day(text: str) -> bool:
    return _DIGIT.search(text) is not None and _TIME_OF_DAY.search(text) is not None


def attribute_date(node: lxml.html.HtmlElement) -> datetime | None:
    """The date of the node's first date attribute that holds one (`<time datetime>`, `<meta content>`), or None.
    Where a `<time>` shows another date (over a day apart: not a time zone's shift) the shown one: a theme
    that fills the attribute with one constant ("2020-02-12" on every post) shows its readers the right one."""
    for name in DATE_ATTRIBUTES:
        value = node.get(name)
        if value and (date := date_in_text(value)):
            if node.tag == "time" and (shown := date_in_text(text_content(node))) and abs(shown - date) > _ONE_DAY:
                return shown
            return date
    return None


def record_date(elements: list[lxml.html.HtmlElement], text: str, day_first: bool = False) -> datetime | None:
    """A record's date: a <time datetime> or similar attribute inside it, else the date of its first date line
    where its text shows several dates, else the first date in its text."""
    for element in elements:
        for node in element.iter("time", "meta", "span", "abbr"):
            if date := attribute_date(node):
                return date
    return _date_line(elements, text, day_first) or date_in_text(text, day_first)


def _date_line(elements: list[lxml.html.HtmlElement], text: str, day_first: bool) -> datetime | None:
    """The date of the record's first element that shows a date alone (beside a weekday, a time, a word such
    as "Posted"), where the record's text shows more than one date: a post titled "Minutes 1/17/19" and dated
    "Tue, Jul 9, 2019" on a line of its own is the post of July 9 — the title's date is what it is about. The
    time of day the record writes after that date (a table's next cell) comes with it."""
    written = dates_in_text(text, day_first)
    if len({date for _, _, date in written}) < 2:
        return None
    for element in elements:
        for node in element.iter():
            if not isinstance(node.tag, str):
                continue
            shown = " ".join(text_content(node).split())
            if len(shown) > DATE_LINE_CHARS or not _DATE_HINT.search(shown):
                continue
            found = dates_in_text(shown, day_first)
            if len(found) == 1 and _beside_a_date_alone(shown[:found[0][0]] + " " + shown[found[0][1]:]):
                date = found[0][2]
                return next((moment for _, _, moment in written
                             if moment.date() == date.date() and has_time_of_day(moment)), date)
    return None


def _beside_a_date_alone(rest: str) -> bool:
    """What stands beside a date on its line makes it a date line: times, weekdays, joining words (at, um, à)
    and at most DATE_LINE_WORDS other words."""
    words = _WORD.findall(_TIME_OF_DAY.sub(" ", rest))
    return sum(len(word) > 2 and word.lower() not in _weekday_words() for word in words) <= DATE_LINE_WORDS
