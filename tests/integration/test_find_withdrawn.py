"""A page discovery found is read as its watch begins; a find whose first read shows no list (or only the site's
menu) is withdrawn (a stop with its reason, through the real broker into ClickHouse), a find with a list stays
watched."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaProducer

from infra import queries
from infra.kafka_topics import ensure_topics
from infra.processes import serve_in_child
from schemas.links import SourceFound
from schemas.registry import encode
from schemas.sites import site_of
from tests.conftest import run_cli
from tests.integration.test_revisit_pipeline import _run_worker_until, _sql

pytestmark = pytest.mark.kafka

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


async def _found(bootstrap: str, prefix: str, urls: list[str]) -> None:
    await ensure_topics(bootstrap, prefix, 4)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for url in urls:
            found = SourceFound(site=site_of(url), url=url, crawl_id="discover-test", kind="discovered", score=0.9,
                                clicks=1)
            await producer.send(prefix + "sources.found", encode(found), key=found.site.encode())
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
        asyncio.run(_found(pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"], pipeline_env["SOURCEWATCH_TOPIC_PREFIX"],
                           [listing, article, calendar]))

        def listing_gauges() -> list[dict]:
            return _sql("SELECT DISTINCT name FROM metrics WHERE stage = 'revisit' AND labels['source'] = "
                        f"'{listing}'", pipeline_env)

        def menu_reads() -> list[dict]:
            return _sql("SELECT labels['reason'] AS reason, sum(value) AS n FROM metrics WHERE "
                        "name = 'pages_read_as_their_menu' GROUP BY reason", pipeline_env)

        _run_worker_until(pipeline_env, lambda: len(_sql("SELECT url FROM watch_stops", pipeline_env)) >= 2
                          and bool(listing_gauges()) and bool(menu_reads()) and len(_sql(
                              "SELECT DISTINCT labels['source'] FROM metrics WHERE name = 'list_shown'",
                              pipeline_env)) >= 3, timeout=150)
        menus = menu_reads()
        def api_sources(without_list: bool) -> list[dict]:
            """The sources as the API reads them (its query, its parameters written in)."""
            query = queries.sources_page("", 50, 0, without_list)
            return _sql(query.sql.replace("{search:String}", "''").replace("{limit:UInt32}", "50")
                        .replace("{offset:UInt32}", "0"), pipeline_env)

        sources, without_list = api_sources(False), api_sources(True)
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
    assert calendar_records.returncode == 0 and "its frames are other documents" in calendar_records.stdout
    # The listing read as a list and stays watched: its first read was observed (its live figures and learned
    # rhythm streamed), and its records stored.
    assert {"revisits", "known_hours"} <= gauges
    assert records >= 3
