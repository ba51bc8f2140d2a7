"""Dates of records: attributes first, then dates written in many languages and calendars."""

from datetime import UTC, datetime

import pytest

from models.records.dates import (
    date_in_text,
    mentions_time_of_day,
    names_day_of_month,
    numeric_day_first,
    record_date,
)
from models.web.dom import parse_html


@pytest.mark.parametrize("text, expected", [
    ("Posted March 5, 2024 by the board", (2024, 3, 5)),
    ("Nov. 3rd, 2019", (2019, 11, 3)),
    ("5. März 2024", (2024, 3, 5)),
    ("5 de marzo de 2024", (2024, 3, 5)),
    ("le 14 juillet 2023", (2023, 7, 14)),
    ("2024年3月5日（火）", (2024, 3, 5)),
    ("民國112年3月5日", (2023, 3, 5)),
    ("112年3月5日", (2023, 3, 5)),
    ("12/25/2023", (2023, 12, 25)),
    ("25.12.2023", (2023, 12, 25)),
    ("03/04/2023", (2023, 3, 4)),
    ("on 2023-11-29 news", (2023, 11, 29)),
    # A run of days in one month is read as its first day (event lists: "Apr 6-7, 2016").
    ("SIdO Apr 6-7, 2016 Lyon, France", (2016, 4, 6)),
    ("October 23–25, 2017", (2017, 10, 23)),
    ("6-7 Apr 2016", (2016, 4, 6)),
    ("12.–14. April 2026", (2026, 4, 12)),
    # Year first, as Japanese, Chinese and Korean pages write it; a version number is no date (below).
    ("2021/11/2 19:00-20:30 オンライン", (2021, 11, 2, 19, 0)),
    ("2021.11.02.", (2021, 11, 2)),
    # A larger number before a dash is no first day.
    ("Meeting 53 - 16 January 2024", (2024, 1, 16)),
])
def test_dates_in_text(text, expected):
    assert date_in_text(text) == datetime(*expected, tzinfo=UTC)


@pytest.mark.parametrize("text", ["Room 12 2019", "31 juin 2020", "version 1.2.3", "", "call 555-1234",
                                  # A theme's placeholder for a post without a date (Go's and Hugo's zero time).
                                  "← → 1 January 0001", "0001-01-01T00:00:00Z",
                                  "PyCharm 2019.1.2 released", "v2021.11.02.1"])
def test_text_without_a_valid_date(text):
    assert date_in_text(text) is None


def test_the_first_date_in_the_text_wins():
    assert date_in_text("Updated 2024-02-01, event on March 9, 2024") == datetime(2024, 2, 1, tzinfo=UTC)


def test_a_time_element_beats_the_text():
    root = parse_html('<li><time datetime="2024-06-01T18:30">next Saturday</time> (written 2024-05-20)</li>')
    assert record_date([root.find(".//li")], "next Saturday (written 2024-05-20)") == \
        datetime(2024, 6, 1, 18, 30, tzinfo=UTC)


@pytest.mark.parametrize("time_element, expected", [
    # A theme that writes one constant into every post's attribute: the date its readers see is the post's.
    ('<time datetime="2020-02-12">2026-06-24</time>', datetime(2026, 6, 24, tzinfo=UTC)),
    # A time zone's shift of the day, or a shown date without its year: the attribute stays the date.
    ('<time datetime="2024-03-05T23:30">March 6, 2024</time>', datetime(2024, 3, 5, 23, 30, tzinfo=UTC)),
    ('<time datetime="2024-03-05">March 5</time>', datetime(2024, 3, 5, tzinfo=UTC)),
])
def test_a_time_elements_attribute_gives_way_to_the_date_it_shows_only_where_they_are_days_apart(time_element,
                                                                                                 expected):
    root = parse_html(f"<li>{time_element} Post</li>")
    assert record_date([root.find(".//li")], "") == expected


def _record_date_of(html: str) -> datetime | None:
    record = parse_html(html).find(".//body/*")
    return record_date([record], " ".join(record.text_content().split()))


@pytest.mark.parametrize("html, expected", [
    # A post titled by the meeting its minutes are of, dated on a line of its own: the post's date.
    ('<div><h2><a href="/m">SPCC Minutes 1/17/19</a></h2><h3>Tue, Jul 9, 2019</h3><p>Minutes of January 17, 2019'
     '</p></div>', datetime(2019, 7, 9, tzinfo=UTC)),
    ('<div><a href="/p">Digest: May 2, 2024 session</a> <span>Posted May 3, 2024</span></div>',
     datetime(2024, 5, 3, tzinfo=UTC)),
    # A table row's date cell with its time in the next cell: the time comes with the line's date.
    ("<table><tr><td>Annual report 2017-02-01</td> <td>09/19/18</td> <td>10:00 am</td></tr></table>",
     datetime(2018, 9, 19, 10, 0, tzinfo=UTC)),
    # A title of several words around its date is no date line: the first date stays the record's.
    ('<div><a href="/m">Board minutes of 1/17/19 approved</a> <p>Read on: the budget of 2/2/2019</p></div>',
     datetime(2019, 1, 17, tzinfo=UTC)),
    # One date in the record: nothing to choose.
    ('<div><a href="/m">Minutes 1/17/19</a> <p>Tue, Jan 17, 2019</p></div>', datetime(2019, 1, 17, tzinfo=UTC)),
])
def test_a_date_on_a_line_of_its_own_beats_a_date_inside_a_title(html, expected):
    assert _record_date_of(html) == expected


def test_a_lists_numeric_dates_are_read_one_way():
    assert numeric_day_first(["03/04/2024", "25/03/2024"]) is True  # 25 cannot be a month
    assert numeric_day_first(["03/04/2024", "03/25/2024"], "de") is False  # 25 cannot be a month
    assert numeric_day_first(["03/04/2024"], "es") is True
    assert numeric_day_first(["03/04/2024"], "en-US") is False
    assert date_in_text("03/04/2024", day_first=True) == datetime(2024, 4, 3, tzinfo=UTC)


@pytest.mark.parametrize("text, expected", [
    ("05 Mar 2024 21:00", (2024, 3, 5, 21, 0)),
    ("2024年03月05日 07:20", (2024, 3, 5, 7, 20)),
    ("25.03.2024, 9.30 pm", (2024, 3, 25, 21, 30)),
    ("March 5, 2024 at 12:15 a.m.", (2024, 3, 5, 0, 15)),
    ("5 Mar 2024 – 2025 season", (2024, 3, 5, 0, 0)),  # a year after the date is no time
    ("5 Mar 2024 25:10", (2024, 3, 5, 0, 0)),  # nor an impossible hour
])
def test_a_time_of_day_after_the_date_makes_it_exact(text, expected):
    assert date_in_text(text) == datetime(*expected, tzinfo=UTC)


@pytest.mark.parametrize("text, day, time_of_day", [
    ("Apr 17 Policy Ad-hoc Sub-Committee", True, False),
    ("18sep10:00 am11:00 amCCLBA Board", True, True),
    ("Jan 17, 2018 - 10:33 AM Agenda Video", True, True),
    ("17 avril, salle des fêtes", True, False),
    ("Board meeting at 6 p.m.", False, True),
    ("Doors 18:30", False, True),
    ("Board Members", False, False),
    ("May I help you?", False, False),
    ("Room 101, 3 members", False, False),
    ("Final score 3:2", False, False),
])
def test_a_day_of_a_month_and_a_time_of_day_are_seen_without_a_year(text, day, time_of_day):
    assert names_day_of_month(text) is day
    assert mentions_time_of_day(text) is time_of_day
