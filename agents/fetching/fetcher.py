"""Fetch one URL politely and safely, and describe the outcome as a PageFetched.

Nothing raises out of `Fetcher.fetch`: every failure becomes a PageFetched with
an error kind and a one-line detail, so the stream records it and goes on.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver
from multidict import CIMultiDictProxy

from agents.fetching.address_guard import AddressPolicy, BlockedAddress, GuardedResolver
from agents.fetching.politeness import Politeness
from agents.fetching.robots import RobotsCache
from infra.settings import Settings
from models.web.decoding import decode_body, looks_binary
from schemas.base import derived_event_id
from schemas.crawl import CrawlRequest, FetchErrorKind, PageFetched

log = logging.getLogger(__name__)

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
RETRY_STATUSES = frozenset({429, 503})
TEXT_TYPES = (
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/xml",
    "application/xml",
    "application/rss+xml",
    "application/atom+xml",
    "application/json",
    "text/calendar",
)
CHUNK = 65536
ROBOTS_MAX_REDIRECTS = 5
ROBOTS_MAX_BYTES = 512 * 1024


def body_fields(body: bytes, content_type: str) -> dict:
    """A successful response's body as PageFetched fields: its decoded text, or the error of a binary body."""
    if looks_binary(body):
        return {"error": FetchErrorKind.BINARY_BODY, "error_detail": "the body is binary, not text",
                "body_bytes": len(body)}
    text, encoding = decode_body(body, content_type)
    return {"body": text, "encoding": encoding, "body_bytes": len(body)}


class CrawlEnded(Exception):
    """The request's crawl ended by its time limit (CrawlScoped.stop_at_ms) before its host's turn came: the
    request is not fetched, and no page is made of it."""


class FetchFailure(Exception):
    def __init__(self, kind: FetchErrorKind, detail: str, status: int = 0) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.status = status


@dataclass
class RawResponse:
    status: int
    headers: CIMultiDictProxy[str] | dict[str, str]
    body: bytes = b""
    attempts: int = 1


@dataclass
class FetchConfig:
    user_agent: str
    per_host_delay: float = 1.0
    per_host_concurrency: int = 2
    global_concurrency: int = 64
    connect_timeout: float = 10.0
    read_timeout: float = 20.0
    total_timeout: float = 30.0
    max_body_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 5
    max_retries: int = 3
    retry_after_cap: float = 60.0
    robots_ttl: float = 3600.0
    honour_crawl_delay: bool = True
    allow_loopback: bool = False
    allow_private: bool = False
    backoff_base: float = 1.0
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchConfig:
        return cls(
            user_agent=settings.user_agent,
            per_host_delay=settings.per_host_delay_seconds,
            per_host_concurrency=settings.per_host_concurrency,
            global_concurrency=settings.global_concurrency,
            connect_timeout=settings.connect_timeout_seconds,
            read_timeout=settings.read_timeout_seconds,
            total_timeout=settings.total_timeout_seconds,
            max_body_bytes=settings.max_body_bytes,
            max_redirects=settings.max_redirects,
            max_retries=settings.max_retries,
            retry_after_cap=settings.retry_after_cap_seconds,
            robots_ttl=settings.robots_cache_seconds,
            honour_crawl_delay=settings.honour_crawl_delay,
            allow_loopback=settings.allow_loopback,
            allow_private=settings.allow_private,
        )


def parse_retry_after(value: str | None, default: float) -> float:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return default
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _blocked_cause(exc: BaseException) -> BlockedAddress | None:
    """The guard's refusal behind a connection error: aiohttp raises it from the resolver as it is, or
    wrapped in a ClientConnectorError."""
    if isinstance(exc, BlockedAddress):
        return exc
    if isinstance(exc, aiohttp.ClientConnectorError):
        for cause in (exc.os_error, exc.__cause__):
            if isinstance(cause, BlockedAddress):
                return cause
    return None


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


