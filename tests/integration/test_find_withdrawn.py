"""A page discovery found is read as its watch begins; a find whose first read shows no list (or only the site's
menu) is withdrawn (a stop with its reason, through the real broker into ClickHouse), a find with a list stays
watched."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from infra import queries
from infra.kafka_topics import ensure_topics
from infra.processes import serve_in_child
from schemas.links import SourceFound, SourceVerdict
from schemas.registry import encode
from schemas.sites import site_of
from tests.conftest import run_cli
from tests.integration.test_revisit_pipeline import _query_sql, _run_worker_until, _sql

pytestmark = pytest.mark.kafka
# Where the dashboard's screenshot of a find to check goes (docs/ when it is the README's), as in test_service.
SCREENSHOTS = os.environ.get("SOURCEWATCH_SCREENSHOTS")

LISTING = "<html><head><title>News</title></head><body><nav><a href='/'>Home</a> <a href='/about.html'>About</a>" \
          "</nav><main><h1>News</h1><ul class='news'>{items}</ul></main></body></html>"
ITEM = "<li class='entry'><a href='/news/{n}.html'>Council meeting number {n} on the budget</a> " \
       "<span class='date'>2026-11-{day:02d}</span><p>What the council decided at its meeting {n}.</p></li>"
ARTICLE = "<html><head><title>About us</title></head><body><main><h1>About us</h1>" + \
          "<p>We are a small association of neighbours who meet to talk about the town and its streets.</p>" * 3 + \
          "</main></body></html>"

# A calendar shown in a frame of another site: the page's only repeated structure is the site's menu.
CALENDAR = "<html><head><title>Calendar</title></head><body><header><nav><ul>" + "".join(
    f"<li><a href='/{page}.html'>{page.title()}</a></li>" for page in ("news", "about", "join", "contact")) + \
    "</ul></nav></header><main><h1>Calendar</h1><iframe src='https://calendar.example.com/embed'></iframe></main>" \
    "</body></html>"


async def _found(bootstrap: str, prefix: str, scores: dict[str, float], verdicts: dict[str, bool]) -> None:
    """Finds as discovery sends them (each with its P(source page)), and people's verdicts as the API sends them."""
    await ensure_topics(bootstrap, prefix, 4)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for url, score in scores.items():
            found = SourceFound(site=site_of(url), url=url, crawl_id="discover-test", kind="discovered", score=score,
                                clicks=1)
            await producer.send(prefix + "sources.found", encode(found), key=found.site.encode())
        for url, is_source in verdicts.items():
            verdict = SourceVerdict(site=site_of(url), url=url, is_source=is_source)
            await producer.send(prefix + "sources.verdicts", encode(verdict), key=verdict.site.encode())
        await producer.flush()
    finally:
        await producer.stop()


