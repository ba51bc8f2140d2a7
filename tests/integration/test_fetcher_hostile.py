"""The fetcher against a hostile local server: every case ends within its cap with the right error kind."""

from __future__ import annotations

import asyncio
import gzip
import time
from datetime import UTC, datetime

import pytest
from aiohttp import web

from agents.fetching.fetcher import CrawlEnded, FetchConfig, Fetcher
from schemas.base import Message
from schemas.crawl import CrawlRequest, CrawlScoped, FetchErrorKind, PageFetched

PAGE_ZH = "<html><body><h1>活動訊息：市民講座與親子活動報名開始，歡迎踴躍參加</h1><p>最新消息與公告</p></body></html>" * 3
BOMB = gzip.compress(b"\0" * (100 * 1024 * 1024), compresslevel=9)


async def trickle(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    await response.prepare(request)
    for _ in range(120):
        await response.write(b"<p>")
        await asyncio.sleep(0.5)
    return response


async def huge(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    await response.prepare(request)
    chunk = b"<p>" + b"x" * 65533
    for _ in range(50 * 16):  # 50 MB, no Content-Length
        await response.write(chunk)
    return response


def _redirect(location: str) -> web.Response:
    return web.Response(status=302, headers={"Location": location})


def hostile_app() -> web.Application:
    hits: dict[str, int] = {}

    def once_limited(request: web.Request) -> web.Response:
        hits["limited"] = hits.get("limited", 0) + 1
        if hits["limited"] == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(text="<p>finally</p>", content_type="text/html")

    def cached(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(text="<p>v1</p>", content_type="text/html", headers={"ETag": '"v1"'})

    routes = {
        "/robots.txt": lambda r: web.Response(text="User-agent: *\nDisallow: /private\n"),
        "/ok": lambda r: web.Response(text="<a href='/x'>x</a>", content_type="text/html"),
        "/trickle": trickle,
        "/loop/a": lambda r: _redirect("/loop/b"),
        "/loop/b": lambda r: _redirect("/loop/a"),
        "/huge": huge,
        "/huge-declared": lambda r: web.Response(body=b"x" * (6 * 1024 * 1024), content_type="text/html"),
        "/bomb": lambda r: web.Response(body=BOMB, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}),
        "/binary": lambda r: web.Response(body=bytes(range(256)) * 100, content_type="application/octet-stream"),
        "/binary-as-html": lambda r: web.Response(body=b"\x89PNG\r\n\x1a\n" + bytes(4096), content_type="text/html"),
        "/big5": lambda r: web.Response(body=PAGE_ZH.encode("big5"), headers={"Content-Type": "text/html"}),
        "/gbk": lambda r: web.Response(body=PAGE_ZH.encode("gbk"), headers={"Content-Type": "text/html"}),
        "/limited-once": once_limited,
        "/storm": lambda r: web.Response(status=503, headers={"Retry-After": "0"}),
        "/retry-later": lambda r: web.Response(status=429, headers={"Retry-After": "3600"}),
        "/to-private": lambda r: _redirect("http://10.255.255.1/"),
        "/private/secret": lambda r: web.Response(text="secret", content_type="text/html"),
        "/cached": cached,
        "/missing": lambda r: web.Response(status=404),
    }

    async def dispatch(request: web.Request) -> web.StreamResponse:
        handler = routes.get(request.path)
        if handler is None:
            if request.path.startswith("/chain/"):
                return _redirect(f"/chain/{int(request.path.rsplit('/', 1)[1]) + 1}")
            raise web.HTTPNotFound()
        result = handler(request)
        return await result if asyncio.iscoroutine(result) else result

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", dispatch)
    return app


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[-1][1]}"


@pytest.fixture(scope="module")
async def hostile():
    runner, base = await _serve(hostile_app())
    yield base
    await runner.cleanup()


def _config(**overrides) -> FetchConfig:
    values = dict(user_agent="sourcewatch-test/1.0", per_host_delay=0.0, per_host_concurrency=4,
                  connect_timeout=1.0, read_timeout=1.5, total_timeout=2.0, max_body_bytes=5 * 1024 * 1024,
                  max_retries=2, retry_after_cap=5.0, backoff_base=0.1, allow_loopback=True)
    values.update(overrides)
    return FetchConfig(**values)


async def _fetch(url: str, config: FetchConfig | None = None, **request_fields):
    async with Fetcher(config or _config()) as fetcher:
        started = time.monotonic()
        page = await fetcher.fetch(CrawlRequest(site="test", url=url, crawl_id="c", **request_fields))
        return page, time.monotonic() - started


@pytest.mark.parametrize(
    ("path", "kind", "status", "cap_seconds"),
    [
        ("/ok", FetchErrorKind.NONE, 200, 2),
        ("/trickle", FetchErrorKind.TIMEOUT, 0, 4),
        ("/loop/a", FetchErrorKind.REDIRECT_LOOP, 302, 2),
        ("/chain/0", FetchErrorKind.TOO_MANY_REDIRECTS, 0, 3),
        ("/huge", FetchErrorKind.BODY_TOO_LARGE, 200, 4),
        ("/huge-declared", FetchErrorKind.BODY_TOO_LARGE, 200, 2),
        ("/bomb", FetchErrorKind.BODY_TOO_LARGE, 200, 4),
        ("/binary", FetchErrorKind.UNSUPPORTED_CONTENT_TYPE, 200, 2),
        ("/binary-as-html", FetchErrorKind.BINARY_BODY, 200, 2),
        ("/storm", FetchErrorKind.RATE_LIMITED, 503, 3),
        ("/retry-later", FetchErrorKind.RATE_LIMITED, 429, 2),
        ("/private/secret", FetchErrorKind.ROBOTS_DISALLOWED, 0, 2),
        ("/to-private", FetchErrorKind.BLOCKED_ADDRESS, 0, 2),
        ("/missing", FetchErrorKind.HTTP_ERROR, 404, 2),
    ],
)
async def test_each_hostile_case_ends_in_time_with_its_error_kind(hostile, path, kind, status, cap_seconds):
    page, seconds = await _fetch(hostile + path)
    assert page.error is kind, page.error_detail
    assert page.status == status
    assert seconds < cap_seconds
    assert (page.error is FetchErrorKind.NONE) == page.ok


@pytest.mark.parametrize("path", ["/big5", "/gbk"])
async def test_undeclared_chinese_charsets_yield_text(hostile, path):
    page, _ = await _fetch(hostile + path)
    assert page.ok and page.body == PAGE_ZH


async def test_429_with_retry_after_is_retried(hostile):
    page, seconds = await _fetch(hostile + "/limited-once")
    assert page.ok and page.attempts == 2 and "finally" in page.body
    assert seconds >= 1.0


async def _fetch_each(handler, paths: list[str], **config) -> list[PageFetched]:
    """One fetcher fetching each path in turn from a server that answers every path with `handler`."""
    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner, base = await _serve(app)
    try:
        async with Fetcher(_config(**config)) as fetcher:
            return [await fetcher.fetch(CrawlRequest(site="test", url=base + path, crawl_id="c")) for path in paths]
    finally:
        await runner.cleanup()


async def test_a_retry_after_beyond_the_cap_fails_the_hosts_next_requests_without_asking_it():
    arrivals: list[str] = []

    async def record(request: web.Request) -> web.Response:
        arrivals.append(request.path)
        if request.path == "/busy":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        return web.Response(text="<p>page</p>", content_type="text/html")

    started = time.monotonic()
    busy, other = await _fetch_each(record, ["/busy", "/other"])
    assert busy.error is FetchErrorKind.RATE_LIMITED and "Retry-After 3600s" in busy.error_detail
    # The host asked for an hour: its next page fails at once, and the server hears nothing more.
    assert other.error is FetchErrorKind.RATE_LIMITED and "asked for no request" in other.error_detail
    assert arrivals == ["/robots.txt", "/busy"] and time.monotonic() - started < 1


async def test_the_last_attempts_retry_after_holds_the_hosts_next_request():
    arrivals: list[tuple[str, float]] = []

    async def record(request: web.Request) -> web.Response:
        arrivals.append((request.path, time.monotonic()))
        if request.path == "/busy":
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(text="<p>page</p>", content_type="text/html")

    busy, other = await _fetch_each(record, ["/busy", "/other"], max_retries=0)
    # Out of attempts, the page fails as rate-limited ...
    assert busy.error is FetchErrorKind.RATE_LIMITED and busy.attempts == 1
    # ... and the host's next request still waits the second it asked for.
    assert other.ok and [path for path, _ in arrivals] == ["/robots.txt", "/busy", "/other"]
    assert arrivals[2][1] - arrivals[1][1] >= 0.95


async def test_conditional_get_records_not_modified(hostile):
    first, _ = await _fetch(hostile + "/cached")
    again, _ = await _fetch(hostile + "/cached", etag=first.etag)
    assert first.ok and first.etag == '"v1"'
    assert again.status == 304 and again.not_modified and again.error is FetchErrorKind.NONE


async def test_a_page_carries_its_requests_crawl_scope(hostile):
    # Every field a crawl's messages share (CrawlScoped) comes back on the page: a revisit's tick and its list's
    # last read, a read-on's first-page read, the crawl's budget — what the stages after the fetch go by.
    scope = {"depth": 2, "max_depth": 3, "max_pages": 40, "source_url": hostile + "/list",
             "tick_at": datetime(2026, 5, 2, 23, tzinfo=UTC), "list_read_at_ms": 1_780_000_000_000,
             "list_read_before": datetime(2026, 5, 1, 12, tzinfo=UTC), "stop_at_ms": 4_000_000_000_000}
    assert set(scope) | {"crawl_id"} == set(CrawlScoped.model_fields) - set(Message.model_fields)
    page, _ = await _fetch(hostile + "/ok", **scope)
    assert page.ok and {name: getattr(page, name) for name in scope} == scope and page.crawl_id == "c"


async def test_loopback_is_refused_unless_allowed(hostile):
    page, _ = await _fetch(hostile + "/ok", _config(allow_loopback=False))
    assert page.error is FetchErrorKind.BLOCKED_ADDRESS
    named, _ = await _fetch(hostile.replace("127.0.0.1", "localhost") + "/ok", _config(allow_loopback=False))
    assert named.error is FetchErrorKind.BLOCKED_ADDRESS


async def test_non_http_urls_are_invalid():
    page, _ = await _fetch("ftp://example.org/file")
    assert page.error is FetchErrorKind.INVALID_URL


async def test_robots_crawl_delay_spaces_requests():
    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nCrawl-delay: 1\n")

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<p>page</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/{n}", page)
    runner, base = await _serve(app)
    try:
        async with Fetcher(_config()) as fetcher:
            started = time.monotonic()
            pages = await asyncio.gather(*(
                fetcher.fetch(CrawlRequest(site="t", url=f"{base}/{i}", crawl_id="c")) for i in range(3)))
            seconds = time.monotonic() - started
    finally:
        await runner.cleanup()
    assert all(page.ok for page in pages)
    assert seconds >= 2.0  # three requests, one second apart


async def test_robots_txt_is_a_request_to_its_host_like_any_other():
    arrivals: list[tuple[str, float]] = []

    async def record(request: web.Request) -> web.Response:
        arrivals.append((request.path, time.monotonic()))
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        return web.Response(text="<p>page</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", record)
    runner, base = await _serve(app)
    try:
        page, _ = await _fetch(base + "/first", _config(per_host_delay=0.5))
    finally:
        await runner.cleanup()
    assert page.ok and [path for path, _ in arrivals] == ["/robots.txt", "/first"]
    assert arrivals[1][1] - arrivals[0][1] >= 0.45  # the page waited the host's delay after robots.txt


async def test_a_robots_txt_answered_429_holds_the_host_for_its_retry_after(monkeypatch):
    # Read again at once once unavailable, so that only the Retry-After spaces the two robots.txt requests.
    monkeypatch.setattr("agents.fetching.robots.UNREACHABLE_RETRY_SECONDS", 0.0)
    arrivals: list[tuple[str, float]] = []

    async def record(request: web.Request) -> web.Response:
        arrivals.append((request.path, time.monotonic()))
        if request.path == "/robots.txt" and len(arrivals) == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        return web.Response(text="<p>page</p>", content_type="text/html")

    refused, page = await _fetch_each(record, ["/first", "/first"])
    # A 429 is no "robots.txt missing" (which allows all): nothing is fetched while it cannot be read ...
    assert refused.error is FetchErrorKind.ROBOTS_DISALLOWED and "HTTP 429" in refused.error_detail
    # ... and the host is not asked again before its Retry-After has passed.
    assert page.ok and [path for path, _ in arrivals] == ["/robots.txt", "/robots.txt", "/first"]
    assert arrivals[1][1] - arrivals[0][1] >= 0.95


async def test_a_pages_fetch_time_is_the_sites_not_the_wait_for_its_politeness_slot(hostile):
    # Two pages of one host, one at a time, two seconds apart: the second waits for its slot, which is ours.
    async with Fetcher(_config(per_host_delay=2.0, per_host_concurrency=1)) as fetcher:
        started = time.monotonic()
        pages = await asyncio.gather(*(fetcher.fetch(CrawlRequest(site="test", url=f"{hostile}/ok", crawl_id="c"))
                                       for _ in range(2)))
        elapsed = time.monotonic() - started
    assert elapsed >= 2.0 and all(page.ok for page in pages)
    assert max(page.fetch_ms for page in pages) < 1000


async def test_a_request_whose_crawl_ends_while_it_waits_for_its_host_is_not_fetched(hostile):
    # One request at a time, 2 s apart (robots.txt's first): the second page's turn comes seconds after its
    # crawl's end, which had not come when it was asked for; the first page's crawl has no end.
    async with Fetcher(_config(per_host_concurrency=1, per_host_delay=2.0)) as fetcher:
        ending = CrawlRequest(site="test", url=f"{hostile}/ok?2", crawl_id="c",
                              stop_at_ms=int((time.time() + 1.0) * 1000))
        first, second = await asyncio.gather(
            fetcher.fetch(CrawlRequest(site="test", url=f"{hostile}/ok?1", crawl_id="d")), fetcher.fetch(ending),
            return_exceptions=True)
    assert first.ok and isinstance(second, CrawlEnded)
