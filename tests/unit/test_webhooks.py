"""agents.webhooks against a real receiver on loopback: signed posts, retries with backoff, refusals."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime

import pytest
from aiohttp import web

from agents.fetching.address_guard import AddressPolicy
from agents.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, WebhookPoster, remember_post
from schemas.records import ItemDiscovered
from tests.conftest import serving_app

ITEM = ItemDiscovered(site="example.org", crawl_id="c", page_url="https://example.org/news/",
                      source_url="https://example.org/news/", item_url="https://example.org/news/1",
                      title="Élection du bureau", first_seen=datetime(2026, 11, 24, 9, tzinfo=UTC))


@pytest.fixture
async def receiver():
    """A loopback server answering each post with the next status of `answers` (then 200); `posts` records them."""
    state = {"answers": [], "posts": []}

    async def hook(request: web.Request) -> web.Response:
        state["posts"].append((dict(request.headers), await request.read()))
        return web.Response(status=state["answers"].pop(0) if state["answers"] else 200)

    app = web.Application()
    app.router.add_post("/hook", hook)
    async with serving_app(app) as url:
        state["url"] = url + "/hook"
        yield state


def _poster(waits: list[float], allow_loopback: bool = True) -> WebhookPoster:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    return WebhookPoster("s3cret", AddressPolicy(allow_loopback=allow_loopback), attempts=4, timeout_seconds=5,
                         user_agent="sourcewatch-test", sleep=sleep)


async def test_a_post_is_signed_and_carries_the_item(receiver):
    poster = _poster(waits := [])
    await poster.start()
    try:
        posted = await poster.post(receiver["url"], ITEM)
    finally:
        await poster.close()
    assert posted.state == "delivered" and posted.attempts == 1 and waits == []
    headers, body = receiver["posts"][0]
    expected = hmac.new(b"s3cret", headers[TIMESTAMP_HEADER].encode() + b"." + body, hashlib.sha256).hexdigest()
    assert headers[SIGNATURE_HEADER] == f"sha256={expected}" and headers[DELIVERY_HEADER] == ITEM.event_id
    assert json.loads(body) == {
        "event_id": ITEM.event_id, "site": "example.org", "source_url": "https://example.org/news/",
        "item_url": "https://example.org/news/1", "title": "Élection du bureau", "date": None,
        "first_seen": "2026-11-24T09:00:00+00:00"}


async def test_server_errors_are_retried_with_backoff_and_client_errors_are_not(receiver):
    poster = _poster(waits := [])
    await poster.start()
    try:
        receiver["answers"] = [503, 500, 429]
        posted = await poster.post(receiver["url"], ITEM)
        assert posted.state == "delivered" and posted.attempts == 4 and waits == [1.0, 2.0, 4.0]
        receiver["answers"] = [500, 500, 500, 500]
        posted = await poster.post(receiver["url"], ITEM)
        assert (posted.state, posted.attempts, posted.status, posted.error) == ("failed", 4, 500, "HTTP 500")
        receiver["answers"] = [410]
        waits.clear()
        posted = await poster.post(receiver["url"], ITEM)
        assert (posted.state, posted.attempts, waits) == ("failed", 1, [])
    finally:
        await poster.close()
    # The same delivery id on every attempt of one item.
    assert {headers[DELIVERY_HEADER] for headers, _ in receiver["posts"]} == {ITEM.event_id}


async def test_a_receiver_the_ssrf_guard_refuses_is_never_posted_to(receiver):
    poster = _poster([], allow_loopback=False)
    await poster.start()
    try:
        for url in (receiver["url"], "http://10.1.2.3/hook", "http://localhost:9/hook"):
            posted = await poster.post(url, ITEM)
            assert posted.state == "failed" and posted.error.startswith("refused") and posted.attempts == 1
    finally:
        await poster.close()
    assert receiver["posts"] == []


async def test_an_unreachable_receiver_fails_after_every_attempt():
    poster = _poster(waits := [])
    await poster.start()
    try:
        posted = await poster.post("http://127.0.0.1:9/hook", ITEM)  # the discard port: nothing listens
    finally:
        await poster.close()
    assert posted.state == "failed" and posted.attempts == 4 and posted.status is None and waits == [1.0, 2.0, 4.0]
    assert "ClientConnectorError" in posted.error


def test_a_sites_record_of_posts_forgets_what_can_no_longer_be_delivered_again():
    day = 86400.0
    record = remember_post({}, "item-1 https://hooks.example/a", 0.0, 7 * day)
    record = remember_post(record, "item-2 https://hooks.example/a", 3 * day, 7 * day)
    assert set(record) == {"item-1 https://hooks.example/a", "item-2 https://hooks.example/a"}
    # Eight days on, the first post is past the topics' retention: dropped; the second is kept.
    record = remember_post(record, "item-3 https://hooks.example/a", 8 * day, 7 * day)
    assert record == {"item-2 https://hooks.example/a": 3 * day, "item-3 https://hooks.example/a": 8 * day}
