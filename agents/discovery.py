"""The core of stage `discover`: one discovery episode per seeded homepage, advanced by each fetched page of it.

An episode (per crawl and site) keeps the frontier of same-site anchors seen and not clicked, each with the
agent's score π(a), the URLs visited, its clicks and how it ended. A fetched page of the episode advances it:
- a clicked page judged a source page ends it, found (first hit): judged by the classifier's evidence with the
  agent's h of the link clicked (its chance of landing on a source page itself, not π, which a hub's link
  shares) as the prior (models.discovery.classifier.with_click_prior). The page goes to
  sources.found and is requested again as a listing to read (reason "source": pagination, records, and from
  sources.found the revisit watch list);
- otherwise the page's unvisited same-site anchors join the frontier with their scores, and the best one is
  clicked — unless its score is ≤ η (stop), no anchor is left (stop), or the click budget is spent (budget);
- a homepage that could not be read ends it (error); a click that could not be read is passed over.
Anchors are scored in the context of the page they were seen on, as the agent was trained.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from models.discovery.classifier import with_click_prior
from models.web.links import canonical_url
from schemas.base import derived_event_id
from schemas.crawl import CrawlRequest, PageFetched
from schemas.discovery import DISCOVER_REASON, EpisodeEnded
from schemas.links import Anchor, SourceFound

# The frontier kept per episode: the best-scored links (a page of thousands of links, a trap, would otherwise
# fill the table's value).
MAX_FRONTIER = 500
# The score of a link followed whatever the agent thinks (a meta refresh): above any π(a), so it goes first,
# and no evidence about the page it leads to (the prior for judging that page is then even).
FOLLOW_ALWAYS = 2.0


class FrontierLink(BaseModel):
    url: str
    text: str = ""
    score: float
    # The agent's h of the link (the prior for judging the page it opens); None: an even prior.
    hit_score: float | None = None
    depth: int
    # Order of first sight in the episode, for ties.
    order: int


class DiscoveryEpisode(BaseModel):
    crawl_id: str
    site: str
    homepage: str
    max_clicks: int
    clicks: int = 0
    frontier: dict[str, FrontierLink] = Field(default_factory=dict)
    visited: list[str] = Field(default_factory=list)
    seen: int = 0
    end: str | None = None
    found: list[str] = Field(default_factory=list)
    # The agent's h of the link clicked last: the prior that the page it leads to is a source page.
    last_click_score: float = 0.5


@dataclass
class Step:
    click: CrawlRequest | None = None
    found: SourceFound | None = None
    read_source: CrawlRequest | None = None
    ended: EpisodeEnded | None = None


def episode_key(crawl_id: str, site: str) -> str:
    return f"{crawl_id}\x00{site}"


def open_episode(homepage: PageFetched) -> DiscoveryEpisode:
    """The episode a homepage's fetch opens; its budget is the crawl's pages less the homepage."""
    return DiscoveryEpisode(crawl_id=homepage.crawl_id, site=homepage.site, homepage=homepage.url,
                            max_clicks=max(homepage.max_pages - 1, 0),
                            visited=list(dict.fromkeys([homepage.url, canonical_url(homepage.final_url)])))


def advance(episode: DiscoveryEpisode, page: PageFetched, anchors: list[Anchor], page_probability: float | None,
            source_threshold: float, eta: float | None, policy: str) -> Step:
    """One fetched page of the episode (read or not): what to send. `anchors` are the page's same-site anchors
    with the agent's scores; `page_probability` the classifier's P(source page) for a clicked page that was read."""
    step = Step()
    if episode.end is not None:
        return step
    if page.depth == 0 and not page.ok:
        return _end(episode, page, "error", f"homepage unreadable: {page.error.value} {page.error_detail}".strip(),
                    policy, step)
    episode.visited.append(canonical_url(page.final_url))
    source_score = (with_click_prior(page_probability, episode.last_click_score)
                    if page.depth > 0 and page_probability is not None else 0.0)
    if source_score >= source_threshold:
        episode.found.append(page.final_url)
        step.found = SourceFound(event_id=derived_event_id(page.event_id, "source"), site=page.site,
                                 url=page.final_url, crawl_id=page.crawl_id, kind="discovered",
                                 score=source_score, clicks=episode.clicks)
        # Read as a listing: its pagination followed, its records extracted; no breadth-first crawl from it.
        step.read_source = CrawlRequest(event_id=derived_event_id(page.event_id, "read"), site=page.site,
                                        url=page.final_url, crawl_id=page.crawl_id, depth=page.depth,
                                        max_depth=page.depth, max_pages=page.max_pages, reason="source",
                                        source_url=page.final_url, referrer=page.url)
        return _end(episode, page, "found", "", policy, step)
    for anchor in anchors:
        url = canonical_url(anchor.url)
        if url in episode.visited or url in episode.frontier:
            continue
        episode.frontier[url] = FrontierLink(url=url, text=anchor.text, score=anchor.score or 0.0,
                                             hit_score=anchor.hit_score, depth=page.depth + 1, order=episode.seen)
        episode.seen += 1
    if len(episode.frontier) > MAX_FRONTIER:
        kept = sorted(episode.frontier.values(), key=lambda link: (-link.score, link.depth, link.order))
        episode.frontier = {link.url: link for link in sorted(kept[:MAX_FRONTIER], key=lambda link: link.order)}
    best = max(episode.frontier.values(), key=lambda link: (link.score, -link.depth, -link.order), default=None)
    if best is None:
        return _end(episode, page, "stop", "no link left", policy, step)
    if eta is not None and best.score <= eta:
        return _end(episode, page, "stop", f"best score {best.score:.3f} ≤ η {eta:.3f}", policy, step)
    if episode.clicks >= episode.max_clicks:
        return _end(episode, page, "budget", f"{episode.clicks} clicks", policy, step)
    del episode.frontier[best.url]
    episode.visited.append(best.url)
    # A meta refresh is the page's own redirect, not the agent's click: a browser lands on its target.
    followed = best.score >= FOLLOW_ALWAYS
    episode.clicks += 0 if followed else 1
    episode.last_click_score = 0.5 if followed or best.hit_score is None else best.hit_score
    step.click = CrawlRequest(event_id=derived_event_id(page.event_id, "click", best.url), site=page.site,
                              url=best.url, crawl_id=page.crawl_id, depth=best.depth, max_depth=page.max_depth,
                              max_pages=page.max_pages, reason=DISCOVER_REASON, referrer=page.final_url)
    return step


def _end(episode: DiscoveryEpisode, page: PageFetched, end: str, reason: str, policy: str, step: Step) -> Step:
    episode.end = end
    episode.frontier.clear()  # nothing more is clicked: the table keeps only what the summary needs
    step.ended = EpisodeEnded(event_id=derived_event_id(page.event_id, "ended"), site=episode.site,
                              crawl_id=episode.crawl_id, homepage=episode.homepage, end=end, clicks=episode.clicks,
                              found=list(episode.found), policy=policy, reason=reason)
    return step
