"""robots.txt per origin, parsed by protego and cached.

RFC 9309: a 4xx robots.txt means no rules; a 5xx or an unreachable one means
"disallow everything" until it can be read again (we retry it after a short
while rather than caching the refusal for the full TTL). A 429 is the server
asking for time, not a missing file: read as a 5xx, as Google's crawler does (a
storm's 429 on robots.txt once meant no rules for an hour). A robots.txt whose
address (or a redirect's) the guard refuses makes the origin refused, with the
guard's reason, for the same short while.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from protego import Protego

from agents.fetching.address_guard import BlockedAddress

# Fetches the text of a robots.txt URL: (status, text); status 0 when unreachable; BlockedAddress when the
# address guard refuses it.
RobotsLoader = Callable[[str], Awaitable[tuple[int, str]]]

UNREACHABLE_RETRY_SECONDS = 60.0
TOO_MANY_REQUESTS = 429


@dataclass
class RobotsRules:
    parser: Protego | None
    disallow_all: bool
    expires_at: float
    # Why the address guard refused the robots.txt fetch; empty when it did not.
    refused: str = ""
    # Why nothing may be fetched while the robots.txt cannot be read (a 5xx, a 429, no answer); empty otherwise.
    unavailable: str = ""

    def allows(self, url: str, user_agent: str) -> bool:
        if self.disallow_all:
            return False
        return self.parser is None or self.parser.can_fetch(url, user_agent)

    def crawl_delay(self, user_agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(user_agent)
        return float(delay) if delay is not None else None


class RobotsCache:
    def __init__(self, loader: RobotsLoader, user_agent: str, ttl_seconds: float = 3600.0) -> None:
        self._loader = loader
        self._user_agent = user_agent
        self._ttl = ttl_seconds
        self._rules: dict[str, RobotsRules] = {}
        self._loading: dict[str, asyncio.Future[RobotsRules]] = {}

    async def rules(self, origin: str) -> RobotsRules:
        """The rules of an origin (scheme://host:port), loading robots.txt at most once at a time."""
        cached = self._rules.get(origin)
        if cached is not None and cached.expires_at > time.monotonic():
            return cached
        pending = self._loading.get(origin)
        if pending is not None:
            return await pending
        future: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._loading[origin] = future
        try:
            rules = await self._load(origin)
            self._rules[origin] = rules
            future.set_result(rules)
            return rules
        finally:
            del self._loading[origin]

    async def _load(self, origin: str) -> RobotsRules:
        try:
            status, text = await self._loader(f"{origin}/robots.txt")
        except BlockedAddress as blocked:
            return RobotsRules(None, True, time.monotonic() + UNREACHABLE_RETRY_SECONDS, refused=str(blocked))
        now = time.monotonic()
        if 200 <= status < 300:
            return RobotsRules(Protego.parse(text), False, now + self._ttl)
        if 400 <= status < 500 and status != TOO_MANY_REQUESTS:
            return RobotsRules(None, False, now + self._ttl)
        why = f"robots.txt unavailable (HTTP {status})" if status else "robots.txt unreachable"
        return RobotsRules(None, True, now + UNREACHABLE_RETRY_SECONDS,
                           unavailable=f"{why}: nothing fetched until it is read")
