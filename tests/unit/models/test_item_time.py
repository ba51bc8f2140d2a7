"""An item's publication time read from its own page, for listings that date items by day alone."""

from datetime import UTC, datetime

from models.records.item_time import published_time
from models.web.dom import parse_html

LISTED = datetime(2024, 3, 5, tzinfo=UTC)


def _time(html: str, listed: datetime | None = LISTED) -> datetime | None:
    return published_time(parse_html(html), listed)


def test_metadata_gives_the_time_in_utc():
    html = ('<html><head><meta property="article:published_time" content="2024-03-05T22:15:00+01:00"></head>'
            '<body><p>Posted 5 Mar 2024 08:00</p></body></html>')
    assert _time(html) == datetime(2024, 3, 5, 21, 15, tzinfo=UTC)


def test_json_ld_gives_the_time():
    html = ('<html><head><script type="application/ld+json">{"@type": "NewsArticle", '
            '"datePublished": "2024-03-05T07:20:00Z"}</script></head><body><p>Hello</p></body></html>')
    assert _time(html) == datetime(2024, 3, 5, 7, 20, tzinfo=UTC)


def test_the_text_time_on_the_listed_day_wins_over_other_dates():
    html = ('<html><body><p>Site updated 01.02.2024 10:00</p><article><p class="when">05.03.2024 21:00</p>'
            '<p>Event on 12.04.2024 18:00</p></article></body></html>')
    assert _time(html) == datetime(2024, 3, 5, 21, 0, tzinfo=UTC)


def test_a_page_without_a_time_of_day_gives_none():
    assert _time("<html><body><p>Posted 5 March 2024</p></body></html>") is None
    assert _time("<html><head><meta property='article:published_time' content='2024-03-05'></head></html>") is None


def test_a_time_on_another_day_than_the_listed_one_is_not_the_publication():
    assert _time("<html><body><p>Starts 12 April 2024 18:00</p></body></html>") is None
    assert _time("<html><body><p>Starts 12 April 2024 18:00</p></body></html>", None) == \
        datetime(2024, 4, 12, 18, 0, tzinfo=UTC)


def test_hidden_text_is_not_read():
    html = '<html><body><p hidden>05 Mar 2024 03:00</p><p>05 Mar 2024 09:45</p></body></html>'
    assert _time(html) == datetime(2024, 3, 5, 9, 45, tzinfo=UTC)


def test_a_themes_zero_date_is_no_time():
    # Hugo prints Go's zero time for a page without a date; an undated listing would take it for the item's.
    html = ('<html><head><meta property="article:published_time" content="0001-01-01T00:00:00+00:00"></head>'
            '<body><p>Hello</p></body></html>')
    assert _time(html, listed=None) is None
