"""A list a page keeps in its own feed: the RSS or Atom feed a page that shows no list of its own advertises,
read as its records.

Static sites (Hugo, Jekyll, WordPress categories) give each section a feed of its items — `/events/index.xml`
beside `/events/`, `/category/news/feed/` — and advertise it in the page's head (`<link rel="alternate"
type="application/rss+xml">`). Where the page itself shows only its menu (an events page whose items its
script draws, a list of one item) or nothing, that feed is its list. Only a feed under the page's own path is
the page's: a site-wide feed beside a section's page lists the whole site's posts, not the section's.

Each entry becomes a record: its link, title, date (published, else updated: the feed tells a publication's
time, often to the second) and summary's text. A page's comments feed (WordPress advertises one under every
page's path) links its entries into the page itself: those are no items, and such a feed reads as none.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

import feedparser

from models.records.extraction import ExtractedRecord
from models.web.dom import fragment_text, normalize_space, parse_html

_FEED_TYPES = ("application/rss+xml", "application/atom+xml")
# A comments feed's title as WordPress writes it in its languages ("Events Comments Feed", "Kommentar-Feed",
# "Flux des commentaires", "Feed de los comentarios", "Reacties feed", …): it is fetched on every read otherwise,
# to find no item (feed_records tells by its entries too).
_COMMENTS = re.compile(r"comment|kommentar|reacties|коммент|评论|評論|コメント|댓글", re.IGNORECASE)
SNIPPET_CHARS = 300
MAX_ENTRIES = 300


class FeedUnreadable(ValueError):
    """The body is no RSS or Atom feed with entries."""


def own_feeds(html: str, page_url: str) -> list[str]:
    """The feeds the page advertises that lie under its own path (its section's), in the page's order."""
    root = parse_html(html)
    if root is None:
        return []
    page = urlsplit(page_url)
    directory = page.path[:page.path.rfind("/") + 1] or "/"
    feeds = []
    for link in root.iter("link"):
        if "alternate" not in (link.get("rel") or "").lower().split() or \
                (link.get("type") or "").strip().lower() not in _FEED_TYPES or not link.get("href") or \
                _COMMENTS.search(link.get("title") or ""):
            continue
        feed = urlsplit(urljoin(page_url, link.get("href").strip()))
        if feed.scheme in ("http", "https") and feed.netloc == page.netloc and feed.path.startswith(directory) \
                and feed.geturl() not in feeds:
            feeds.append(feed.geturl())
    return feeds


def feed_records(feed: str, feed_url: str, page_url: str = "") -> list[ExtractedRecord]:
    """The records of an RSS or Atom feed, in its order, at most MAX_ENTRIES, but for entries that link into the
    page at `page_url` itself (a page's comments feed: `…/events/feed/` on WordPress, its entries `#comment-12`
    on the page — what people said about the page, not the items it lists). Raises FeedUnreadable."""
    try:
        # As bytes: feedparser takes a string that looks like an address for one to fetch. Its loose parser, which
        # takes over from the XML one on a malformed feed, fails on some markup with errors of its own.
        parsed = feedparser.parse(feed.replace("\x00", "").encode("utf-8", "replace"))
    except (KeyError, ValueError, TypeError, AttributeError, IndexError) as error:
        raise FeedUnreadable(f"{type(error).__name__}: {error}") from None
    if not parsed.entries:
        reason = f"{type(parsed.bozo_exception).__name__}: {parsed.bozo_exception}" if parsed.bozo else "no entries"
        raise FeedUnreadable(reason)
    records: list[ExtractedRecord] = []
    for entry in parsed.entries[:MAX_ENTRIES]:
        try:
            title = normalize_space(str(entry.get("title", "")))
            link = urljoin(feed_url, str(entry.get("link", ""))) if entry.get("link") else ""
            # Read as stored: feedparser's own lookup answers a missing `updated` with `published`, warning that
            # it will stop.
            moment = dict.get(entry, "published_parsed") or dict.get(entry, "updated_parsed")
            date = datetime.fromtimestamp(calendar.timegm(moment), UTC) if moment else None
            snippet = fragment_text(str(entry.get("summary", "")))[:SNIPPET_CHARS]
        except (KeyError, ValueError, TypeError, OverflowError):
            continue  # one broken entry does not cost the others
        if (title or link) and not (page_url and link.split("#", 1)[0] == page_url.split("#", 1)[0]):
            records.append(ExtractedRecord(item_url=link, title=title, date=date, snippet=snippet,
                                           position=len(records), text=normalize_space(f"{title} {snippet}"),
                                           published=date))
    if not records:
        raise FeedUnreadable("no readable entries")
    return records
