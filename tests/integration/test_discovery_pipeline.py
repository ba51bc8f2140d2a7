"""`sourcewatch discover` through the real broker: the shipped agent and classifier find a served site's event
page, hand it on (sources.found, read as a listing, watched), and stop on a site without one; every episode
with its end reason and cost in ClickHouse."""

from __future__ import annotations

import json

import pytest

from agents.item_times import FIRST_READ_ITEMS
from infra.settings import Settings
from infra.site_server import serving_sites
from tests.conftest import cli_json, run_cli
from tests.integration.test_discovery_eval import _site

pytestmark = pytest.mark.kafka

NAV = ('<nav><ul><li><a href="/">Home</a></li><li><a href="/about/">About us</a></li><li><a href="/team/">Our '
       'team</a></li><li><a href="/events/">Events</a></li><li><a href="/contact/">Contact</a></li></ul></nav>')
EVENTS = "".join(f'<li><a href="/events/meetup-{n}.html">Monthly meetup #{n}: talks and demos</a> '
                 f'<span class="date">2026-{n:02d}-14</span> <p>Two talks, then pizza. All welcome.</p></li>'
                 for n in range(1, 10))


def _club_pages() -> dict[str, str]:
    pages = {
        "index.html": f"{NAV}<h1>Riverside Python Club</h1><p>We are a volunteer-run club of Python users.</p>",
        "about/index.html": f"{NAV}<h1>About us</h1><p>Founded in 2012 by a few friends.</p>",
        "team/index.html": f"{NAV}<h1>Our team</h1><ul><li>Ana, chair</li><li>Bo, treasurer</li></ul>",
        "contact/index.html": f"{NAV}<h1>Contact</h1><p>Write to hello at the club.</p>",
        "events/index.html": f"{NAV}<h1>Upcoming events</h1><ul class=\"events\">{EVENTS}</ul>",
    }
    pages |= {f"events/meetup-{n}.html": f"{NAV}<h1>Monthly meetup #{n}</h1><p>Talks.</p>" for n in range(1, 10)}
    return pages


def _society_pages() -> dict[str, str]:
    """A site with an events page and a news page, both in its menu."""
    nav = NAV.replace('<li><a href="/contact/">', '<li><a href="/news/">News</a></li><li><a href="/contact/">')
    news = "".join(f'<li><a href="/news/post-{n}.html">Club news #{n}: new members and a new venue</a> '
                   f'<span class="date">2026-{n:02d}-02</span> <p>What happened this month.</p></li>'
                   for n in range(1, 10))
    pages = {path: body.replace(NAV, nav) for path, body in _club_pages().items()}
    pages["news/index.html"] = f"{nav}<h1>Latest news</h1><ul class=\"news\">{news}</ul>"
    pages |= {f"news/post-{n}.html": f"{nav}<h1>Club news #{n}</h1><p>News.</p>" for n in range(1, 10)}
    return pages


