"""The Q-learning topical crawl (models.discovery.topical) and its harvest figures
(models.discovery.topical_evaluation) on a small site served from a dict."""

import asyncio

from models.discovery.episode import run_episode
from models.discovery.policies import BreadthFirst, Candidate
from models.discovery.topical import TopicalCrawler, TopicalState, is_relevant, observe, rank, topic_of
from models.discovery.topical_evaluation import Crawled, Crawling, harvest

ITEMS = [f"http://e.org/events/item-{n}.html" for n in range(6)]
NAV = '<nav><a href="/about/">About</a> <a href="/shop/">Shop</a> <a href="/events/">Events</a></nav>'
PAGES = {
    "http://e.org/": NAV + '<div><a href="/team/">Team</a> <a href="/press-kit/">Kit</a></div>',
    "http://e.org/about/": NAV + "<p>Who we are</p>",
    "http://e.org/shop/": NAV + '<a href="/shop/a/">A</a> <a href="/shop/b/">B</a>',
    "http://e.org/team/": NAV + "<p>Us</p>",
    "http://e.org/press-kit/": NAV + "<p>Logos</p>",
    "http://e.org/events/": NAV + "<main><ul>" + "".join(
        f'<li><a href="{url}">Concert {n}</a></li>' for n, url in enumerate(ITEMS)) + "</ul></main>",
    **{url: NAV + f"<main><h1>Concert {n}</h1><p>An evening of music</p></main>" for n, url in enumerate(ITEMS)},
}
RELEVANT = {"http://e.org/events/", *ITEMS}


async def fetch(url: str) -> tuple[str, str]:
    return url, PAGES.get(url, "")


def crawl(policy, budget: int) -> list[str]:
    crawling = Crawling(policy, never_stop=True)
    asyncio.run(run_episode(crawling, "e.org", "http://e.org/", fetch, lambda url: False, False,
                            max_steps=budget - 1))
    return crawling.fetched


def test_the_listing_is_fetched_first_and_its_items_before_the_rest_of_the_menu():
    fetched = crawl(TopicalCrawler(), 8)
    # The keyword link first; then the map has learned that links first seen on a high-reward page lead to
    # pages worth fetching, so the list's items come before the unread menu pages.
    assert fetched[1] == "http://e.org/events/"
    assert sum(url in RELEVANT for url in fetched) > sum(url in RELEVANT for url in crawl(BreadthFirst(), 8))


def test_the_crawl_stops_where_no_link_is_worth_a_fetch_unless_told_never_to():
    stopping = Crawling(TopicalCrawler(topic_of(["recipes"])), never_stop=False)
    asyncio.run(run_episode(stopping, "e.org", "http://e.org/", fetch, lambda url: False, False, max_steps=20))
    assert stopping.fetched == ["http://e.org/"]
    # Never stopping, it fetches every linked page (the shop's two are dead links).
    assert set(crawl(TopicalCrawler(topic_of(["recipes"]), stop_below=None), 20)) == {
        *PAGES, "http://e.org/shop/a/", "http://e.org/shop/b/"}


def test_the_state_survives_a_round_trip_through_json_with_the_same_ranks():
    crawler = TopicalCrawler()
    crawl(crawler, 6)
    restored = TopicalState.model_validate_json(crawler.state.model_dump_json())
    assert restored == crawler.state and restored.model.vocabulary > 0
    for url in crawler.state.seen_from:
        candidate = Candidate(url, "Concert", "html/body/main/ul/li/a", 2, 9)
        assert rank(restored, candidate) == rank(crawler.state, candidate)


def test_a_page_reached_by_a_topic_link_is_relevant_and_its_q_backs_up_to_its_parent():
    state = TopicalState()
    events = Candidate("http://e.org/events/", "Events", "html/body/nav/a", 1, 2)
    observe(state, None, "http://e.org/", PAGES["http://e.org/"], [events])
    state.parent[events.url] = state.current
    reward = observe(state, events, events.url, PAGES[events.url], [])
    assert is_relevant(reward) and not is_relevant(state.reward["http://e.org/"])
    # The homepage's Q gains γ · its crawled child's Q.
    assert state.q["http://e.org/"] > state.reward["http://e.org/"]


def test_harvest_counts_the_first_pages_within_each_budget():
    crawls = [Crawled("a", [True, False, True, False], 3), Crawled("b", [False, False], 0)]
    figures = harvest(crawls, [2, 4])
    assert figures["2"]["harvest_rate"] == 0.25 and figures["2"]["harvest_rate_sites"] == 0.25
    assert figures["4"]["harvest_rate"] == round(2 / 6, 4) and figures["4"]["recall"] == round(2 / 3, 4)
    assert figures["4"]["harvest_rate_sites"] == 0.25
