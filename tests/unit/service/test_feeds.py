"""The feeds' dates: an item's publication date where its listing tells one, never its event's start (a feed
reader sorts by it: an event months ahead would sit on top for months)."""

from datetime import UTC, datetime

import feedparser

from service.feeds import FeedItem, FeedPage, atom, json_feed

SEEN = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)


def _page(*items: FeedItem) -> FeedPage:
    return FeedPage(title="t", self_url="http://127.0.0.1/feeds/items.json", next_url=None, items=list(items),
                    updated=SEEN)


def _item(published: datetime | None, event_start: datetime | None) -> FeedItem:
    return FeedItem(event_id="e1", title="Concert", url="https://e.org/1", source_url="https://e.org/events",
                    site="e.org", published=published, first_seen=SEEN, event_start=event_start)


def test_an_item_dated_by_its_event_alone_is_published_when_first_seen_and_says_when_its_event_begins():
    event = datetime(2026, 6, 1, 19, 30, tzinfo=UTC)
    feed = json_feed(_page(_item(None, event)))
    assert feed["items"][0]["date_published"] == SEEN.isoformat()
    assert feed["items"][0]["_sourcewatch"]["event_start"] == event.isoformat()
    entry = feedparser.parse(atom(_page(_item(None, event)))).entries[0]
    assert entry.published_parsed[:5] == SEEN.timetuple()[:5]


def test_a_told_publication_date_is_the_feeds():
    posted = datetime(2026, 3, 1, tzinfo=UTC)
    feed = json_feed(_page(_item(posted, None)))
    assert feed["items"][0]["date_published"] == posted.isoformat()
    assert "event_start" not in feed["items"][0]["_sourcewatch"]


def test_an_item_listed_when_the_page_was_first_read_is_told_apart_from_a_new_one():
    listed = FeedItem(event_id="r1", title="Earlier post", url="https://e.org/0", source_url="https://e.org/events",
                      site="e.org", published=None, first_seen=SEEN, new=False)
    feed = json_feed(_page(listed, _item(None, None)))
    assert [item["id"] for item in feed["items"]] == ["urn:sourcewatch:listed:r1", "urn:sourcewatch:item:e1"]
    assert [item["_sourcewatch"]["new"] for item in feed["items"]] == [False, True]
    entries = feedparser.parse(atom(_page(listed, _item(None, None)))).entries
    assert [entry.id for entry in entries] == ["urn:sourcewatch:listed:r1", "urn:sourcewatch:item:e1"]
    assert entries[0].summary.startswith("Listed on https://e.org/events")


def test_an_item_without_a_page_of_its_own_links_the_source_page_that_lists_it():
    unlinked = FeedItem(event_id="u1", title="Board meeting", url="", source_url="https://e.org/meetings",
                        site="e.org", published=None, first_seen=SEEN)
    assert json_feed(_page(unlinked))["items"][0]["url"] == "https://e.org/meetings"
    entry = feedparser.parse(atom(_page(unlinked))).entries[0]
    assert [link.href for link in entry.links] == ["https://e.org/meetings"]
