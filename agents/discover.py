"""Stage `discover`: pages.fetched (reason "discover") → links.scored (policy "rl"), crawl.requests (the next
click; a found source page to read), sources.found and discovery.episodes.

The core is agents.discovery. Per batch of fetched pages, one inference off the event loop: the classifier on
every clicked page that was read, the agent on every page's same-site anchors. An episode's state lives in
the `discovery-episodes` table, keyed by crawl and site in the site's partition, so a restarted worker goes
on with it from the changelog. The agent and classifier load with the first episode's page.
"""

from __future__ import annotations

import asyncio
import logging
from functools import cache
from pathlib import Path

import faust

from agents.discovery import FOLLOW_ALWAYS, DiscoveryEpisode, Step, advance, episode_key, open_episode
from agents.links import is_html
from models.discovery.agent import DEFAULT_AGENT, RLCrawler
from models.discovery.classifier import DEFAULT_CLASSIFIER, SourcePageClassifier
from models.discovery.policies import Candidate
from models.web.links import every_way_on
from schemas.base import derived_event_id
from schemas.crawl import PageFetched
from schemas.discovery import DISCOVER_REASON
from schemas.links import Anchor, LinksScored
from schemas.sites import site_of
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events
from streams.tables import store
from streams.topics import send, topic

log = logging.getLogger(__name__)
PAGE_BATCH = 16
episodes = app.Table("discovery-episodes", partitions=settings.topic_partitions,
                     schema=faust.Schema(key_type=str, key_serializer="json", value_serializer="json"))


def model_files() -> dict[str, Path]:
    """The discovery agent and the source-page classifier this worker runs (checked at start-up)."""
    return {"discovery agent": settings.discovery_agent or DEFAULT_AGENT,
            "source-page classifier": settings.source_classifier or DEFAULT_CLASSIFIER}


@cache
def models() -> tuple[RLCrawler, SourcePageClassifier, str]:
    files = model_files()
    agent = RLCrawler.load(files["discovery agent"])
    classifier = SourcePageClassifier.load(files["source-page classifier"])
    policy = (f"rl η={agent.eta:.3f} on {len(agent.trained_on)} sites"
              + (f" + {len(agent.finetuned_on)} fine-tuning" if agent.finetuned_on else "")
              + f"; classifier on {len(classifier.trained_on)}")
    log.info("discovery: %s", policy)
    return agent, classifier, policy


def score_pages(pages: list[PageFetched]) -> tuple[list[list[Anchor]], list[float | None]]:
    """Per page, its same-site anchors (frames and iframes too) with the agent's scores, a meta refresh first,
    and the classifier's P(source) of a clicked page that was read (None for a homepage or an unreadable
    page)."""
    agent, classifier, _ = models()
    readable = [page.ok and is_html(page) for page in pages]
    scored = []
    for page, read in zip(pages, readable):
        refresh, links_on_page = every_way_on(page.body, page.final_url) if read else (None, [])
        anchors = [a for a in links_on_page if a.same_site]
        candidates = [Candidate(a.url, a.text, a.tag_path, page.depth + 1, order) for order, a in enumerate(anchors)]
        links = [Anchor(url=a.url, text=a.text, tag_path=a.tag_path, score=round(float(way), 4),
                        hit_score=round(float(hit), 4))
                 for a, way, hit in zip(anchors, *agent.scores(candidates))]
        if refresh is not None and site_of(refresh) == page.site:
            # A meta refresh is the page's way on, as a redirect would be: clicked first, whatever its words.
            links.insert(0, Anchor(url=refresh, text="(meta refresh)", tag_path="html/head/meta",
                                   score=FOLLOW_ALWAYS))
        scored.append(links)
    clicked = [index for index, page in enumerate(pages) if readable[index] and page.depth > 0]
    probabilities = classifier.predict([(pages[i].body, pages[i].final_url) for i in clicked])
    page_probabilities: list[float | None] = [None] * len(pages)
    for index, probability in zip(clicked, probabilities):
        page_probabilities[index] = round(float(probability), 4)
    return scored, page_probabilities


@app.agent(topic("pages.fetched"))
async def discover_sources(stream):
    loop = asyncio.get_running_loop()
    async for events in stream.take_events(PAGE_BATCH, within=0.1):
        batch = [(event, page) for event in events for page in await decode_events("pages.fetched", [event])
                 if page.reason == DISCOVER_REASON]
        if not batch:
            continue
        pages = [page for _, page in batch]
        scored, page_probabilities = await loop.run_in_executor(None, score_pages, pages)
        agent, classifier, policy = models()
        threshold = settings.source_threshold if settings.source_threshold is not None else classifier.threshold
        for (event, page), anchors, page_probability in zip(batch, scored, page_probabilities):
            key = episode_key(page.crawl_id, page.site)
            value = episodes.get(key)
            episode = DiscoveryEpisode.model_validate(value) if value is not None else open_episode(page)
            step = advance(episode, page, anchors, page_probability, threshold, agent.eta, policy)
            store(episodes, event, key, episode.model_dump(mode="json"))
            await _send(page, anchors, step)
            progress.of(page.crawl_id).pages_discovered += 1


async def _send(page: PageFetched, anchors: list[Anchor], step: Step) -> None:
    crawl = progress.of(page.crawl_id)
    if anchors:
        await send("links.scored", LinksScored(
            event_id=derived_event_id(page.event_id, "links"), site=page.site, page_url=page.url,
            final_url=page.final_url, crawl_id=page.crawl_id, depth=page.depth, max_depth=page.max_depth,
            max_pages=page.max_pages, policy="rl", anchors=anchors))
    for request in (step.click, step.read_source):
        if request is not None:
            crawl.requests_sent += 1
            await send("crawl.requests", request)
    if step.found is not None:
        metrics.count("sources_found", "discover")
        await send("sources.found", step.found)
    if step.ended is not None:
        ended = step.ended
        log.info("episode on %s ended (%s) after %d clicks: %s %s", ended.homepage, ended.end, ended.clicks,
                 ended.found or "nothing found", ended.reason)
        metrics.count("episodes", "discover", end=ended.end)
        metrics.count("episode_clicks", "discover", ended.clicks, end=ended.end)
        crawl.episodes_ended += 1
        await send("discovery.episodes", ended)
