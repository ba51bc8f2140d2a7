"""The discovery stage's core: an episode advanced page by page, clicking the agent's best link until it finds a
source page, its best score falls to η, its budget is spent, or its homepage cannot be read."""

import math

import pytest

from agents.discovery import advance, open_for, prepare
from models.discovery.agent import prior_of_click
from models.discovery.classifier import with_click_prior
from schemas.crawl import FetchErrorKind, PageFetched

HOME = "http://e.org/"


def page(url: str, depth: int, links: str = "", ok: bool = True, max_pages: int = 11) -> PageFetched:
    """A fetched page whose body links to each name in `links` (space-separated) as http://e.org/NAME/."""
    body = "".join(f'<a href="/{name}/">{name}</a>' for name in links.split())
    return PageFetched(site="e.org", url=url, final_url=url, crawl_id="c", depth=depth, max_pages=max_pages,
                       reason="discover", status=200 if ok else 0, content_type="text/html", body=body if ok else "",
                       error=FetchErrorKind.NONE if ok else FetchErrorKind.CONNECT)


def logit(probability: float) -> float:
    return math.log(probability / (1 - probability))


def step_on(episode, fetched: PageFetched, scores: dict[str, float] | None = None, page_probability=None,
            eta: float | None = 0.3, hits: dict[str, float] | None = None):
    """One page through the stage: prepare, then (when it asks) advance with the agent's scores of the links it
    is to score (π = h = the score unless `hits` says otherwise) and the classifier's P(source)."""
    prepared = prepare(episode, fetched, "rl")
    if prepared.click is not None or prepared.ended is not None or episode.state.end is not None:
        return prepared
    scores, hits = scores or {}, hits or {}
    names = [link.url.rstrip("/").rsplit("/", 1)[1] for link in prepared.to_score]
    logits = ([logit(scores[name]) for name in names], [logit(hits.get(name, scores[name])) for name in names])
    return advance(episode, fetched, prepared, logits, page_probability, 0.5, eta, "rl")


def test_the_best_link_is_clicked_and_a_source_page_ends_the_episode_found():
    home = page(HOME, 0, "about events news")
    episode = open_for(home)
    step = step_on(episode, home, {"about": 0.2, "events": 0.9, "news": 0.7})
    assert step.click.url == "http://e.org/events/" and step.click.reason == "discover" and step.click.depth == 1
    assert step.ended is None and episode.state.clicks == 1
    assert set(episode.state.frontier) == {"http://e.org/about/", "http://e.org/news/"}
    # Not a source page: the next best link, from the frontier or the new page.
    step = step_on(episode, page("http://e.org/events/", 1, "archive"), {"archive": 0.4}, page_probability=0.05)
    assert step.click.url == "http://e.org/news/" and step.found is None
    step = step_on(episode, page("http://e.org/news/", 1), page_probability=0.8)
    assert step.found.url == "http://e.org/news/" and step.found.clicks == 2 and step.click is None
    # The classifier's evidence with the clicked link's h as the prior.
    assert step.found.score == pytest.approx(with_click_prior(0.8, 0.7)) and step.found.score > 0.8
    assert step.read_source.reason == "source" and step.read_source.source_url == "http://e.org/news/"
    assert (step.ended.end, step.ended.clicks, step.ended.found) == ("found", 2, ["http://e.org/news/"])
    assert step.ended.unit_cost == 2.0 and step.ended.harvest_rate == 0.5
    # The stopping model's view of each of its two clicks travels with the episode (retraining's samples): the
    # best π of the frontier then, and the clicks spent before each.
    assert [view[0] for view in step.ended.choices] == pytest.approx([0.9, 0.7], abs=1e-5)
    assert [view[5] for view in step.ended.choices] == [0.0, 1.0]
    # A page arriving after the end (redelivered) changes nothing.
    again = step_on(episode, page("http://e.org/about/", 1), page_probability=0.9)
    assert again.ended is None and again.click is None and episode.state.clicks == 2


