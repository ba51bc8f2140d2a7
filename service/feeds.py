"""The new items as feeds: Atom (RFC 4287, written by feedgen) and JSON Feed 1.1, overall or per source.

A feed page holds the items after a cursor, oldest first, and links the next page (RFC 5005's `next`; JSON
Feed's `next_url`), so a reader pages forward from the start without skipping or repeating an item. With
no cursor a feed shows the latest items, as feed readers expect; a source page's feed fills up with the
items its listing shows that were never new (those on the page when sourcewatch first read it), so a reader
subscribed on the day a page is watched sees the page's list at once, and each new item on top as it comes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from aiohttp import web
from feedgen.feed import FeedGenerator

from infra import queries
from schemas.base import derived_event_id
from schemas.records import publication_date
from schemas.sites import site_of
from service.api import SETTLE_MS, Api, ItemsQuery, dumps, validated
from service.cursor import START, Cursor

JSON_FEED_VERSION = "https://jsonfeed.org/version/1.1"


@dataclass(frozen=True)
class FeedItem:
    event_id: str
    title: str
    url: str
    source_url: str
    site: str
    # When the item was published, as its listing dates it (None: undated, or dated by its event alone).
    published: datetime | None
    # When sourcewatch first saw it on its source page.
    first_seen: datetime
    # When its event begins, where its listing tells.
    event_start: datetime | None = None
    # False: listed on its source page but never reported as new (there when the page was first read).
    new: bool = True


@dataclass(frozen=True)
class FeedPage:
    title: str
    # This page's address, and the next page's (None: no items after this page yet).
    self_url: str
    next_url: str | None
    items: list[FeedItem]
    updated: datetime


def _item_id(item: FeedItem) -> str:
    return f"urn:sourcewatch:item:{item.event_id}" if item.new else f"urn:sourcewatch:listed:{item.event_id}"


def _link(item: FeedItem) -> str:
    """Where a reader goes from the item: its own page, else the source page that lists it (a list of items
    without pages of their own — an Atom entry without content must link somewhere, RFC 4287 §4.1.2)."""
    return item.url or item.source_url


def _summary(item: FeedItem) -> str:
    return f"New on {item.source_url}" if item.new else f"Listed on {item.source_url} (there when first read)"


def atom(page: FeedPage) -> bytes:
    feed = FeedGenerator()
    feed.id(page.self_url)
    feed.title(page.title)
    feed.link(href=page.self_url, rel="self", type="application/atom+xml")
    if page.next_url:
        feed.link(href=page.next_url, rel="next", type="application/atom+xml")
    feed.updated(page.updated)
    feed.generator("sourcewatch")
    for item in page.items:
        entry = feed.add_entry(order="append")
        entry.id(_item_id(item))
        entry.title(item.title or _link(item))
        entry.link(href=_link(item))
        entry.author({"name": item.site})
        entry.published(item.published or item.first_seen)
        entry.updated(item.first_seen)
        entry.summary(_summary(item))
    return feed.atom_str(pretty=True)


def json_feed(page: FeedPage) -> dict:
    feed = {"version": JSON_FEED_VERSION, "title": page.title, "feed_url": page.self_url, "items": [
        {"id": _item_id(item), "url": _link(item), "title": item.title or _link(item),
         "content_text": _summary(item), "authors": [{"name": item.site}],
         "date_published": (item.published or item.first_seen).isoformat(),
         "date_modified": item.first_seen.isoformat(),
         "_sourcewatch": {"source_url": item.source_url, "new": item.new,
                          **({"event_start": item.event_start.isoformat()} if item.event_start else {})}}
        for item in page.items]}
    if page.next_url:
        feed["next_url"] = page.next_url
    return feed


class FeedRoutes:
    """`/feeds/items.{atom,json}` and `/feeds/sources/{id}.{atom,json}`: `?since=CURSOR` pages forward from
    a cursor (service.cursor; `?since=` from the first item), without it the latest `limit` items."""

    def __init__(self, api: Api) -> None:
        self.api = api

    async def feed(self, request: web.Request) -> web.Response:
        asked = validated(ItemsQuery, {k: v for k, v in request.query.items() if k != "token"})
        source_id, form = request.match_info.get("id"), request.match_info["form"]
        source_url = (await self.api.source_of(source_id))["url"] if source_id else None
        if "since" in request.query:  # empty: from the first item
            rows, last = await self.api.items_page(asked.since, asked.limit, source_url)
        else:
            rows = await self.api.reader.rows(queries.latest_items(asked.limit, SETTLE_MS, source_url))
            last = Cursor.after(rows, START)
        items = [_feed_item(row, row["event_id"], row["source_url"], row["site"]) for row in rows]
        if source_url and "since" not in request.query and len(items) < asked.limit:
            listed = await self.api.reader.rows(queries.records_of_source(source_url, asked.limit))
            items = _never_new(listed, rows, source_url)[:asked.limit - len(items)][::-1] + items
        # Links keep the request's own query (a feed reader's token included: it is served only to its holder).
        self_url = str(request.url)
        next_url = (str(request.url.update_query(since=last.encode(), limit=asked.limit))
                    if len(rows) == asked.limit else None)
        page = FeedPage(title=f"sourcewatch: items of {source_url}" if source_url else "sourcewatch: new items",
                        self_url=self_url, next_url=next_url, items=items,
                        updated=max((row["stored_at"] for row in rows), default=datetime.now(UTC)))
        if form == "atom":
            return web.Response(body=atom(page), content_type="application/atom+xml", charset="utf-8")
        return web.Response(text=dumps(json_feed(page)), content_type="application/feed+json", charset="utf-8")


def _never_new(records: list[dict], new_rows: list[dict], source_url: str) -> list[FeedItem]:
    """A source page's records (newest first sight first) that are none of its new items, as feed items with
    ids of their own (the same record, the same id)."""
    new = {(row["item_url"], row["title"], row["date"]) for row in new_rows}
    site = site_of(source_url)
    return [_feed_item(row, derived_event_id(source_url, row["item_url"], row["title"], str(row["date"])),
                       source_url, site, new=False)
            for row in records if (row["item_url"], row["title"], row["date"]) not in new]


def _feed_item(row: dict, event_id: str, source_url: str, site: str, new: bool = True) -> FeedItem:
    """A feed item of a row of `changes` or `records` (its title, link and dates)."""
    return FeedItem(event_id=event_id, title=row["title"], url=row["item_url"], source_url=source_url, site=site,
                    published=publication_date(row["date"], row["published"], row["event_start"]),
                    first_seen=row["first_seen"], event_start=row["event_start"], new=new)
