"""The core of stage `crawl_topically`: one topical crawl per crawl and site, advanced by each fetched page.

The crawl is the discovery episode's core (models.discovery.episode: landing, a same-site meta refresh
followed like a redirect, the frontier, the page budget) with the Q-learning topical crawl
(models.discovery.topical — the same state and steps `sourcewatch eval topical` runs) as its choice and no
"found" end: each fetched page is rewarded and learned from, its links join the frontier, and the link of the
highest expected Q is fetched next, one page at a time per site, until the budget is spent, the site's
links run out or no link is worth a fetch. A page whose topic similarity reaches the high bin counts as
relevant (the crawl's harvest rate).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from agents.links import is_html
from models.discovery.episode import EpisodeState, FrontierLink, decide, end, land, open_episode, see_links
from models.discovery.topical import TopicalState, choose, is_relevant, observe, rank
from models.web.links import every_way_on
from schemas.base import derived_event_id
from schemas.crawl import TOPICAL_REASON, CrawlRequest, CrawlTopic, PageFetched
from schemas.links import Anchor, LinksScored

# The policy name links.scored carries for a topical crawl's pages.
POLICY = "qlearning"


class TopicalCrawl(BaseModel):
    """The stream's table value: the site's crawl (episode state and the Q-learning state) and its counts."""

    crawl_id: str
    episode: EpisodeState
    topical: TopicalState
    # The link clicked last: the page it leads to is rewarded and learned from as its outcome.
    last_click: FrontierLink | None = None
    fetched: int = 0
    relevant: int = 0


@dataclass
class TopicalStep:
    # The next page to fetch (a click, or a meta refresh followed), if any.
    request: CrawlRequest | None = None
    # The page's links with their ranks, as links.scored carries them.
    links: LinksScored | None = None
    # The page was read and judged: relevant or not (None: not a page of the crawl — unreadable, a refresh,
    # or redelivered after the crawl ended).
    relevant: bool | None = None
    # The crawl of the site ended with this page: budget, stop, error.
    ended: str | None = None
    # Its first page judged relevant (the site counts once in the harvest rate of sites).
    first_relevant: bool = False


def crawl_key(crawl_id: str, site: str) -> str:
    return f"{crawl_id}\x00{site}"


def open_crawl(seed: PageFetched) -> TopicalCrawl:
    """The crawl a seed's fetch opens; its budget is the crawl's pages less the seed."""
    return TopicalCrawl(crawl_id=seed.crawl_id,
                        episode=open_episode(seed.site, seed.url, max(seed.max_pages - 1, 0)),
                        topical=TopicalState(topic=seed.topic or CrawlTopic()))


def advance(crawl: TopicalCrawl, page: PageFetched) -> TopicalStep:
    """A fetched page of the site's crawl: reward it, learn from it, and choose the next page."""
    state = crawl.episode
    if state.end is not None:
        return TopicalStep()
    readable = page.ok and is_html(page)
    refresh, links = every_way_on(page.body, page.final_url) if readable else (None, [])
    follow = land(state, page.final_url, refresh)
    if follow is not None:
        return TopicalStep(request=_request(page, follow, page.depth))
    if not readable and not state.clicked:
        end(state, "error", f"seed unreadable: {page.error.value} {page.error_detail}".strip())
        return TopicalStep(ended="error")
    on_page = see_links(state, links)
    step = TopicalStep()
    if readable:
        reward = observe(crawl.topical, crawl.last_click, page.final_url, page.body, on_page)
        step.relevant = is_relevant(reward)
        crawl.fetched += 1
        if step.relevant:
            step.first_relevant = crawl.relevant == 0
            crawl.relevant += 1
        step.links = LinksScored(
            event_id=derived_event_id(page.event_id, "links"), site=page.site, page_url=page.url,
            final_url=page.final_url, crawl_id=page.crawl_id, depth=page.depth, max_depth=page.max_depth,
            max_pages=page.max_pages, policy=POLICY,
            anchors=[Anchor(url=link.url, text=link.text, tag_path=link.tag_path,
                            score=round(rank(crawl.topical, link), 4)) for link in on_page])
    decision = decide(state, page.final_url, False, on_page,
                      lambda _, frontier: choose(crawl.topical, frontier) or "no link worth a fetch")
    if decision.click is not None:
        crawl.last_click = decision.click
        step.request = _request(page, decision.click.url, decision.click.depth)
    else:
        step.ended = state.end
    return step


def _request(page: PageFetched, url: str, depth: int) -> CrawlRequest:
    return CrawlRequest(event_id=derived_event_id(page.event_id, TOPICAL_REASON, url), site=page.site, url=url,
                        crawl_id=page.crawl_id, depth=depth, max_depth=page.max_depth, max_pages=page.max_pages,
                        stop_at_ms=page.stop_at_ms, reason=TOPICAL_REASON, referrer=page.final_url)