class Fetcher:
    """An aiohttp session with robots.txt, politeness, caps and the SSRF guard around it."""

    def __init__(self, config: FetchConfig, resolver: AbstractResolver | None = None) -> None:
        """`resolver` answers host names before the guard checks them (default: the system's)."""
        self.config = config
        self._resolver = resolver
        self.policy = AddressPolicy(config.allow_loopback, config.allow_private)
        self.politeness = Politeness(config.per_host_concurrency, config.per_host_delay, config.global_concurrency)
        # Per host, the requests already under way when one of its Retry-Afters was read (the shell counts them
        # as a metric and clears them): what the server sees arrive after it asked for time, and why.
        self.under_way_at_retry_after: Counter[str] = Counter()
        self.robots = RobotsCache(self._load_robots, config.user_agent, config.robots_ttl)
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Fetcher:
        return cls(FetchConfig.from_settings(settings))

    async def __aenter__(self) -> Fetcher:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        if self._session is not None:
            return
        connector = aiohttp.TCPConnector(
            resolver=GuardedResolver(self.policy, self._resolver),
            limit=self.config.global_concurrency,
            ttl_dns_cache=300,
        )
        timeout = aiohttp.ClientTimeout(
            total=self.config.total_timeout,
            connect=self.config.connect_timeout,
            sock_read=self.config.read_timeout,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers={"User-Agent": self.config.user_agent, "Accept-Encoding": "gzip, deflate"},
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("Fetcher.start() was not awaited")
        return self._session

    # The longest one fetch may take: every attempt at its full time-out plus the longest Retry-After waits.
    @property
    def deadline_seconds(self) -> float:
        attempts = self.config.max_retries + 1
        return attempts * self.config.total_timeout + self.config.max_retries * self.config.retry_after_cap + 5

    async def fetch(self, request: CrawlRequest) -> PageFetched:
        """Fetch a request's URL; every outcome, good or bad, is a PageFetched — but a request whose crawl has
        ended by the time its host's turn comes raises CrawlEnded."""
        started = time.monotonic()
        redirects: list[str] = []
        base = {
            "event_id": derived_event_id(request.event_id, "fetch"),
            "site": request.site,
            "url": request.url,
            "crawl_id": request.crawl_id,
            "depth": request.depth,
            "max_depth": request.max_depth,
            "max_pages": request.max_pages,
            "source_url": request.source_url,
            "tick_at": request.tick_at,
            "list_read_at_ms": request.list_read_at_ms,
            "list_read_before": request.list_read_before,
            "stop_at_ms": request.stop_at_ms,
            "reason": request.reason,
            "topic": request.topic,
            "redirects": redirects,
        }
        # Seconds spent waiting for the host's politeness slot (its delay, concurrency and Retry-After): ours,
        # not the site's, so not in fetch_ms.
        waited = [0.0]
        try:
            async with asyncio.timeout(self.deadline_seconds):
                page = await self._follow(request, redirects, waited)
        except FetchFailure as failure:
            page = {"final_url": redirects[-1] if redirects else request.url, "status": failure.status,
                    "error": failure.kind, "error_detail": failure.detail[:500]}
        except TimeoutError:
            page = {"final_url": redirects[-1] if redirects else request.url,
                    "error": FetchErrorKind.TIMEOUT, "error_detail": "the fetch deadline passed"}
        elapsed_ms = (time.monotonic() - started - waited[0]) * 1000
        return PageFetched(**base, **page, fetch_ms=round(elapsed_ms, 2), fetched_at_ms=int(time.time() * 1000))

    async def _follow(self, request: CrawlRequest, redirects: list[str], waited: list[float]) -> dict:
        url = request.url
        visited = {url}
        for _hop in range(self.config.max_redirects + 1):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise FetchFailure(FetchErrorKind.INVALID_URL, f"not an http(s) URL: {url[:200]}")
            self._guard(parts.hostname)
            if (held := self.politeness.held_for(parts.netloc)) > self.config.retry_after_cap:
                # Longer than a request waits for its turn: it fails now, and the host hears nothing meanwhile.
                raise FetchFailure(FetchErrorKind.RATE_LIMITED,
                                   f"the host asked for no request for {held:.0f}s more (its Retry-After)")
            rules = await self.robots.rules(_origin(url))
            if rules.refused:
                raise FetchFailure(FetchErrorKind.BLOCKED_ADDRESS, f"robots.txt: {rules.refused}")
            if not rules.allows(url, self.config.user_agent):
                raise FetchFailure(FetchErrorKind.ROBOTS_DISALLOWED,
                                   rules.unavailable or f"robots.txt disallows {parts.path or '/'}")
            delay = rules.crawl_delay(self.config.user_agent) if self.config.honour_crawl_delay else None
            response = await self._get_with_retries(url, request, delay, waited)
            location = response.headers.get("Location")
            if response.status in REDIRECT_STATUSES and location:
                url = urljoin(url, location)
                if url in visited:
                    raise FetchFailure(FetchErrorKind.REDIRECT_LOOP, f"redirect loop back to {url[:200]}", response.status)
                visited.add(url)
                redirects.append(url)
                continue
            return self._describe(url, response)
        raise FetchFailure(FetchErrorKind.TOO_MANY_REDIRECTS, f"more than {self.config.max_redirects} redirects")

    def _guard(self, host: str) -> None:
        try:
            self.policy.check_host(host)
        except BlockedAddress as blocked:
            raise FetchFailure(FetchErrorKind.BLOCKED_ADDRESS, str(blocked)) from None

    def _describe(self, url: str, response: RawResponse) -> dict:
        headers = response.headers
        content_type = headers.get("Content-Type", "")
        page: dict = {
            "final_url": url,
            "status": response.status,
            "content_type": content_type,
            "etag": headers.get("ETag"),
            "last_modified": headers.get("Last-Modified"),
            "attempts": response.attempts,
        }
        if response.status == 304:
            return page | {"not_modified": True}
        if response.status in RETRY_STATUSES:
            return page | {"error": FetchErrorKind.RATE_LIMITED,
                           "error_detail": f"HTTP {response.status} after {response.attempts} attempts"}
        if not 200 <= response.status < 300:
            return page | {"error": FetchErrorKind.HTTP_ERROR, "error_detail": f"HTTP {response.status}"}
        return page | body_fields(response.body, content_type)

    async def _get_with_retries(self, url: str, request: CrawlRequest, crawl_delay: float | None,
                                waited: list[float]) -> RawResponse:
        host = urlsplit(url).netloc
        headers = {}
        if request.etag:
            headers["If-None-Match"] = request.etag
        if request.last_modified:
            headers["If-Modified-Since"] = request.last_modified
        attempt = 0
        while True:
            attempt += 1
            asked = time.monotonic()
            async with self.politeness.slot(host, crawl_delay):
                waited[0] += time.monotonic() - asked
                if request.stopped(int(time.time() * 1000)):
                    raise CrawlEnded(request.crawl_id)
                response = await self._get_once(url, headers)
            response.attempts = attempt
            if response.status not in RETRY_STATUSES:
                return response
            wait = parse_retry_after(response.headers.get("Retry-After"), self.config.backoff_base * 2 ** (attempt - 1))
            # The host's other requests wait as asked, also when this one has run out of attempts (the soak
            # with faults saw a page asked for again 0.3 s into a storm's 1 s Retry-After).
            self._postpone(host, wait)
            if attempt > self.config.max_retries:
                return response
            if wait > self.config.retry_after_cap:
                # Too long to wait for this request; the host's others fail until then.
                raise FetchFailure(FetchErrorKind.RATE_LIMITED,
                                   f"HTTP {response.status} with Retry-After {wait:.0f}s (cap {self.config.retry_after_cap:.0f}s)",
                                   response.status)
            log.info("HTTP %s from %s: retry %d in %.1fs", response.status, host, attempt, wait)

    def _postpone(self, host: str, seconds: float, own: int = 0) -> None:
        """The host's Retry-After, kept; `own`: whether the answer's own request still holds its slot."""
        if under_way := self.politeness.postpone(host, seconds) - own:
            log.info("%s asked for %.1fs; %d of its requests already under way", host, seconds, under_way)
            self.under_way_at_retry_after[host] += under_way

    async def _get_once(self, url: str, headers: dict[str, str]) -> RawResponse:
        try:
            async with self.session.get(url, headers=headers, allow_redirects=False) as response:
                if response.status // 100 != 2:
                    return RawResponse(response.status, response.headers)
                self._check_content_type(response.headers.get("Content-Type", ""))
                body = await self._read_capped(response)
                return RawResponse(response.status, response.headers, body)
        except FetchFailure:
            raise
        except (BlockedAddress, aiohttp.ClientConnectorError) as exc:
            if (blocked := _blocked_cause(exc)) is not None:
                raise FetchFailure(FetchErrorKind.BLOCKED_ADDRESS, str(blocked)) from None
            if isinstance(exc, aiohttp.ClientConnectorDNSError):
                raise FetchFailure(FetchErrorKind.DNS, str(exc)) from None
            raise FetchFailure(FetchErrorKind.CONNECT, str(exc)) from None
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise FetchFailure(FetchErrorKind.TIMEOUT, f"timed out: {exc or 'no answer in time'}") from None
        except aiohttp.InvalidURL as exc:
            raise FetchFailure(FetchErrorKind.INVALID_URL, str(exc)) from None
        except (aiohttp.ClientError, ValueError) as exc:
            raise FetchFailure(FetchErrorKind.PROTOCOL, f"{type(exc).__name__}: {exc}") from None

    def _check_content_type(self, content_type: str) -> None:
        media = _media_type(content_type)
        if media and not media.startswith(TEXT_TYPES):
            raise FetchFailure(FetchErrorKind.UNSUPPORTED_CONTENT_TYPE, f"content type {media} is not a page", 200)

    async def _read_capped(self, response: aiohttp.ClientResponse) -> bytes:
        cap = self.config.max_body_bytes
        declared = response.content_length
        if declared is not None and declared > cap:
            raise FetchFailure(FetchErrorKind.BODY_TOO_LARGE, f"Content-Length {declared} exceeds {cap} bytes", 200)
        chunks: list[bytes] = []
        size = 0
        # Decompressed bytes are counted, so a gzip bomb stops at the cap too.
        async for chunk in response.content.iter_chunked(CHUNK):
            size += len(chunk)
            if size > cap:
                raise FetchFailure(FetchErrorKind.BODY_TOO_LARGE, f"body exceeds {cap} bytes", 200)
            chunks.append(chunk)
        return b"".join(chunks)

    async def _load_robots(self, robots_url: str) -> tuple[int, str]:
        """(status, text) of a robots.txt; status 0 when it cannot be reached. Redirects are followed by
        hand (RFC 9309: at least five), every hop through the address guard: BlockedAddress when one is
        refused, so a robots.txt cannot lead the crawler where a page could not."""
        url = robots_url
        for _hop in range(ROBOTS_MAX_REDIRECTS + 1):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                return 404, ""  # a redirect out of http(s): robots.txt unavailable, as a 4xx
            self.policy.check_host(parts.hostname)
            try:
                # A request to the host like any other: its delay and concurrency hold for it too.
                async with self.politeness.slot(parts.netloc), self.session.get(url, allow_redirects=False) \
                        as response:
                    location = response.headers.get("Location")
                    if response.status in RETRY_STATUSES:
                        # The host's next request waits as long as it asked, here as for a page (RobotsCache
                        # reads the answer as robots.txt unavailable: nothing is fetched meanwhile).
                        wait = parse_retry_after(response.headers.get("Retry-After"), self.config.backoff_base)
                        self._postpone(parts.netloc, wait, own=1)
                    if response.status in REDIRECT_STATUSES and location:
                        url = urljoin(url, location)
                        continue
                    if response.status != 200:
                        return response.status, ""
                    body = await response.content.read(ROBOTS_MAX_BYTES)
                    return 200, body.decode("utf-8", errors="replace")
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                if (blocked := _blocked_cause(exc)) is not None:
                    raise blocked from None
                log.info("robots.txt at %s unreachable: %s", robots_url, exc)
                return 0, ""
        return 404, ""  # RFC 9309: past the redirect limit, robots.txt counts as unavailable