def test_an_episode_that_may_find_two_goes_on_past_the_found_pages_own_links():
    home = page(HOME, 0, "about events news")
    episode = open_for(home, max_finds=2)
    step_on(episode, home, {"about": 0.2, "events": 0.9, "news": 0.7})
    # The events list is found; its pager's link scores best, but it is the found list's own: the news link is
    # clicked, in the same step that reports the find.
    step = step_on(episode, page("http://e.org/events/", 1, "page-2"), {"page-2": 0.95}, page_probability=0.9)
    assert step.found.url == "http://e.org/events/" and step.read_source.source_url == "http://e.org/events/"
    assert step.click.url == "http://e.org/news/" and step.ended is None
    assert set(episode.state.frontier) == {"http://e.org/about/"}
    step = step_on(episode, page("http://e.org/news/", 1), page_probability=0.8)
    assert step.found.url == "http://e.org/news/" and step.click is None
    assert (step.ended.end, step.ended.clicks, step.ended.found) == (
        "found", 2, ["http://e.org/events/", "http://e.org/news/"])
    assert step.ended.unit_cost == 1.0


def test_after_a_find_the_policys_stop_ends_the_episode_found():
    home = page(HOME, 0, "about events")
    episode = open_for(home, max_finds=2)
    step_on(episode, home, {"about": 0.2, "events": 0.9})
    # Nothing else is likely a source page (About at 0.2, below η 0.3): found, and no click more.
    step = step_on(episode, page("http://e.org/events/", 1), page_probability=0.9)
    assert step.found.url == "http://e.org/events/" and step.click is None
    assert (step.ended.end, step.ended.clicks, step.ended.found) == ("found", 1, ["http://e.org/events/"])
    assert step.ended.reason.startswith("found, then stop: ")
    # With one find to look for (first-hit stopping), the same site ends at the find without a look further.
    first_hit = open_for(home)
    step_on(first_hit, home, {"about": 0.2, "events": 0.9})
    step = step_on(first_hit, page("http://e.org/events/", 1), page_probability=0.9)
    assert (step.ended.end, step.ended.reason, step.click) == ("found", "", None)


def test_the_click_prior_and_the_page_evidence_add_as_log_odds():
    assert with_click_prior(0.5, 0.9) == pytest.approx(0.9)
    assert with_click_prior(0.2, 0.8) == pytest.approx(0.5)
    assert with_click_prior(0.25, 0.996) > 0.98 and with_click_prior(0.03, 0.5) == pytest.approx(0.03)
    assert 0 < with_click_prior(0.0, 1.0) < 1


def test_a_hub_link_is_clicked_on_its_way_score_and_its_page_judged_on_its_hit_score():
    home = page(HOME, 0, "community about")
    episode = open_for(home)
    step = step_on(episode, home, {"community": 0.9, "about": 0.3}, hits={"community": 0.1})
    assert step.click.url == "http://e.org/community/"
    # The hub page looks a little like a listing (0.6): with π as the prior it would pass; with h it does not.
    step = step_on(episode, page("http://e.org/community/", 1, "events"), {"events": 0.95}, page_probability=0.6)
    assert with_click_prior(0.6, 0.9) >= 0.5 > with_click_prior(0.6, 0.1)
    assert step.found is None and step.click.url == "http://e.org/events/"


def test_the_stream_judges_a_clicked_page_with_the_agent_s_calibrated_prior():
    # An agent whose h is too shy on sites it never saw (a = 1, b = +2: its 0.1 means 0.45): the page the click
    # opens passes with the calibrated prior where it would not with h as the net gives it.
    home = page(HOME, 0, "eventos about")
    for click_prior, found in ((None, False), ((1.0, 2.0), True)):
        episode = open_for(home)
        prepared = prepare(episode, home, "rl")
        logits = ([logit(0.9), logit(0.2)], [logit(0.1), logit(0.05)])
        step = advance(episode, home, prepared, logits, None, 0.5, 0.3, "rl", click_prior=click_prior)
        assert step.click.url == "http://e.org/eventos/"
        assert episode.last_hit == pytest.approx(prior_of_click(logit(0.1), click_prior), abs=1e-6)
        step = step_on(episode, page("http://e.org/eventos/", 1), page_probability=0.6)
        assert (step.found is not None) is found


def test_the_prior_of_a_click_is_h_or_its_calibration():
    assert prior_of_click(logit(0.3), None) == pytest.approx(0.3, abs=1e-6)
    assert prior_of_click(0.5, (2.0, -1.0)) == pytest.approx(0.5, abs=1e-6)
    assert prior_of_click(logit(0.1), (1.0, math.log(9))) == pytest.approx(0.5, abs=1e-6)


