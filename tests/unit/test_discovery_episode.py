"""An offline discovery episode (models.discovery.episode): which clicks lay on the way to the source page."""

import asyncio

from models.discovery.episode import run_episode
from models.discovery.policies import Unlearned

PAGES = {
    "http://e.org/": '<a href="/about/">About</a> <a href="/community/">Community</a>',
    "http://e.org/about/": '<a href="/team/">Team</a>',
    "http://e.org/team/": "<p>us</p>",
    "http://e.org/community/": '<a href="/community/events/">Events</a>',
    "http://e.org/community/events/": "<ul><li>Meetup</li></ul>",
}


class Scripted(Unlearned):
    """Clicks the given URLs in order, whatever page it is on."""

    name = "scripted"

    def __init__(self, order: list[str]) -> None:
        self.order = order

    def choose(self, on_page, frontier):
        by_url = {candidate.url: candidate for candidate in frontier}
        return next((by_url[url] for url in self.order if url in by_url), None)


async def fetch(url: str) -> tuple[str, str]:
    return url, PAGES.get(url, "")


def episode(order: list[str]):
    return asyncio.run(run_episode(Scripted(order), "e.org", "http://e.org/", fetch,
                                   lambda url: url.endswith("/community/events/"), False))


def test_the_way_to_the_source_page_leaves_out_detours():
    # About and its Team page are a detour; Community is the hub the events link was found on.
    found = episode(["http://e.org/about/", "http://e.org/team/", "http://e.org/community/",
                     "http://e.org/community/events/"])
    assert found.end == "found" and found.clicks == 4 and found.way == [2, 3]
    # Straight there: both clicks are the way.
    assert episode(["http://e.org/community/", "http://e.org/community/events/"]).way == [0, 1]


def test_an_episode_that_finds_nothing_has_no_way():
    stopped = episode(["http://e.org/about/", "http://e.org/team/"])
    assert stopped.end == "stop" and stopped.clicks == 2 and stopped.way == []


def test_a_meta_refresh_is_followed_like_a_redirect_and_frames_are_links():
    pages = {"http://r.org/": '<meta http-equiv="refresh" content="0; url=/news/">',
             "http://r.org/news/": "<ul><li>Item</li></ul>",
             "http://f.org/": '<frameset><frame src="/menu.html" name="menu"></frameset>',
             "http://f.org/menu.html": '<a href="/events/">Events</a>', "http://f.org/events/": "<p>list</p>"}

    async def fetch_any(url: str) -> tuple[str, str]:
        return url, pages.get(url, "")

    def run(home: str, order: list[str], source: str):
        return asyncio.run(run_episode(Scripted(order), home, home, fetch_any, lambda url: url == source, False))

    # The homepage refreshes to the source page: reached at 0 clicks.
    refreshed = run("http://r.org/", [], "http://r.org/news/")
    assert (refreshed.end, refreshed.clicks, refreshed.reached) == ("found", 0, ["http://r.org/news/"])
    framed = run("http://f.org/", ["http://f.org/menu.html", "http://f.org/events/"], "http://f.org/events/")
    assert (framed.end, framed.clicks, framed.way) == ("found", 2, [0, 1])


def test_the_out_of_fold_threshold_makes_the_fewest_errors_and_leans_to_clicking():
    from models.discovery.episode import Episode
    from models.discovery.training import fewest_errors_threshold

    def reached_at(clicks: int, *best: float):
        return Episode("p", False, clicks, ["x"], "found", way=list(range(clicks))), list(best)

    def without_source(*best: float):
        return Episode("n", True, len(best), [], "budget"), list(best)

    # Source links score 0.9, 0.4 and 0.25; the sites without one offer best links of 0.3 then 0.1, and 0.05.
    runs = [reached_at(1, 0.9), reached_at(1, 0.4), reached_at(1, 0.25), without_source(0.3, 0.1, 0.1),
            without_source(0.05, 0.04, 0.03)]
    eta = fewest_errors_threshold(runs)
    # Below 0.25 the 0.3 site costs one click (1 error); between 0.25 and 0.3, the 0.25 site is missed too
    # (2); from 0.3 up to 0.4 the 0.25 site is missed (1). Of the tied, the lowest: all three reached.
    assert 0.1 < eta < 0.25
    # A source page two clicks deep is missed when either choice on its way falls to η: here η fits between
    # the other site's 0.15 and the second choice's 0.2.
    assert 0.15 < fewest_errors_threshold([reached_at(2, 0.8, 0.2), without_source(0.15)]) < 0.2


def test_the_frontier_stops_growing_at_its_cap():
    from models.discovery.episode import MAX_FRONTIER, open_episode, see_links
    from schemas.links import Anchor

    state = open_episode("e.org", "http://e.org/", max_clicks=10)
    many = [Anchor(url=f"http://e.org/p{n}/", same_site=True) for n in range(MAX_FRONTIER + 50)]
    on_page = see_links(state, many)
    assert len(state.frontier) == len(on_page) == MAX_FRONTIER
    assert on_page[-1].url == f"http://e.org/p{MAX_FRONTIER - 1}/"  # the first seen are kept


def test_an_episode_looking_for_two_finds_the_news_beside_the_events_not_the_events_own_pages():
    # The homepage shows the next event too, and links the events by another URL in its footer.
    pages = {"http://t.org/": '<a href="/events/">Events</a> <a href="/events/talk-1/">Talk 1</a> '
                              '<a href="/news/">News</a> <a href="/events/index.html">All events</a>',
             "http://t.org/events/": '<a href="/events/page/2/">Next</a>', "http://t.org/news/": "<p>news</p>"}

    async def fetch_two(url: str) -> tuple[str, str]:
        return url, pages.get(url.replace("index.html", ""), "")

    # A judge that would take the events' next page, their other URL and an event for source pages too.
    def is_source(url: str) -> bool:
        return url.rstrip("/").rsplit("/", 1)[-1] in ("events", "index.html", "talk-1", "news", "2")

    order = ["http://t.org/events/page/2/", "http://t.org/events/", "http://t.org/events/index.html",
             "http://t.org/events/talk-1/", "http://t.org/news/"]
    both = asyncio.run(run_episode(Scripted(order), "t.org", "http://t.org/", fetch_two, is_source, False,
                                   max_finds=2))
    assert both.reached == ["http://t.org/events/", "http://t.org/news/"] and both.clicks == 2
    assert both.end == "found" and both.way == [0] and both.found_at == [1, 2]  # the way to its first find
    first_hit = asyncio.run(run_episode(Scripted(order), "t.org", "http://t.org/", fetch_two, is_source, False))
    assert first_hit.reached == ["http://t.org/events/"] and first_hit.clicks == 1


def test_a_found_list_reached_again_by_a_redirect_is_no_second_find():
    pages = {"http://a.org/": '<a href="/events/">Events</a> <a href="/agenda/">Agenda</a>',
             "http://a.org/events/": "<p>events</p>"}

    async def redirecting(url: str) -> tuple[str, str]:
        final = url.replace("/agenda/", "/events/")  # the old name of the page
        return final, pages.get(final, "")

    order = ["http://a.org/events/", "http://a.org/agenda/"]
    episode = asyncio.run(run_episode(Scripted(order), "a.org", "http://a.org/", redirecting,
                                      lambda url: url.endswith("/events/"), False, max_finds=2))
    assert episode.reached == ["http://a.org/events/"] and episode.clicks == 2