def test_a_find_whose_first_read_shows_no_list_is_withdrawn(pipeline_env, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "news.html").write_text(LISTING.format(items="".join(ITEM.format(n=n, day=20 - n) for n in range(1, 9))))
    (site / "about.html").write_text(ARTICLE)
    (site / "calendar.html").write_text(CALENDAR)
    with serve_in_child(["serve-sites", str(site)], pipeline_env) as homepages:
        root = next(iter(homepages.values())).rstrip("/")
        listing, article, calendar = f"{root}/news.html", f"{root}/about.html", f"{root}/calendar.html"
        # The listing and the calendar found unsure (P below 0.9), the calendar then judged by a person.
        asyncio.run(_found(pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"], pipeline_env["SOURCEWATCH_TOPIC_PREFIX"],
                           {listing: 0.62, article: 0.95, calendar: 0.7}, {calendar: False}))

        def listing_gauges() -> list[dict]:
            return _sql("SELECT DISTINCT name FROM metrics WHERE stage = 'revisit' AND labels['source'] = "
                        f"'{listing}'", pipeline_env)

        def menu_reads() -> list[dict]:
            return _sql("SELECT labels['reason'] AS reason, sum(value) AS n FROM metrics WHERE "
                        "name = 'pages_read_as_their_menu' GROUP BY reason", pipeline_env)

        _run_worker_until(pipeline_env, lambda: len(_sql("SELECT url FROM watch_stops", pipeline_env)) >= 2
                          and bool(_sql("SELECT url FROM source_verdicts", pipeline_env))
                          and bool(listing_gauges()) and bool(menu_reads()) and len(_sql(
                              "SELECT DISTINCT labels['source'] FROM metrics WHERE name = 'list_shown'",
                              pipeline_env)) >= 3, timeout=150)
        menus = menu_reads()
        def api_sources(without_list: bool = False, to_check: bool = False) -> list[dict]:
            """The sources as the API reads them (its query)."""
            return _query_sql(queries.sources_page("", 50, 0, without_list, to_check), pipeline_env)

        sources, without_list, to_check = api_sources(), api_sources(without_list=True), api_sources(to_check=True)
        verdict_sent = _verdict_from_the_dashboard(pipeline_env, listing)
        calendar_records = run_cli(["records", calendar], pipeline_env)
        stops = _sql("SELECT url, reason FROM watch_stops ORDER BY url", pipeline_env)
        gauges = {row["name"] for row in listing_gauges()}
        records = _sql(f"SELECT count() AS n FROM records WHERE source_url = '{listing}'", pipeline_env)[0]["n"]
    # The article's paragraphs repeat (records to a list finder) but are neither dated nor linked; the calendar
    # page's only records are its menu's.
    assert stops == [{"url": article, "reason": "its first read shows no dated or linked list"},
                     {"url": calendar, "reason": "its first read shows only the site's navigation"}]
    # The calendar's read is counted by why it shows no list of its own: its calendar is another document.
    assert [row["reason"] for row in menus] == ["in_a_frame"] and menus[0]["n"] >= 1
    # Each source says why its last read showed no list; the listing shows one.
    # (The article's paragraphs are records outside the navigation: a list to the extraction, withdrawn above
    # for want of dates and links.)
    assert {row["url"]: row["no_list"] for row in sources} == {listing: None, article: None, calendar: "in_a_frame"}
    assert [row["url"] for row in without_list] == [calendar]  # GET sources?without_list=true
    # Finds below the sure level are unsure; the one no person has judged yet is the one to check.
    assert {row["url"]: (bool(row["unsure"]), row["verdict"]) for row in sources} == {
        listing: (True, None), article: (False, None), calendar: (True, False)}
    assert [row["url"] for row in to_check] == [listing]  # GET sources?to_check=true
    # Its dashboard page asks for a verdict, and sends it.
    assert verdict_sent == "verdict sent: a listing"
    assert calendar_records.returncode == 0 and "its frames are other documents" in calendar_records.stdout
    # The listing read as a list and stays watched: its first read was observed (its live figures and learned
    # rhythm streamed), and its records stored.
    assert {"revisits", "known_hours"} <= gauges
    assert records >= 3


def _verdict_from_the_dashboard(env: dict[str, str], url: str) -> str:
    """Open the find's page on the dashboard in Chromium, say it is a listing; what the page then says."""
    from playwright.async_api import async_playwright

    from infra.settings import Settings
    from models.discovery.anchor_boxes import BROWSER_ARGS

    with serve_in_child(["serve", "--port", "18367"], env) as served:
        api, token = served["url"].rstrip("/"), Path(served["token_file"]).read_text().strip()
        source_id = next(row["id"] for row in _api_json(f"{api}/api/v1/sources", token)["sources"] if row["url"] == url)

        async def browse() -> str:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=str(Settings().chromium), args=BROWSER_ARGS)
                page = await browser.new_page(viewport={"width": 1200, "height": 800})
                await page.goto(f"{api}/sources/{source_id}?token={token}")
                await page.wait_for_selector("#panel-verdict:not([hidden])", timeout=30000)
                asked = await page.locator("#verdict-state").text_content()
                assert asked.startswith("to check (P 0.62)"), asked
                shots = Path(SCREENSHOTS) if SCREENSHOTS else None
                if shots:
                    await page.screenshot(path=str(shots / "dashboard-verdict.png"), full_page=True)
                await page.locator("#verdict-yes").click()
                await page.wait_for_function(
                    "document.getElementById('verdict-state').textContent.startsWith('verdict')", timeout=30000)
                said = await page.locator("#verdict-state").text_content()
                await browser.close()
                return said

        return asyncio.run(browse())


def _api_json(url: str, token: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())