def _sql(query: str, env: dict[str, str]) -> list[dict]:
    result = run_cli(["sql", query, "--json"], env, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_discover_finds_the_event_page_through_kafka_and_hands_it_on(pipeline_env, tmp_path):
    club = _site(tmp_path, "club", _club_pages(), ["events/index.html"])
    shop_nav = '<nav><a href="/">Home</a> <a href="/products/">Products</a> <a href="/cart/">Cart</a></nav>'
    shop = _site(tmp_path, "shop", {"index.html": f"{shop_nav}<h1>Garden tools</h1>",
                                    "products/index.html": f"{shop_nav}<p>Spades, rakes.</p>",
                                    "cart/index.html": f"{shop_nav}<p>Your cart is empty.</p>"}, [])
    # Bad input: a JavaScript shell (no links to read), and a homepage that only refreshes to the real one.
    shell = _site(tmp_path, "shell", {"index.html": "<script>document.write('<a href=/events/>x</a>')</script>"}, [])
    moved = _site(tmp_path, "moved", {"index.html": '<meta http-equiv="refresh" content="0; url=/home/">',
                                      **{f"home/{path}" if path == "index.html" else path: body
                                         for path, body in _club_pages().items()}}, ["events/index.html"])
    with serving_sites([club, shop, shell, moved], env=pipeline_env) as homepages:
        result = cli_json(["discover", *homepages.values(), "--max-clicks", "3"], pipeline_env)

    episodes = {episode["homepage"].rstrip("/"): episode for episode in result["episodes"]}
    assert set(episodes) == {url.rstrip("/") for url in homepages.values()}
    assert (episodes[homepages["shell"].rstrip("/")]["end"], episodes[homepages["shell"].rstrip("/")]["reason"]) == (
        "stop", "no link left")
    refreshed = episodes[homepages["moved"].rstrip("/")]
    # Following the refresh is the page's redirect, not a click: one click, from /home/ to its events.
    assert refreshed["end"] == "found" and refreshed["clicks"] == 1
    assert refreshed["found"] == [homepages["moved"].rstrip("/") + "/events/"]
    found = episodes[homepages["club"].rstrip("/")]
    events_url = homepages["club"].rstrip("/") + "/events/"
    assert found["end"] == "found" and found["found"] == [events_url] and 1 <= found["clicks"] <= 3
    assert found["unit_cost"] == found["clicks"] and found["harvest_rate"] == pytest.approx(1 / found["clicks"])
    none = episodes[homepages["shop"].rstrip("/")]
    assert none["end"] in ("stop", "budget") and none["found"] == [] and none["clicks"] <= 3

    # Handed on: in sources (from sources.found), read as a listing (its records), watched for revisits.
    sources = _sql("SELECT url, kind, clicks FROM sources ORDER BY url", pipeline_env)
    assert sources == sorted([{"url": events_url, "kind": "discovered", "clicks": found["clicks"]},
                              {"url": refreshed["found"][0], "kind": "discovered", "clicks": 1}],
                             key=lambda row: row["url"])
    # Each find's P(source page), as the stream judged it (the command marks one below the sure level).
    scores = _sql("SELECT url, max(score) AS score FROM sources GROUP BY url", pipeline_env)
    assert result["find_scores"] == {row["url"]: pytest.approx(row["score"], abs=1e-4) for row in scores}
    assert all(0.5 <= score <= 1 for score in result["find_scores"].values())
    records = _sql(f"SELECT count() AS n FROM records WHERE source_url = '{events_url}'", pipeline_env)
    assert records[0]["n"] >= 5
    assert result["records_read"] >= 5
    # Every page of both episodes had its anchors scored by the agent; the breadth-first frontier saw only the
    # source page's links, and planned nothing from them (no fetch but the episodes' and the source page's).
    scored = _sql("SELECT policy, uniqExact(page_url) AS pages, countIf(score IS NULL) AS unscored FROM links "
                  "GROUP BY policy ORDER BY policy", pipeline_env)
    # (The shell has no links; the moved site's homepage only refreshes — followed, not scored — and its
    # refresh page and events page have theirs.)
    assert [(row["policy"], row["pages"]) for row in scored] == [
        ("bfs", 2), ("rl", 1 + found["clicks"] + 1 + none["clicks"] + 1 + refreshed["clicks"])]
    assert scored[1]["unscored"] == 0
    fetched = {row["reason"]: row["n"] for row in _sql("SELECT reason, count() AS n FROM fetches GROUP BY reason "
                                                        "ORDER BY reason", pipeline_env)}
    # Each watched page is also read at once by the revisit stage (its first read, a `revisit` fetch), if the
    # worker got to it before the command ended.
    assert fetched.pop("revisit", 0) <= 2
    # That first read fetches its newest items' pages for their times (the test site dates items by day alone).
    assert fetched.pop("item_time", 0) <= 2 * FIRST_READ_ITEMS
    assert fetched == {"discover": 4 + found["clicks"] + none["clicks"] + refreshed["clicks"] + 1, "source": 2}


def test_discover_refuses_what_is_not_a_homepage_url(pipeline_env):
    refused = run_cli(["discover", "example.org/events"], pipeline_env)
    assert refused.returncode == 2 and "not an absolute http(s) URL" in refused.stderr
    assert run_cli(["discover"], pipeline_env).returncode == 2


def test_the_stream_clicks_what_the_offline_evaluation_clicks(pipeline_env, tmp_path):
    """One episode core: the same served sites through Kafka and through the offline evaluation's episode (the
    shipped agent, the shipped classifier judging where an episode ends, as the stream does, looking for as many
    source pages as the stream's setting) click the same pages in the same order and end the same way."""
    import asyncio

    import aiohttp

    from models.discovery.agent import DEFAULT_AGENT, RLCrawler
    from models.discovery.classifier import DEFAULT_CLASSIFIER, SourcePageClassifier
    from models.discovery.episode import run_episode
    from models.discovery.finetuning import PageJudge

    club = _site(tmp_path, "club", _club_pages(), ["events/index.html"])
    nav = '<nav><a href="/">Home</a> <a href="/products/">Products</a> <a href="/cart/">Cart</a></nav>'
    shop = _site(tmp_path, "shop", {"index.html": f"{nav}<h1>Garden tools</h1>",
                                    "products/index.html": f"{nav}<p>Spades, rakes.</p>",
                                    "cart/index.html": f"{nav}<p>Your cart is empty.</p>"}, [])
    moved = _site(tmp_path, "moved", {"index.html": '<meta http-equiv="refresh" content="0; url=/home/">',
                                      **{f"home/{path}" if path == "index.html" else path: body
                                         for path, body in _club_pages().items()}}, ["events/index.html"])

    async def offline(homepages: dict[str, str]) -> dict[str, tuple[list[str], str]]:
        agent, classifier = RLCrawler.load(DEFAULT_AGENT), SourcePageClassifier.load(DEFAULT_CLASSIFIER)
        async with aiohttp.ClientSession() as session:
            async def fetch(url: str) -> tuple[str, str]:
                async with session.get(url) as response:
                    return str(response.url), await response.text() if response.status == 200 else ""

            judge = PageJudge(classifier, fetch, prior=lambda: agent.last_hit_score)
            episodes = {}
            for name, homepage in homepages.items():
                episode = await run_episode(agent, name, homepage, judge.fetch, judge, False, max_steps=3,
                                            max_finds=finds)
                episodes[name] = (episode.clicked, episode.end)
            return episodes

    society = _site(tmp_path, "society", _society_pages(), ["events/index.html", "news/index.html"])
    # The stream's setting (pipeline_env sets none: its default).
    finds = Settings.model_fields["discovery_finds"].default
    with serving_sites([club, shop, moved, society], env=pipeline_env) as homepages:
        streamed = cli_json(["discover", *homepages.values(), "--max-clicks", "3"], pipeline_env)
        evaluated = asyncio.run(offline(homepages))
    for name, homepage in homepages.items():
        origin = homepage.rstrip("/")
        clicks = _sql(f"SELECT url FROM fetches WHERE crawl_id = '{streamed['crawl_id']}' AND reason = 'discover' "
                      f"AND depth > 0 AND startsWith(url, '{origin}') ORDER BY fetched_at", pipeline_env)
        [episode] = [e for e in streamed["episodes"] if e["homepage"].rstrip("/") == origin]
        assert ([row["url"] for row in clicks], episode["end"]) == evaluated[name], name
    # Looking for two, the episode on the site with an events and a news page found both.
    society_home = homepages["society"].rstrip("/")
    [society_episode] = [e for e in streamed["episodes"] if e["homepage"].rstrip("/") == society_home]
    assert sorted(society_episode["found"]) == [society_home + "/events/", society_home + "/news/"], society_episode
