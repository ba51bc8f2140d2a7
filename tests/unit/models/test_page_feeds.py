"""A page's list kept in its section's RSS or Atom feed (models.records.page_feeds)."""

import json
import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from models.records.list_feeds import list_feed_urls
from models.records.no_list import MENU_ONLY, NO_REPEATS
from models.records.page_feeds import FeedUnreadable, feed_records, own_feeds
from tests.garbled_text import garbled

PAGE = "https://club.example/events/"
HEAD = ("<html><head><title>Events</title><link rel='alternate' type='application/rss+xml' href='/feed.xml'>"
        "<link rel='alternate' type='application/rss+xml' href='index.xml'>"
        "<link rel='alternate' type='application/atom+xml' href='https://other.example/events/atom.xml'>"
        "<link rel='stylesheet' href='/events/style.css'></head><body><p>x</p></body></html>")

RSS = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Events on Club</title><link>https://club.example/events/</link>
<item><title>Spring fair</title><link>https://club.example/events/spring-fair/</link>
<pubDate>Wed, 15 Jun 2022 10:05:24 +0200</pubDate><description>&lt;p&gt;Stalls &lt;b&gt;and&lt;/b&gt; music.&lt;/p&gt;&lt;p&gt;All welcome.&lt;/p&gt;</description></item>
<item><title>Annual meeting</title><link>/events/annual-meeting/</link><pubDate>Thu, 22 Feb 2024 00:00:00 +0000</pubDate></item>
<item><title></title><link></link></item>
</channel></rss>"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title>
<entry><title>Results are in</title><link href="https://club.example/news/results"/><id>1</id>
<updated>2026-11-30T18:45:00Z</updated><summary>The season's results.</summary></entry></feed>"""


def test_only_the_feeds_of_the_pages_own_section_are_its() -> None:
    # The site-wide /feed.xml and another site's feed are not the section's list.
    assert own_feeds(HEAD, PAGE) == ["https://club.example/events/index.xml"]
    # Nor is a comments feed, whatever the language WordPress names it in.
    for title in ("Club » Events Comments Feed", "Verein » Termine-Kommentar-Feed", "Club » Flux des commentaires"):
        wordpress = f"<html><head><link rel='alternate' type='application/rss+xml' title='{title}' href='feed/'>"
        assert own_feeds(wordpress + "</head><body></body></html>", PAGE) == []
    assert own_feeds(HEAD, "https://club.example/events/index.html") == ["https://club.example/events/index.xml"]
    assert own_feeds("", PAGE) == []


def test_rss_and_atom_entries_are_records() -> None:
    records = feed_records(RSS, "https://club.example/events/index.xml")
    assert [(r.title, r.item_url, r.date) for r in records] == [
        ("Spring fair", "https://club.example/events/spring-fair/", datetime(2022, 6, 15, 8, 5, 24, tzinfo=UTC)),
        ("Annual meeting", "https://club.example/events/annual-meeting/", datetime(2024, 2, 22, tzinfo=UTC)),
    ]  # the empty entry left out
    assert records[0].snippet == "Stalls and music. All welcome."
    assert records[0].published == records[0].date and records[0].event_start is None
    atom = feed_records(ATOM, "https://club.example/news/atom.xml")
    assert [(r.title, r.date) for r in atom] == [("Results are in", datetime(2026, 11, 30, 18, 45, tzinfo=UTC))]


@pytest.mark.parametrize("body", ["", "<html><body>not a feed</body></html>", "https://club.example/feed.xml",
                                  "<rss><channel><title>Empty</title></channel></rss>"])
def test_no_feed_or_an_empty_one_says_so(body: str) -> None:
    # An address is not fetched: the body is read as a document.
    with pytest.raises(FeedUnreadable):
        feed_records(body, "https://club.example/feed.xml")


def test_real_pages_that_show_only_their_menu(data_dir: Path) -> None:
    """Two labelled source pages of <data>/sites whose items their page does not show as a list (read alone:
    `menu_only`) keep them in their section's feed."""
    sites = data_dir / "sites"
    for site, expected in (("synergie-asso", {"Campagne de Sensibilisation", "Rencontre Capgemini"}),
                           ("marsja-mudde-muziek", {"Mastering Modal Methods and Manners for Modal Music, "
                                                    "Publieke Demonstratie"})):
        page = f"https://{json.loads((sites / site / 'manifest.json').read_text())['site_hosts'][0]}/events/"
        assert own_feeds((sites / site / "site/events/index.html").read_text(), page) == [page + "index.xml"]
        titles = {r.title for r in feed_records((sites / site / "site/events/index.xml").read_text(), page)}
        assert expected <= titles


SPLICES = ["\x00", "<item>", "</item>", "<![CDATA[", "&#xffff;", "<link>", "</link>", "é" * 50, "<entry>"]


def test_hostile_feeds_give_records_or_say_they_are_unreadable() -> None:
    rng, read = random.Random(7), Counter()
    for _ in range(400):
        try:
            records = feed_records(garbled(rng.choice([RSS, ATOM]), rng, SPLICES), "https://club.example/feed.xml")
            read["records" if records else "none"] += 1
        except FeedUnreadable:  # anything else raised fails the test
            read["unreadable"] += 1
    # Both ways taken: the garbling leaves some feeds readable and breaks others.
    assert read["records"] > 0 and read["unreadable"] > 0, read


def test_a_pages_comments_feed_lists_no_items() -> None:
    """WordPress advertises each page's comments feed under its path: entries linking into the page itself."""
    comments = ("<rss version='2.0'><channel><title>Comments on: Events</title>" + "".join(
        f"<item><title>By: reader {n}</title><link>{PAGE}#comment-{n}</link>"
        f"<pubDate>Wed, 15 Jun 2022 10:05:24 +0000</pubDate></item>" for n in range(3)) + "</channel></rss>")
    with pytest.raises(FeedUnreadable):
        feed_records(comments, PAGE + "feed/", PAGE)
    assert len(feed_records(comments, PAGE + "feed/")) == 3  # read without the page: entries like any


def test_a_page_of_prose_is_not_read_from_its_feed() -> None:
    assert list_feed_urls(HEAD, PAGE, NO_REPEATS) == []
    assert list_feed_urls(HEAD, PAGE, MENU_ONLY) == ["https://club.example/events/index.xml"]
    assert list_feed_urls(HEAD, PAGE, "") == []
