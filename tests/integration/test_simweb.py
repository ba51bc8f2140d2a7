"""The simulated web over real HTTP: pagination styles reachable, time drives content, faults on demand."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from urllib.parse import urljoin

import aiohttp
import lxml.html
import pytest

from infra.simweb.generator import PAGINATION_STYLES
from infra.simweb.server import SimWeb


@pytest.fixture
async def simweb():
    web = SimWeb(12, seed=11, speed=3600.0 * 24 * 30)  # a simulated month per real second
    await web.start()
    yield web
    await web.stop()


@pytest.fixture
async def still_web():
    """A web whose clock barely moves, so listings stay put while they are walked."""
    web = SimWeb(12, seed=11, speed=1.0)
    await web.start()
    yield web
    await web.stop()


async def _get(session: aiohttp.ClientSession, url: str, **kwargs) -> tuple[int, str, aiohttp.ClientResponse]:
    async with session.get(url, allow_redirects=False, **kwargs) as response:
        return response.status, await response.text(errors="replace"), response


def _pagination_targets(html: str, base: str) -> set[str]:
    """Every listing page a page links to: plain hrefs, and data-href of script-driven links."""
    root = lxml.html.fromstring(html)
    targets = set()
    for element in root.iter("a", "button"):
        for attribute in ("href", "data-href"):
            value = element.get(attribute) or ""
            if value and not value.startswith("#") and ("page" in value or "offset" in value or "p=" in value
                                                        or "size" in value):
                targets.add(urljoin(base, value))
    return targets


async def test_every_pagination_style_reaches_every_listing_page_and_item(still_web):
    truth_sources = []
    async with aiohttp.ClientSession() as session:
        truth = await (await session.get(still_web.control_url + "/__truth__")).json()
        for site in truth.values():
            truth_sources.extend(site["source_pages"])
        assert {s["pagination_style"] for s in truth_sources} == set(PAGINATION_STYLES)
        for source in truth_sources:
            seen, queue, items = set(), [source["url"]], set()
            while queue:
                url = queue.pop()
                if url in seen:
                    continue
                seen.add(url)
                status, html, _ = await _get(session, url)
                assert status == 200, url
                root = lxml.html.fromstring(html)
                items |= {urljoin(url, a.get("href")) for a in root.iter("a") if "item-" in (a.get("href") or "")}
                queue.extend(_pagination_targets(html, url) - seen)
            assert set(source["pages"]) <= seen, source["pagination_style"]
            visible = {item["url"] for item in source["items"] if item["visible"]}
            assert visible <= items, source["pagination_style"]


async def test_listings_gain_items_as_the_clock_runs_and_validators_follow(simweb):
    site = next(s for s in simweb.sites if s.spec.sources and s.spec.sources[0].items[-1].hours > 24 * 30)
    source = site.spec.sources[0]
    url = site.origin + source.path
    async with aiohttp.ClientSession() as session:
        for _ in range(3):
            _, first, response = await _get(session, url)
            etag = response.headers["ETag"]
            status, _, again = await _get(session, url, headers={"If-None-Match": etag})
            if status == 304:
                break
            # The clock runs fast: an item published between the two requests is a new page, with a new ETag.
            assert status == 200 and again.headers["ETag"] != etag
        assert status == 304
        before = len(site.visible(source))
        deadline = time.monotonic() + 20
        while len(site.visible(source)) == before and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert len(site.visible(source)) > before
        status, second, response = await _get(session, url, headers={"If-None-Match": etag})
        assert status == 200 and response.headers["ETag"] != etag and second != first


async def test_faults_on_demand(simweb):
    site = simweb.sites[1]
    home = site.origin + "/"
    async with aiohttp.ClientSession() as session:
        async def set_faults(faults: dict) -> None:
            async with session.post(simweb.control_url + "/__faults__", json=faults) as response:
                assert response.status == 200

        await set_faults({site.spec.name: {"status": 429}})
        status, _, response = await _get(session, home)
        assert status == 429 and response.headers["Retry-After"] == "1"
        status, _, _ = await _get(session, simweb.sites[2].origin + "/")
        assert status == 200  # other sites unaffected

        await set_faults({site.spec.name: {"redirect_loop": True}})
        status, _, response = await _get(session, home)
        assert status == 302 and response.headers["Location"] == "/loop-a/"

        await set_faults({site.spec.name: {"traps": True}})
        _, html, _ = await _get(session, home)
        assert "/calendar/?month=0" in html and "?sid=" in html
        _, calendar, _ = await _get(session, site.origin + "/calendar/?month=41")
        assert "/calendar/?month=42" in calendar

        await set_faults({site.spec.name: {"broken_encoding": True}})
        async with session.get(home) as response:
            raw = await response.read()
        assert "utf-8" in response.headers["Content-Type"]
        with pytest.raises(UnicodeDecodeError):
            raw.decode("utf-8")

        await set_faults({site.spec.name: {"huge": True}})
        async with session.get(home) as response:
            assert len(await response.read()) > 8 * 1024 * 1024

        await set_faults({site.spec.name: {"latency_ms": 300}})
        started = time.monotonic()
        await _get(session, home)
        assert time.monotonic() - started >= 0.3

        await set_faults({"*": {"hang": True}})
        with pytest.raises(asyncio.TimeoutError):
            await _get(session, simweb.sites[3].origin + "/", timeout=aiohttp.ClientTimeout(total=0.5))


async def test_the_control_tells_when_each_source_page_was_served_on_both_clocks(simweb):
    site = next(s for s in simweb.sites if s.spec.sources)
    url = site.origin + site.spec.sources[0].path
    async with aiohttp.ClientSession() as session:
        before = time.time()
        for _ in range(2):
            status, _, _ = await _get(session, url)
            assert status == 200
        await _get(session, url + "?page=2")  # a further page of the list: not the source page's serve
        await _get(session, site.origin + "/about/")
        served = await (await session.get(simweb.control_url + "/__served__")).json()
    assert set(served) == {s.origin + source.path for s in simweb.sites for source in s.spec.sources}
    serves = served[url]
    assert len(serves) == 2
    (first_real, first_simulated), (second_real, second_simulated) = serves
    assert before <= first_real <= second_real <= time.time()
    # A simulated month per real second: the later serve is later on the simulated clock too.
    assert datetime.fromisoformat(first_simulated) < datetime.fromisoformat(second_simulated)
