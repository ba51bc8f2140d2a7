"""The discovery stage's core: an episode advanced page by page, clicking the best anchor until it finds a
source page, its best score falls to η, its budget is spent, or its homepage cannot be read."""

import pytest

from agents.discovery import advance, open_episode
from models.discovery.classifier import with_click_prior
from schemas.crawl import FetchErrorKind, PageFetched
from schemas.links import Anchor

HOME = "http://e.org/"


def page(url: str, depth: int, ok: bool = True, max_pages: int = 11) -> PageFetched:
    return PageFetched(site="e.org", url=url, final_url=url, crawl_id="c", depth=depth, max_pages=max_pages,
                       reason="discover", status=200 if ok else 0,
                       error=FetchErrorKind.NONE if ok else FetchErrorKind.CONNECT)


def anchors(**scores: float) -> list[Anchor]:
    """Anchors whose π and h are the same score."""
    return [Anchor(url=f"http://e.org/{name}/", text=name, score=score, hit_score=score)
            for name, score in scores.items()]


def test_the_best_anchor_is_clicked_and_a_source_page_ends_the_episode_found():
    home = page(HOME, 0)
    episode = open_episode(home)
    step = advance(episode, home, anchors(about=0.2, events=0.9, news=0.7), None, 0.5, 0.3, "rl")
    assert step.click.url == "http://e.org/events/" and step.click.reason == "discover" and step.click.depth == 1
    assert step.ended is None and episode.clicks == 1 and set(episode.frontier) == {"http://e.org/about/",
                                                                                     "http://e.org/news/"}
    # Not a source page: the next best anchor, from the frontier or the new page.
    step = advance(episode, page("http://e.org/events/", 1), anchors(events=0.95, archive=0.4), 0.05, 0.5, 0.3, "rl")
    assert step.click.url == "http://e.org/news/" and step.found is None
    step = advance(episode, page("http://e.org/news/", 1), [], 0.8, 0.5, 0.3, "rl")
    assert step.found.url == "http://e.org/news/" and step.found.clicks == 2 and step.click is None
    # The classifier's evidence with the clicked link's score as the prior.
    assert step.found.score == with_click_prior(0.8, 0.7) > 0.8
    assert step.read_source.reason == "source" and step.read_source.source_url == "http://e.org/news/"
    assert (step.ended.end, step.ended.clicks, step.ended.found) == ("found", 2, ["http://e.org/news/"])
    assert step.ended.unit_cost == 2.0 and step.ended.harvest_rate == 0.5
    # A page arriving after the end (redelivered) changes nothing.
    assert advance(episode, page("http://e.org/about/", 1), [], 0.9, 0.5, 0.3, "rl").ended is None


def test_the_click_prior_and_the_page_evidence_add_as_log_odds():
    assert with_click_prior(0.5, 0.9) == pytest.approx(0.9)
    assert with_click_prior(0.2, 0.8) == pytest.approx(0.5)
    assert with_click_prior(0.25, 0.996) > 0.98 and with_click_prior(0.03, 0.5) == pytest.approx(0.03)
    assert 0 < with_click_prior(0.0, 1.0) < 1


def test_a_hub_link_is_clicked_on_its_way_score_and_its_page_judged_on_its_hit_score():
    home = page(HOME, 0)
    episode = open_episode(home)
    hub = Anchor(url="http://e.org/community/", text="Community", score=0.9, hit_score=0.1)
    assert advance(episode, home, [hub, *anchors(about=0.3)], None, 0.5, 0.3, "rl").click.url == hub.url
    # The hub page looks a little like a listing (0.6): with π as the prior it would pass; with h it does not.
    step = advance(episode, page(hub.url, 1), anchors(events=0.95), 0.6, 0.5, 0.3, "rl")
    assert with_click_prior(0.6, 0.9) >= 0.5 > with_click_prior(0.6, 0.1)
    assert step.found is None and step.click.url == "http://e.org/events/"


