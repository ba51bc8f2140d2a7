"""Posting a new item to a webhook: its JSON body, its signature, the attempts and their backoff.

The body is the item as the data API serves it. Each post is signed as Stripe and GitHub do it:
`X-Sourcewatch-Signature: sha256=HMAC(secret, "<timestamp>." + body)` with the timestamp in
`X-Sourcewatch-Timestamp` (a receiver refuses old ones: a captured post cannot be replayed later), and the
item's event id in `X-Sourcewatch-Delivery` (the same on every attempt, so a receiver can drop a repeat).
The receiver's address passes the crawler's SSRF guard (agents.fetching.address_guard) on every attempt, and
redirects are not followed. A 2xx delivers; a 4xx other than 408/429 fails at once (the receiver refuses
it); anything else is tried again after 1, 2, 4, … s, up to the settings' attempts.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from agents.fetching.address_guard import AddressPolicy, BlockedAddress, GuardedResolver
from schemas.records import ItemDiscovered

SIGNATURE_HEADER = "X-Sourcewatch-Signature"
TIMESTAMP_HEADER = "X-Sourcewatch-Timestamp"
DELIVERY_HEADER = "X-Sourcewatch-Delivery"
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
_RETRIED_CLIENT_ERRORS = frozenset({408, 429})


def item_body(item: ItemDiscovered) -> bytes:
    return json.dumps({
        "event_id": item.event_id, "site": item.site, "source_url": item.source_url or item.page_url,
        "item_url": item.item_url, "title": item.title, "date": item.date.isoformat() if item.date else None,
        "first_seen": item.first_seen.isoformat(),
    }, ensure_ascii=False).encode()


def signature(secret: str, timestamp: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Posted:
    state: str  # "delivered" | "failed"
    attempts: int
    status: int | None
    error: str


class WebhookPoster:
    def __init__(self, secret: str, policy: AddressPolicy, attempts: int, timeout_seconds: float, user_agent: str,
                 sleep=asyncio.sleep) -> None:
        self.secret, self.policy, self.attempts = secret, policy, max(1, attempts)
        self.timeout, self.user_agent, self._sleep = timeout_seconds, user_agent, sleep
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(resolver=GuardedResolver(self.policy)),
            timeout=aiohttp.ClientTimeout(total=self.timeout), headers={"User-Agent": self.user_agent},
            cookie_jar=aiohttp.DummyCookieJar())

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def post(self, url: str, item: ItemDiscovered) -> Posted:
        body, status, error = item_body(item), None, ""
        for attempt in range(1, self.attempts + 1):
            try:
                self.policy.check_host(urlsplit(url).hostname or "")
                timestamp = str(int(time.time()))
                headers = {"Content-Type": "application/json", TIMESTAMP_HEADER: timestamp,
                           SIGNATURE_HEADER: signature(self.secret, timestamp, body), DELIVERY_HEADER: item.event_id}
                async with self._session.post(url, data=body, headers=headers, allow_redirects=False) as response:
                    status = response.status
                if 200 <= status < 300:
                    return Posted("delivered", attempt, status, "")
                error = f"HTTP {status}"
                if 400 <= status < 500 and status not in _RETRIED_CLIENT_ERRORS:
                    return Posted("failed", attempt, status, error)
            except BlockedAddress as blocked:
                return Posted("failed", attempt, None, f"refused: {blocked}")
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as failure:
                status, error = None, f"{type(failure).__name__}: {failure}"
            if attempt < self.attempts:
                await self._sleep(min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1)))
        return Posted("failed", self.attempts, status, error)


def remember_post(record: dict[str, float], key: str, now: float, keep_seconds: float) -> dict[str, float]:
    """A site's record of posts (key → Unix time posted) with this one added and those older than
    `keep_seconds` dropped: a redelivery or replay comes from the topic's retention, so a post older than
    that cannot come again, and the record stays the size of what a site publishes in that window."""
    kept = {posted: at for posted, at in record.items() if now - at <= keep_seconds}
    kept[key] = now
    return kept
