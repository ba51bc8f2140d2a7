"""The date a record shows: machine-readable attributes first, then dates written in the record's text.

Handles ISO dates, CJK 年月日 dates (with 民國 years: ROC year + 1911), numeric
day/month/year forms and month names in any language dateparser knows. Only
short candidate strings found by the patterns below are handed to dateparser
(parsing whole snippets with its search is ~100× slower), and each distinct
candidate is parsed once.
"""

from __future__ import annotations

import re
import warnings
from datetime import UTC, datetime
from functools import lru_cache

import dateparser
import lxml.html

ROC_YEAR_OFFSET = 1911
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2}))?")
_CJK = re.compile(r"(民國|民国)?\s*(\d{2,4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]")
_NUMERIC = re.compile(r"(?<![\d/.])(\d{1,2})[/.](\d{1,2})[/.](\d{4}|\d{2})(?![\d/.])")
# A month word with a day and a year around it, in either order ("March 5, 2024", "5. März 2024", "5 de marzo de 2024").
_WORDY = re.compile(
    r"(?<!\w)(?:\d{1,2}(?:st|nd|rd|th|er|\.|º)?\s+(?:de\s+)?[^\W\d_]{3,12}\.?,?\s+(?:de\s+)?\d{4}"
    r"|[^\W\d_]{3,12}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})(?!\w)")
_DATE_ATTRIBUTES = ("datetime", "content", "data-date", "data-start")
_PARSER_SETTINGS = {"RETURN_AS_TIMEZONE_AWARE": True, "TIMEZONE": "UTC", "PREFER_DAY_OF_MONTH": "first",
                    "REQUIRE_PARTS": ["day", "month", "year"]}


def _utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime | None:
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError:
        return None


@lru_cache(maxsize=65536)
def _parse_words(candidate: str) -> datetime | None:
    with warnings.catch_warnings():
        # dateparser warns about pytz/locale internals on some inputs; the result is what matters.
        warnings.simplefilter("ignore")
        parsed = dateparser.parse(candidate, settings=_PARSER_SETTINGS)
    return parsed.astimezone(UTC) if parsed else None


def date_in_text(text: str) -> datetime | None:
    """The first date written in the text, or None."""
    found: list[tuple[int, datetime]] = []
    if match := _ISO.search(text):
        hour, minute = (int(match[4]), int(match[5])) if match[4] else (0, 0)
        if date := _utc(int(match[1]), int(match[2]), int(match[3]), hour, minute):
            found.append((match.start(), date))
    if match := _CJK.search(text):
        year = int(match[2])
        if match[1] or year < ROC_YEAR_OFFSET - 1000:
            year += ROC_YEAR_OFFSET
        if date := _utc(year, int(match[3]), int(match[4])):
            found.append((match.start(), date))
    if match := _NUMERIC.search(text):
        first, second, year = int(match[1]), int(match[2]), int(match[3])
        year += 2000 if year < 100 else 0
        # Month first (US) unless that cannot be a date; then day first.
        if date := _utc(year, first, second) or _utc(year, second, first):
            found.append((match.start(), date))
    for match in _WORDY.finditer(text):
        if date := _parse_words(match[0]):
            found.append((match.start(), date))
            break
    return min(found, key=lambda item: item[0])[1] if found else None


def record_date(elements: list[lxml.html.HtmlElement], text: str) -> datetime | None:
    """A record's date: a <time datetime> or similar attribute inside it, else the first date in its text."""
    for element in elements:
        for node in element.iter("time", "meta", "span", "abbr"):
            for name in _DATE_ATTRIBUTES:
                value = node.get(name)
                if value and (date := date_in_text(value)):
                    return date
    return date_in_text(text)
