"""The core of stage `discover`: one discovery episode per seeded homepage, advanced by each fetched page of it.

The episode itself is models.discovery.episode's — the same core the offline evaluation and training run —
kept per crawl and site in the stream's table. Each fetched page of an episode advances it in two steps
around one batched inference:
- `prepare`: the page is landed on (a same-site meta refresh is followed like a redirect, not a click; an
  unreadable homepage ends the episode, error) and its unvisited same-site links join the frontier;
- `advance`, with the agent's logits for the page's links and the classifier's P(source) of a clicked page:
  a clicked page judged a source page — the classifier's evidence with the agent's h of the link clicked as
  the prior (models.discovery.classifier.with_click_prior) — is found: it goes to sources.found and is
  requested again as a listing to read (reason "source": pagination, records, and from sources.found the
  revisit watch list), and the episode ends there unless it may find more (settings.discovery_finds: a site's
  events and its news); otherwise, unless the click budget is spent, the agent's best link is clicked by the
  rule it was evaluated with (models.discovery.agent.stored_choice: the learned stopping model where the agent has
  one, else Eq. 5's η). A click that could not
  be read is passed over.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from agents.links import is_html
from models.discovery.agent import prior_of_click, probability, stored_choice
from models.discovery.stopping import StoppingModel
from models.discovery.classifier import with_click_prior
from models.discovery.episode import EpisodeState, FrontierLink, decide, end, land, open_episode, see_links
from models.web.links import every_way_on
from schemas.base import derived_event_id
from schemas.crawl import CrawlRequest, PageFetched
from schemas.discovery import DISCOVER_REASON, EpisodeEnded
from schemas.links import Anchor, SourceFound


class DiscoveryEpisode(BaseModel):
    """The stream's table value: the episode's core state, its crawl, and the agent's h of the link it clicked
    last (the prior that the page it leads to is a source page)."""

    crawl_id: str
    state: EpisodeState
    last_hit: float = 0.5


@dataclass
class Step:
    # A click, or a meta refresh followed (not a click).
    click: CrawlRequest | None = None
    found: SourceFound | None = None
    read_source: CrawlRequest | None = None
    ended: EpisodeEnded | None = None
    # The page's links the agent scores (those that joined or were already in the frontier), in document order.
    to_score: list[FrontierLink] = field(default_factory=list)
    # `prepare` left the page to `advance`, which needs the agent's scores and the classifier's judgement.
    to_advance: bool = False


def episode_key(crawl_id: str, site: str) -> str:
    return f"{crawl_id}\x00{site}"


def open_for(homepage: PageFetched, max_finds: int = 1) -> DiscoveryEpisode:
    """The episode a homepage's fetch opens, looking for `max_finds` source pages at most; its budget is the
    crawl's pages less the homepage."""
    return DiscoveryEpisode(crawl_id=homepage.crawl_id,
                            state=open_episode(homepage.site, homepage.url, max(homepage.max_pages - 1, 0), max_finds))


def prepare(episode: DiscoveryEpisode, page: PageFetched, policy: str) -> Step:
    """Land on a fetched page of the episode: a refresh to follow, the episode's end (unreadable homepage),
    or the links to score before `advance`. Nothing for a page of an episode that has ended (redelivered)."""
    state = episode.state
    if state.end is not None:
        return Step()
    readable = page.ok and is_html(page)
    refresh, links = every_way_on(page.body, page.final_url) if readable else (None, [])
    follow = land(state, page.final_url, refresh)
    if follow is not None:
        return Step(click=_request(page, follow, page.depth, "refresh"))
    if not readable and not state.clicked:
        end(state, "error", f"homepage unreadable: {page.error.value} {page.error_detail}".strip())
        return Step(ended=_ended(episode, page, policy))
    return Step(to_score=see_links(state, links), to_advance=True)


def advance(episode: DiscoveryEpisode, page: PageFetched, prepared: Step, logits: tuple, page_probability: float | None,
            source_threshold: float, eta: float | None, policy: str, stopper: StoppingModel | None = None,
            click_prior: tuple[float, float] | None = None) -> Step:
    """After `prepare` (when it asked for scores): the agent's (π, h) logits of `prepared.to_score`, the
    classifier's P(source) of a clicked page that was read. Found, stopped, budget spent, or the next click;
    `click_prior` is the agent's calibration of h as the prior for the page a click opens (RLCrawler.click_prior)."""
    state = episode.state
    for link, way, hit in zip(prepared.to_score, *logits):
        link.logit, link.hit_logit = float(way), float(hit)
    source_score = (with_click_prior(page_probability, episode.last_hit)
                    if page.depth > 0 and page_probability is not None else 0.0)

    def choose(on_page: list[FrontierLink], frontier: list[FrontierLink]) -> FrontierLink | str:
        choice, view = stored_choice(frontier, eta, stopper, state.clicks)
        state.choices.append([round(value, 6) for value in view])
        return choice

    decision = decide(state, page.final_url, source_score >= source_threshold, prepared.to_score, choose)
    step = Step(to_score=prepared.to_score)
    if decision.click is not None:
        episode.last_hit = (prior_of_click(decision.click.hit_logit, click_prior)
                            if decision.click.hit_logit is not None else 0.5)
        step.click = _request(page, decision.click.url, decision.click.depth, "click")
    if decision.found is not None:
        step.found = SourceFound(event_id=derived_event_id(page.event_id, "source"), site=page.site,
                                 url=page.final_url, crawl_id=page.crawl_id, kind="discovered",
                                 score=source_score, clicks=state.clicks)
        # Read as a listing: its pagination followed, its records extracted; no breadth-first crawl from it.
        step.read_source = CrawlRequest(event_id=derived_event_id(page.event_id, "read"), site=page.site,
                                        url=page.final_url, crawl_id=page.crawl_id, depth=page.depth,
                                        max_depth=page.depth, max_pages=page.max_pages, stop_at_ms=page.stop_at_ms,
                                        reason="source", source_url=page.final_url, referrer=page.url)
    if state.end is not None:
        step.ended = _ended(episode, page, policy)
    return step


def scored_anchors(links: list[FrontierLink]) -> list[Anchor]:
    """The links the agent scored on a page, as links.scored carries them (π and h as probabilities)."""
    return [Anchor(url=link.url, text=link.text, tag_path=link.tag_path,
                   score=round(probability(link.logit), 4), hit_score=round(probability(link.hit_logit), 4))
            for link in links if link.logit is not None and link.hit_logit is not None]


def _request(page: PageFetched, url: str, depth: int, kind: str) -> CrawlRequest:
    return CrawlRequest(event_id=derived_event_id(page.event_id, kind, url), site=page.site, url=url,
                        crawl_id=page.crawl_id, depth=depth, max_depth=page.max_depth, max_pages=page.max_pages,
                        stop_at_ms=page.stop_at_ms, reason=DISCOVER_REASON, referrer=page.final_url)


def _ended(episode: DiscoveryEpisode, page: PageFetched, policy: str) -> EpisodeEnded:
    state = episode.state
    return EpisodeEnded(event_id=derived_event_id(page.event_id, "ended"), site=state.site,
                        crawl_id=episode.crawl_id, homepage=state.homepage, end=state.end, clicks=state.clicks,
                        found=list(state.found), found_at=list(state.found_at), policy=policy, reason=state.reason,
                        choices=state.choices)