def test_a_link_seen_again_takes_the_score_it_has_on_the_latest_page():
    # As the agent was trained: a link is scored in the context of the last page it was seen on.
    home = page(HOME, 0, "events news")
    episode = open_for(home)
    assert step_on(episode, home, {"events": 0.9, "news": 0.6}).click.url == "http://e.org/events/"
    step = step_on(episode, page("http://e.org/events/", 1, "news team"), {"news": 0.2, "team": 0.5},
                   page_probability=0.01)
    assert step.click.url == "http://e.org/team/"


def test_the_episode_stops_when_the_best_score_is_at_or_below_eta():
    home = page(HOME, 0, "about contact")
    episode = open_for(home)
    step = step_on(episode, home, {"about": 0.2, "contact": 0.29})
    assert step.click is None and step.ended.end == "stop" and step.ended.clicks == 0 and "η" in step.ended.reason


def test_the_click_budget_ends_the_episode():
    home = page(HOME, 0, "events news", max_pages=2)
    episode = open_for(home)
    assert step_on(episode, home, {"events": 0.9, "news": 0.8}).click is not None
    step = step_on(episode, page("http://e.org/events/", 1, max_pages=2), page_probability=0.02)
    assert step.click is None and (step.ended.end, step.ended.clicks) == ("budget", 1)


def test_an_unreadable_homepage_ends_with_error_and_an_unreadable_click_is_passed_over():
    home = page(HOME, 0, ok=False)
    step = step_on(open_for(home), home)
    assert step.ended.end == "error" and "connect" in step.ended.reason

    home = page(HOME, 0, "events news")
    episode = open_for(home)
    step_on(episode, home, {"events": 0.9, "news": 0.8})
    step = step_on(episode, page("http://e.org/events/", 1, ok=False))
    assert step.click.url == "http://e.org/news/" and step.ended is None


def test_visited_pages_are_never_clicked_again():
    home = page(HOME, 0, "events")
    episode = open_for(home)
    step_on(episode, home, {"events": 0.9}, eta=None)
    # The clicked page links back to the homepage and to itself: nothing left to click.
    back = page("http://e.org/events/", 1)
    back = back.model_copy(update={"body": '<a href="/">Home</a> <a href="/events/">Events</a>'})
    step = step_on(episode, back, page_probability=0.02, eta=None)
    assert step.click is None and step.ended.end == "stop" and step.ended.reason == "no link left"


def test_a_meta_refresh_is_followed_like_a_redirect_not_a_click():
    home = page(HOME, 0).model_copy(update={"body": '<meta http-equiv="refresh" content="0; url=/home/">'})
    episode = open_for(home)
    step = step_on(episode, home)
    assert step.click.url == "http://e.org/home/" and step.click.depth == 0 and episode.state.clicks == 0
    # The page it leads to stands for the homepage: not judged, its links scored and clicked as the homepage's.
    step = step_on(episode, page("http://e.org/home/", 0, "events"), {"events": 0.99}, page_probability=0.99)
    assert step.found is None and step.click.url == "http://e.org/events/" and episode.state.clicks == 1


def test_frames_and_meta_refresh_are_ways_on():
    from models.web.links import navigation_links

    refresh, frames = navigation_links('<meta http-equiv="Refresh" content="0; url=\'/home/\'">', "http://e.org/")
    assert refresh == "http://e.org/home/" and frames == []
    refresh, frames = navigation_links('<frameset><frame src="nav.html" name="menu"><frame src="http://x.org/">'
                                       '</frameset>', "http://e.org/a/")
    assert refresh is None and [(f.url, f.text, f.same_site) for f in frames] == [
        ("http://e.org/a/nav.html", "menu", True), ("http://x.org/", "", False)]


def test_a_click_and_a_found_pages_read_carry_the_crawls_end():
    end = 1_800_000_000_000
    home = page(HOME, 0, "about events").model_copy(update={"stop_at_ms": end})
    episode = open_for(home)
    step = step_on(episode, home, {"about": 0.2, "events": 0.9})
    assert step.click.stop_at_ms == end
    step = step_on(episode, page("http://e.org/events/", 1).model_copy(update={"stop_at_ms": end}),
                   page_probability=0.9)
    assert step.read_source.stop_at_ms == end
