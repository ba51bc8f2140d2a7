"""The data API, `/api/v1/…`: sources, their records, new items by cursor, and watching a page.

Inputs are validated by pydantic models and refused with a 400 that says what is wrong; every read is one of
infra.queries (fixed SQL, bound parameters). The OpenAPI document (`/api/v1/openapi.json`) is built from the
same models.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, HttpUrl, ValidationError

from agents.fetching.address_guard import AddressPolicy, BlockedAddress
from infra import queries
from infra.kafka_broker import bootstrap_address
from infra.kafka_topics import send_messages
from jobs.crawl import CrawlPlan, seed_requests
from jobs.watch import watch_requests
from schemas.base import Message
from schemas.discovery import DISCOVER_REASON
from schemas.links import SiteVerdict, SourceVerdict, WatchStopped
from schemas.sites import site_of
from schemas.webhooks import WebhookSet
from service.cursor import START, BadCursor, Cursor
from service.reader import Reader

# Items are served once stored this long (service.cursor).
SETTLE_MS = 3000
MAX_LIMIT = 1000


class Page(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: int = Field(50, ge=1, le=MAX_LIMIT)
    offset: int = Field(0, ge=0)


class SourcesQuery(Page):
    search: str = Field("", max_length=300, description="part of the source page's URL")
    without_list: bool = Field(False, description="only the pages whose last read showed no list (see `no_list`)")
    to_check: bool = Field(False, description="only the unsure finds no person has given a verdict on yet (see "
                                              "`unsure`): the ones to check")


class ItemsQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    since: str | None = Field(None, description="the `next` cursor of an earlier answer; none: from the start")
    limit: int = Field(100, ge=1, le=MAX_LIMIT)


class WatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: HttpUrl
    kind: Literal["listing", "homepage"] = Field(
        "listing", description="listing: watch this page; homepage: discover the site's listing page first")
    webhook: HttpUrl | None = Field(None, description="a listing's own webhook: each of its new items is posted "
                                                      "there, signed (X-Sourcewatch-Signature)")


class StopRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: HttpUrl


class VerdictRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    is_source: bool = Field(description="whether the page really is a listing of news or events")


class SiteVerdictRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    homepage: HttpUrl = Field(description="the homepage discovery ran from")
    source_url: HttpUrl | None = Field(description="the site's listing page of news or events (then also watched), "
                                                   "or null: the site has none")


class Source(BaseModel):
    id: str
    url: str
    site: str
    kind: str
    score: float
    unsure: bool = Field(description="found by discovery at a P(source page) below SOURCEWATCH_FIND_SURE_AT (0.9): "
                                     "a find to check (POST its verdict)")
    verdict: bool | None = Field(None, description="a person's latest verdict: whether it really is a listing")
    found_at: datetime | None
    crawl_id: str
    watching: bool
    stopped_because: str | None = Field(None, description="why it is no longer watched: \"requested\" (a person), "
                                        "or why the revisit stage withdrew the find")
    no_list: str | None = Field(None, description="why its last read showed no list of items: no_document, "
                                "too_deep, in_a_frame, menu_only, no_text or no_repeats, or feed_unread where "
                                "the feed that holds its list was not read; null where it showed one")
    records: int | None
    last_record_seen: datetime | None
    new_items: int | None
    last_new_item: datetime | None
    timeliness: float | None
    friendliness: float | None
    delay_h: float | None
    fetches_per_item: float | None
    updates_per_day: float | None
    peaks: str | None


class Item(BaseModel):
    event_id: str
    source_url: str
    site: str
    item_url: str
    title: str
    date: datetime | None = Field(description="the first date its listing gives, whatever its kind")
    published: datetime | None = Field(None, description="when it was published, where its listing tells")
    event_start: datetime | None = Field(None, description="when its event begins, where its listing tells")
    first_seen: datetime = Field(description="when sourcewatch first saw it listed")
    stored_at: datetime


class ItemsPage(BaseModel):
    items: list[Item]
    next: str = Field(description="pass as `since` for the items after these")


def refusal(status: type[web.HTTPException], reason: str) -> web.HTTPException:
    """An HTTP error whose JSON body says why."""
    return status(text=json.dumps({"error": reason}), content_type="application/json")


def validated(model: type[BaseModel], values) -> BaseModel:
    try:
        return model.model_validate(dict(values))
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors())
        raise refusal(web.HTTPBadRequest, problems) from None


def dumps(value) -> str:
    """JSON with datetimes as ISO 8601."""
    return json.dumps(value, default=lambda o: o.isoformat() if isinstance(o, datetime) else str(o))


def json_response(body) -> web.Response:
    return web.json_response(body, dumps=dumps)


async def _body(request: web.Request) -> dict:
    try:
        body = await request.json()
    except ValueError:
        raise refusal(web.HTTPBadRequest, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise refusal(web.HTTPBadRequest, "the body must be a JSON object")
    return body


class Api:
    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        settings = reader.settings
        self.addresses = AddressPolicy(settings.allow_loopback, settings.allow_private)
        self.sure_at = settings.find_sure_at

    async def source_of(self, source_id: str) -> dict:
        rows = await self.reader.rows(queries.source_by_id(source_id, self.sure_at))
        if not rows:
            raise refusal(web.HTTPNotFound, f"no source {source_id!r}")
        return rows[0]

    async def sources(self, request: web.Request) -> web.Response:
        asked = validated(SourcesQuery, request.query)
        rows = await self.reader.rows(queries.sources_page(asked.search, asked.limit, asked.offset,
                                                           asked.without_list, asked.to_check, self.sure_at))
        total = (await self.reader.rows(queries.sources_count(asked.search, asked.without_list, asked.to_check,
                                                              self.sure_at)))[0]
        return json_response({"total": next(iter(total.values())), "sources": rows})

    async def source(self, request: web.Request) -> web.Response:
        return json_response(await self.source_of(request.match_info["id"]))

    async def records(self, request: web.Request) -> web.Response:
        asked = validated(Page, request.query)
        source = await self.source_of(request.match_info["id"])
        rows = await self.reader.rows(queries.source_records_page(source["url"], asked.limit, asked.offset))
        return json_response({"source": source["url"], "records": rows})

    async def items_page(self, since: str | None, limit: int, source_url: str | None) -> tuple[list[dict], Cursor]:
        """The items after `since` (an encoded cursor, None: from the start), and the cursor after them."""
        try:
            after = Cursor.decode(since) if since else START
        except BadCursor as error:
            raise refusal(web.HTTPBadRequest, str(error)) from None
        rows = await self.reader.rows(queries.items_after(after.stored_at, after.event_id, limit, SETTLE_MS,
                                                          source_url))
        return rows, Cursor.after(rows, after)

    async def items(self, request: web.Request) -> web.Response:
        asked = validated(ItemsQuery, request.query)
        source_url = (await self.source_of(request.match_info["id"]))["url"] if "id" in request.match_info else None
        rows, last = await self.items_page(asked.since, asked.limit, source_url)
        return json_response({"items": rows, "next": last.encode()})

    async def figures(self, request: web.Request) -> web.Response:
        source = await self.source_of(request.match_info["id"])
        return json_response({"source": source["url"], "figures": await self.reader.rows(
            queries.source_figures_history(source["url"]))})

    async def gave_up(self, request: web.Request) -> web.Response:
        """`GET /api/v1/discovery/gave-up`: the sites discovery gave up on that no person has judged yet."""
        asked = validated(Page, request.query)
        rows = await self.reader.rows(queries.gave_up_page(asked.limit, asked.offset))
        total = (await self.reader.rows(queries.gave_up_count()))[0]
        return json_response({"total": next(iter(total.values())), "sites": rows})

    async def expansions(self, request: web.Request) -> web.Response:
        asked = validated(Page, request.query)
        return json_response({"rounds": await self.reader.rows(queries.expansion_rounds_page(asked.limit,
                                                                                             asked.offset))})

    async def watch(self, request: web.Request) -> web.Response:
        asked = validated(WatchRequest, await _body(request))
        url = str(asked.url)
        self._check_addresses(asked.url, asked.webhook)
        settings = self.reader.settings
        if asked.kind == "listing":
            messages = [("sources.found", found) for found in watch_requests([url])]
            if asked.webhook is not None:
                found = messages[0][1]
                messages.append(("webhooks.set", WebhookSet(site=found.site, source_url=found.url,
                                                            url=str(asked.webhook))))
        elif asked.webhook is not None:
            raise refusal(web.HTTPBadRequest, "a webhook is set on a listing page: add it once discovery found it")
        else:
            clicks = settings.discovery_max_clicks
            plan = CrawlPlan(seeds=[url], max_pages=clicks + 1, max_depth=clicks, reason=DISCOVER_REASON)
            messages = [("crawl.requests", request_) for request_ in seed_requests(plan, f"api-{uuid.uuid4().hex}")]
        await self._send(messages)
        return web.json_response({"url": url, "kind": asked.kind, "queued": [
            {"topic": topic, "crawl_id": getattr(message, "crawl_id", None)} for topic, message in messages]},
            status=202)

    async def stop_watching(self, request: web.Request) -> web.Response:
        """`DELETE /api/v1/watch {url}`: the page's revisits and its webhook stop (its stored data stays)."""
        asked = validated(StopRequest, await _body(request))
        (found,) = watch_requests([str(asked.url)])
        await self._send([("watch.stopped", WatchStopped(site=found.site, url=found.url))])
        return web.json_response({"url": found.url, "queued": ["watch.stopped"]}, status=202)

    async def verdict(self, request: web.Request) -> web.Response:
        """`POST /api/v1/sources/{id}/verdict {is_source}`: a person's label on a found page, kept for retraining."""
        asked = validated(VerdictRequest, await _body(request))
        source = await self.source_of(request.match_info["id"])
        await self._send([("sources.verdicts", SourceVerdict(site=source["site"], url=source["url"],
                                                             is_source=asked.is_source))])
        return web.json_response({"url": source["url"], "is_source": asked.is_source}, status=202)

    async def site_verdict(self, request: web.Request) -> web.Response:
        """`POST /api/v1/sites/verdict {homepage, source_url}`: a person's word on a site discovery ran on — its
        source page is here (a page discovery gave up before or missed: then watched, and a verdict on the page
        too), or it has none — kept for retraining the stopping model and the classifier."""
        asked = validated(SiteVerdictRequest, await _body(request))
        self._check_addresses(asked.homepage, asked.source_url)
        homepage = str(asked.homepage)
        site = site_of(homepage)
        source_url = str(asked.source_url) if asked.source_url is not None else None
        if source_url is not None and site_of(source_url) != site:
            raise refusal(web.HTTPBadRequest, f"{source_url} is not on {site}, the homepage's site")
        messages: list[tuple[str, Message]] = [
            ("sites.verdicts", SiteVerdict(site=site, homepage=homepage, source_url=source_url))]
        if source_url is not None:
            messages.append(("sources.verdicts", SourceVerdict(site=site, url=source_url, is_source=True)))
            messages += [("sources.found", found) for found in watch_requests([source_url])]
        await self._send(messages)
        return web.json_response({"homepage": homepage, "source_url": source_url,
                                  "queued": [topic for topic, _ in messages]}, status=202)

    def _check_addresses(self, *addresses: HttpUrl | None) -> None:
        """Refused (400) where an address given is one the settings do not let the workers reach."""
        try:
            for address in addresses:
                if address is not None:
                    self.addresses.check_host(address.host or "")
        except BlockedAddress as error:
            raise refusal(web.HTTPBadRequest, str(error)) from None

    async def _send(self, messages) -> None:
        settings = self.reader.settings
        await send_messages(bootstrap_address(settings), settings.topic_prefix, settings.topic_partitions, messages)