def test_the_episode_stops_when_the_best_score_is_at_or_below_eta():
    home = page(HOME, 0)
    episode = open_episode(home)
    step = advance(episode, home, anchors(about=0.2, contact=0.3), None, 0.5, 0.3, "rl")
    assert step.click is None and step.ended.end == "stop" and step.ended.clicks == 0 and "η" in step.ended.reason


def test_the_click_budget_ends_the_episode():
    home = page(HOME, 0, max_pages=2)
    episode = open_episode(home)
    assert advance(episode, home, anchors(events=0.9, news=0.8), None, 0.5, 0.3, "rl").click is not None
    step = advance(episode, page("http://e.org/events/", 1, max_pages=2), [], 0.02, 0.5, 0.3, "rl")
    assert step.click is None and (step.ended.end, step.ended.clicks) == ("budget", 1)


def test_an_unreadable_homepage_ends_with_error_and_an_unreadable_click_is_passed_over():
    home = page(HOME, 0, ok=False)
    step = advance(open_episode(home), home, [], None, 0.5, 0.3, "rl")
    assert step.ended.end == "error" and "connect" in step.ended.reason

    home = page(HOME, 0)
    episode = open_episode(home)
    advance(episode, home, anchors(events=0.9, news=0.8), None, 0.5, 0.3, "rl")
    step = advance(episode, page("http://e.org/events/", 1, ok=False), [], None, 0.5, 0.3, "rl")
    assert step.click.url == "http://e.org/news/" and step.ended is None


def test_visited_pages_are_never_clicked_again():
    home = page(HOME, 0)
    episode = open_episode(home)
    advance(episode, home, anchors(events=0.9), None, 0.5, None, "rl")
    # The clicked page links back to the homepage and to itself: nothing left to click.
    back = [Anchor(url=HOME, score=0.99), Anchor(url="http://e.org/events/", score=0.99)]
    step = advance(episode, page("http://e.org/events/", 1), back, 0.02, 0.5, None, "rl")
    assert step.click is None and step.ended.end == "stop" and step.ended.reason == "no link left"


def test_a_page_of_thousands_of_links_keeps_only_the_best_in_the_frontier():
    from agents.discovery import MAX_FRONTIER

    home = page(HOME, 0)
    episode = open_episode(home)
    many = [Anchor(url=f"http://e.org/p{n}/", score=n / 3000) for n in range(3000)]
    step = advance(episode, home, many, None, 0.5, 0.1, "rl")
    assert step.click.url == "http://e.org/p2999/"
    assert len(episode.frontier) == MAX_FRONTIER - 1 and min(l.score for l in episode.frontier.values()) > 0.8


def test_frames_and_meta_refresh_are_ways_on():
    from models.web.links import navigation_links

    refresh, frames = navigation_links('<meta http-equiv="Refresh" content="0; url=\'/home/\'">', "http://e.org/")
    assert refresh == "http://e.org/home/" and frames == []
    refresh, frames = navigation_links('<frameset><frame src="nav.html" name="menu"><frame src="http://x.org/">'
                                       '</frameset>', "http://e.org/a/")
    assert refresh is None and [(f.url, f.text, f.same_site) for f in frames] == [
        ("http://e.org/a/nav.html", "menu", True), ("http://x.org/", "", False)]


def test_a_link_followed_whatever_the_agent_thinks_goes_first_and_is_no_evidence():
    from agents.discovery import FOLLOW_ALWAYS

    home = page(HOME, 0)
    episode = open_episode(home)
    refresh = [Anchor(url="http://e.org/home/", score=FOLLOW_ALWAYS), *anchors(events=0.99)]
    assert advance(episode, home, refresh, None, 0.5, 0.3, "rl").click.url == "http://e.org/home/"
    # A redirect of the page's own, not a click; the page it leads to is judged on the classifier's evidence
    # alone (an even prior).
    assert episode.clicks == 0
    step = advance(episode, page("http://e.org/home/", 1), [], 0.3, 0.5, 0.3, "rl")
    assert step.found is None and step.click.url == "http://e.org/events/" and episode.clicks == 1
