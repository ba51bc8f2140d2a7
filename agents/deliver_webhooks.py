"""Stage `webhooks`: webhooks.set → each watched page's webhook (a table; watch.stopped drops it); changes.detected → a signed post
of every new item to the settings' webhooks and its page's own (agents.webhooks), each outcome to
webhooks.deliveries.

An item posted (or given up on) is remembered per webhook in the `webhooks-posted-by-site` table (per site,
each post's time), so a redelivered item (a restarted worker, a replay) is not posted twice; a worker stopped
between a post and that record may post it once more — the receiver drops it by its delivery id. A post is
remembered for `webhook_posted_keep_hours` (the topics' retention: no older item can come again), so the table
does not grow with every item ever posted. Both tables are keyed in the site's partition, as both topics are.
"""

from __future__ import annotations

import logging
import time

import faust

from agents.fetching.address_guard import AddressPolicy
from agents.webhooks import WebhookPoster, remember_post
from infra.api_access import webhook_secret
from schemas.base import derived_event_id
from schemas.webhooks import WebhookDelivery
from streams import metrics
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.topics import send, topic

log = logging.getLogger(__name__)
_TABLE_OPTIONS = dict(partitions=settings.topic_partitions,
                      schema=faust.Schema(key_type=str, key_serializer="json", value_serializer="json"))
page_webhooks = app.Table("webhooks-of-pages", **_TABLE_OPTIONS)
# site → {"<item event id> <webhook url>": Unix time posted}
posted = app.Table("webhooks-posted-by-site", **_TABLE_OPTIONS)


@app.agent(topic("webhooks.set"))
async def set_webhooks(stream):
    async for event in stream.events():
        async with kept_if_failed("set_webhooks", "webhooks.set", [event]):
            for webhook in await decode_events("webhooks.set", [event]):
                if webhook.url:
                    page_webhooks[webhook.source_url] = webhook.url
                else:
                    page_webhooks.pop(webhook.source_url, None)


@app.agent(topic("watch.stopped"))
async def drop_webhooks(stream):
    async for event in stream.events():
        async with kept_if_failed("drop_webhooks", "watch.stopped", [event]):
            for stopped in await decode_events("watch.stopped", [event]):
                page_webhooks.pop(stopped.url, None)


@app.agent(topic("changes.detected"))
async def deliver_webhooks(stream):
    poster = WebhookPoster(webhook_secret(settings), AddressPolicy(settings.allow_loopback, settings.allow_private),
                           settings.webhook_attempts, settings.webhook_timeout_seconds, settings.user_agent)
    keep_seconds = settings.webhook_posted_keep_hours * 3600
    await poster.start()
    try:
        async for event in stream.events():
            async with kept_if_failed("deliver_webhooks", "changes.detected", [event]):
                for item in await decode_events("changes.detected", [event]):
                    source = item.source_url or item.page_url
                    for url in dict.fromkeys([*settings.webhook_urls, *filter(None, [page_webhooks.get(source)])]):
                        key = f"{item.event_id} {url}"
                        if key in posted.get(item.site, {}):
                            metrics.count("webhook_posts_repeated", "webhooks")
                            continue
                        outcome = await poster.post(url, item)
                        posted[item.site] = remember_post(posted.get(item.site, {}), key, time.time(), keep_seconds)
                        if outcome.state == "failed":
                            log.warning("webhook %s: item %s not delivered after %d attempts (%s)", url,
                                        item.item_url, outcome.attempts, outcome.error)
                        metrics.count("webhook_posts", "webhooks", state=outcome.state)
                        await send("webhooks.deliveries", WebhookDelivery(
                            event_id=derived_event_id(item.event_id, "webhook", url), site=item.site,
                            item_event_id=item.event_id, source_url=source, url=url,
                            state=outcome.state, attempts=outcome.attempts, status=outcome.status,
                            error=outcome.error))
    finally:
        await poster.close()
