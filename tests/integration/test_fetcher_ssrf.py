"""The SSRF guard holds on every path that opens a connection, asserted at the socket: a robots.txt
that redirects off the site, a page redirect, and names that resolve into the local network."""

from __future__ import annotations

import sys

import pytest
from aiohttp import web

from agents.fetching.fetcher import FetchConfig, Fetcher
from schemas.crawl import CrawlRequest, FetchErrorKind
from tests.unit.test_address_guard import HostsFile

# Every socket.connect of this process while a test records them (Python's audit events fire inside
# the socket module, under asyncio and aiohttp, so nothing can connect around them).
_connects: list[tuple] | None = None


def _record_connects(event: str, args: tuple) -> None:
    if event == "socket.connect" and _connects is not None and isinstance(args[1], tuple):
        _connects.append(args[1][:2])


sys.addaudithook(_record_connects)


@pytest.fixture
def connects():
    global _connects
    _connects = []
    yield _connects
    _connects = None


REFUSED_TARGETS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/robots.txt",
    "http://100.64.0.1/robots.txt",
    "http://100.100.100.200/latest/meta-data/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[fd00::1]/robots.txt",
    "http://2852039166/",  # 169.254.169.254 as one decimal number
    "http://0xa.0.0.1/",  # 10.0.0.1 in hex
    "http://metadata.internal/",  # a name that resolves to a link-local address
]
HOSTS = HostsFile({"metadata.internal": ["169.254.169.254"], "site.test": ["127.0.0.1"],
                   "inside.test": ["10.0.0.1", "93.184.216.34"]})


async def _serve(robots_location: str) -> tuple[web.AppRunner, int]:
    async def robots(request: web.Request) -> web.Response:
        if request.query.get("hop") != "2":  # a same-site hop first, so the chain is followed by hand
            raise web.HTTPFound("/robots.txt?hop=2")
        raise web.HTTPFound(robots_location)

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<p>page</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, runner.addresses[-1][1]


def _config(**overrides) -> FetchConfig:
    values = dict(user_agent="sourcewatch-test/1.0", per_host_delay=0.0, connect_timeout=1.0, read_timeout=1.0,
                  total_timeout=2.0, max_retries=0, allow_loopback=True)
    return FetchConfig(**values | overrides)


async def _fetch(url: str, config: FetchConfig | None = None):
    async with Fetcher(config or _config(), resolver=HOSTS) as fetcher:
        return await fetcher.fetch(CrawlRequest(site="test", url=url, crawl_id="c"))


@pytest.mark.parametrize("target", REFUSED_TARGETS)
async def test_a_robots_redirect_to_a_non_global_address_is_never_connected(target, connects):
    runner, port = await _serve(target)
    try:
        page = await _fetch(f"http://site.test:{port}/events")
    finally:
        await runner.cleanup()
    assert page.error is FetchErrorKind.BLOCKED_ADDRESS, (page.error, page.error_detail)
    assert page.error_detail.startswith("robots.txt:")
    assert connects and set(connects) == {("127.0.0.1", port)}, connects


@pytest.mark.parametrize("target", REFUSED_TARGETS + ["http://inside.test/"])
async def test_a_page_redirect_to_a_non_global_address_is_never_connected(target, connects):
    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(target)

    async def no_robots(request: web.Request) -> web.Response:
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/robots.txt", no_robots)
    app.router.add_get("/go", redirect)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[-1][1]
    try:
        page = await _fetch(f"http://127.0.0.1:{port}/go")
    finally:
        await runner.cleanup()
    assert page.error is FetchErrorKind.BLOCKED_ADDRESS, (page.error, page.error_detail)
    assert set(connects) == {("127.0.0.1", port)}, connects


async def test_a_name_resolving_to_a_refused_address_is_blocked_not_disallowed(connects):
    runner, port = await _serve("/robots.txt?hop=3")
    try:
        page = await _fetch(f"http://site.test:{port}/events", _config(allow_loopback=False))
    finally:
        await runner.cleanup()
    assert page.error is FetchErrorKind.BLOCKED_ADDRESS, (page.error, page.error_detail)
    assert "site.test" in page.error_detail and "loopback" in page.error_detail
    assert connects == []


async def test_a_robots_redirect_on_the_same_site_is_followed(connects):
    runner, port = await _serve("/robots-real.txt")
    try:
        page = await _fetch(f"http://site.test:{port}/events")
    finally:
        await runner.cleanup()
    assert page.ok, page.error_detail
    assert set(connects) == {("127.0.0.1", port)}
