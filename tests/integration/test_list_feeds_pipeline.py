"""Pages whose list a feed holds — a Google-style calendar in a frame, a section's RSS feed behind a page that
shows only its menu: the feed is fetched and read as the page's records through the real broker into
ClickHouse, the find is kept (its first read shows the feed's items, not only the menu), and an item added to
the feed later reaches `changes` once."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest

from infra import queries
from infra.processes import serve_in_child
from tests.conftest import ROOT, run_cli
from tests.integration.test_find_withdrawn import _found
from tests.integration.test_revisit_pipeline import _always_fetch_model, _query_sql, _sql

pytestmark = pytest.mark.kafka

# The club's events page: its menu and the calendar's frame, as Google's embed code writes it.
EVENTS_PAGE = "<html><head><title>Events</title></head><body><header><nav><ul>" + "".join(
    f"<li><a href='/{page}.html'>{page.title()}</a></li>" for page in ("news", "about", "join", "contact")) + \
    "</ul></nav></header><main><h1>Events</h1><iframe src='/calendar/embed?height=600&amp;wkst=1&amp;" \
    "src=club%40example.org&amp;src=en.german%23holiday%40group.v.calendar.google.com&amp;ctz=Europe%2FBerlin' " \
    "style='border: 0' width='800' height='600'></iframe></main></body></html>"
CALENDAR_ID = "club@example.org"
# The club's news page draws its items by script; its section's feed, advertised in its head, holds them.
NEWS_PAGE = "<html><head><title>News</title><link rel='alternate' type='application/rss+xml' href='/news/index.xml'>" \
            "</head><body><header><nav><ul>" + "".join(
                f"<li><a href='/{page}.html'>{page.title()}</a></li>" for page in ("news", "about", "join", "contact")) \
            + "</ul></nav></header><main><h1>News</h1><div id='news'></div></main></body></html>"


def _event(uid: str, title: str, start: datetime, created: datetime) -> str:
    return (f"BEGIN:VEVENT\nDTSTART:{start:%Y%m%dT%H%M%SZ}\nDTEND:{start + timedelta(hours=2):%Y%m%dT%H%M%SZ}\n"
            f"DTSTAMP:{created:%Y%m%dT%H%M%SZ}\nUID:{uid}@google.com\nCREATED:{created:%Y%m%dT%H%M%SZ}\n"
            f"LOCATION:Clubhouse\\, Lindenstraße 3\nSUMMARY:{title}\nEND:VEVENT\n")


def _feed(events: list[str]) -> str:
    return ("BEGIN:VCALENDAR\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\nVERSION:2.0\nMETHOD:PUBLISH\n"
            "X-WR-CALNAME:Club\n" + "".join(events) + "END:VCALENDAR\n")


def _rss(items: list[tuple[str, datetime]]) -> str:
    return ("<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel><title>News on Club</title>" + "".join(
        f"<item><title>{title}</title><link>/news/{title.lower().replace(' ', '-')}/</link>"
        f"<pubDate>{moment:%a, %d %b %Y %H:%M:%S} +0000</pubDate></item>" for title, moment in items)
        + "</channel></rss>")


def test_lists_kept_in_feeds_are_read_as_the_pages_lists(pipeline_env, tmp_path):
    now = datetime.now(UTC).replace(microsecond=0)
    events = [_event(f"e{n}", f"Club evening {n}", now + timedelta(days=3 * n), now - timedelta(days=10 - n))
              for n in range(1, 4)]
    site = tmp_path / "site"
    (site / "calendar/ical" / CALENDAR_ID / "public").mkdir(parents=True)
    feed = site / "calendar/ical" / CALENDAR_ID / "public/basic.ics"
    feed.write_text(_feed(events))
    (site / "events.html").write_text(EVENTS_PAGE)
    (site / "news").mkdir()
    (site / "news/index.html").write_text(NEWS_PAGE)
    news = [(f"Club news {n}", now - timedelta(days=n, hours=3)) for n in range(1, 4)]
    (site / "news/index.xml").write_text(_rss(news))
    # A page that names a feed it does not have.
    (site / "talks").mkdir()
    (site / "talks/index.html").write_text(NEWS_PAGE.replace("/news/index.xml", "/talks/index.xml"))
    for name in ("news", "about", "join", "contact"):
        (site / f"{name}.html").write_text(f"<html><body><h1>{name}</h1><p>About the club.</p></body></html>")
    # Every tick a revisit, a simulated hour every 4 s: time for a read's calendar to come in before the next.
    env = pipeline_env | {"SOURCEWATCH_REVISIT_MODEL": str(_always_fetch_model(tmp_path / "model.pt")),
                          "SOURCEWATCH_REVISIT_CLOCK_SPEED": "900", "SOURCEWATCH_REVISIT_CLOCK_ORIGIN": now.isoformat(),
                          "SOURCEWATCH_REVISIT_CLOCK_ORIGIN_WALL": str(time.time())}
    with serve_in_child(["serve-sites", str(site)], env) as homepages:
        root = next(iter(homepages.values())).rstrip("/")
        page, news_page, talks_page = root + "/events.html", root + "/news/", root + "/talks/"
        asyncio.run(_found(env["SOURCEWATCH_KAFKA_BOOTSTRAP"], env["SOURCEWATCH_TOPIC_PREFIX"],
                           dict.fromkeys([page, news_page, talks_page], 0.95), {}))
        worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "warning"], env=env,
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        def records(source: str = page) -> list[dict]:
            return _sql(f"SELECT DISTINCT title, item_url, place, toString(date) AS date FROM records "
                        f"WHERE source_url = '{source}' ORDER BY date", env)

        def changes() -> list[dict]:
            return _sql("SELECT source_url, title, count() AS n FROM changes GROUP BY source_url, title "
                        "ORDER BY title", env)

        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and (len(records()) < 3 or len(records(news_page)) < 3):
                time.sleep(1)
            first, first_news = records(), records(news_page)
            # The first reads have seeded the feeds' items; the club adds an event and a news item.
            feed.write_text(_feed([*events, _event("e9", "Summer party", now + timedelta(days=40), now)]))
            (site / "news/index.xml").write_text(_rss([("Club news 0", now), *news]))
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and len(changes()) < 2:
                time.sleep(1)
            time.sleep(9)  # two more revisits: nothing more is reported
            found = changes()
        finally:
            worker.send_signal(signal.SIGTERM)
            output, _ = worker.communicate(timeout=60)
        assert worker.returncode == 0, output[-3000:]
        shown = run_cli(["records", page], env)
        sources = _query_sql(queries.sources_page("", 50, 0), env)
        stops = _sql("SELECT url, reason FROM watch_stops", env)
        unread = _sql("SELECT labels['reason'] AS reason, sum(value) AS n FROM metrics "
                      "WHERE name = 'list_feeds_unread' GROUP BY reason", env)
        fetched = _sql("SELECT DISTINCT url, status FROM fetches WHERE reason = 'list_feed' ORDER BY url", env)
    # The page itself shows only its menu; its calendar's events are its records, linked to the page.
    assert [row["title"] for row in first] == ["Club evening 1", "Club evening 2", "Club evening 3"], output[-3000:]
    assert all(row["item_url"].startswith(page + "#event-e") and row["place"] == "Clubhouse, Lindenstraße 3"
               for row in first)
    # Fetched through the fetch stage from the feed the frame names (the holiday calendar beside it left out).
    assert fetched == [{"url": f"{root}/calendar/ical/club%40example.org/public/basic.ics", "status": 200},
                       {"url": f"{root}/news/index.xml", "status": 200},
                       {"url": f"{root}/talks/index.xml", "status": 404}]
    # The news page's items are its feed's, linked to their pages and dated to the second.
    assert [(row["title"], row["item_url"]) for row in first_news] == [
        (f"Club news {n}", f"{root}/news/club-news-{n}/") for n in (3, 2, 1)]
    # Discovery's finds are kept: their first reads showed a list, the feeds'. The page whose feed is missing
    # (its menu is not its list) shows none, is withdrawn, and says why.
    assert stops == [{"url": talks_page, "reason": "its first read shows no list"}]
    assert {row["url"]: row["no_list"] for row in sources} == {page: None, news_page: None,
                                                                talks_page: "feed_unread"}
    assert [row["reason"] for row in unread] == ["http_error"] and unread[0]["n"] >= 1
    # The items added later are reported once each, the others never (the first reads seeded them).
    assert found == [{"source_url": news_page, "title": "Club news 0", "n": 1},
                     {"source_url": page, "title": "Summer party", "n": 1}]
    assert shown.returncode == 0 and "Summer party" in shown.stdout and "Club evening 2" in shown.stdout
