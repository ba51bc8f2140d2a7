"""Stage `discover`: pages.fetched (reason "discover") → links.scored (policy "rl"), crawl.requests (the next
click; a found source page to read), sources.found and discovery.episodes.

The core is agents.discovery (over models.discovery.episode, the core the offline evaluation runs). Per batch
of fetched pages, one inference off the event loop: the classifier on every clicked page that was read, the
agent on the links each page adds to (or finds again in) its episode's frontier. An episode's state lives in
the `discovery-episodes` table, keyed by crawl and site in the site's partition, so a restarted worker goes
on with it from the changelog. The agent and classifier load with the first episode's page.
"""

from __future__ import annotations

import asyncio
import logging
from functools import cache
from pathlib import Path

import faust

from agents.discovery import DiscoveryEpisode, Step, advance, episode_key, open_for, prepare, scored_anchors
from agents.links import is_html
from models.discovery.agent import DEFAULT_AGENT, RLCrawler
from models.discovery.classifier import SourcePageClassifier, current_classifier_path
from models.discovery.stopping import load_retrained, retrained_stopping_path
from schemas.base import derived_event_id
from schemas.crawl import PageFetched
from schemas.discovery import DISCOVER_REASON
from schemas.links import Anchor, LinksScored
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.retention import crawl_scoped, named_in
from streams.tables import store
from streams.topics import send, topic

log = logging.getLogger(__name__)
# Pages read together: their anchors scored in one call (models.discovery.agent.logits_of_pages).
PAGE_BATCH = 16
episodes = crawl_scoped(app.Table("discovery-episodes", partitions=settings.topic_partitions,
                                  schema=faust.Schema(key_type=str, key_serializer="json", value_serializer="json")),
                        "pages.fetched", named_in)


def model_files() -> dict[str, Path]:
    """The discovery agent and the source-page classifier this worker runs (checked at start-up)."""
    return {"discovery agent": settings.discovery_agent or DEFAULT_AGENT,
            "source-page classifier": current_classifier_path(settings)}


@cache
def models() -> tuple[RLCrawler, SourcePageClassifier, str]:
    files = model_files()
    agent = RLCrawler.load(files["discovery agent"])
    if agent.stopper is not None and (path := retrained_stopping_path(settings)).is_file():
        retrained = load_retrained(path, agent.stopper)
        if retrained is None:
            log.warning("discovery: %s was retrained for another agent's stopping model: the agent's own is used",
                        path)
        else:
            agent.stopper = retrained
            log.info("discovery: the stopping model retrained with people's verdicts (%s)", path)
    if agent.stopper is not None:
        agent.stopper = agent.stopper.at_miss_cost(settings.discovery_miss_cost)
    classifier = SourcePageClassifier.load(files["source-page classifier"])
    stop = f"learned stop below {agent.stopper.threshold:.3f}" if agent.stopper else f"η={agent.eta:.3f}"
    policy = (f"rl {stop} on {len(agent.trained_on)} sites"
              + (f" + {len(agent.finetuned_on)} fine-tuning" if agent.finetuned_on else "")
              + f"; classifier on {len(classifier.trained_on)}")
    log.info("discovery: %s", policy)
    return agent, classifier, policy


def score_pages(agent: RLCrawler, classifier: SourcePageClassifier,
                pages: list[tuple[PageFetched, Step]]) -> tuple[list[tuple], list[float | None]]:
    """Per page, the agent's (π, h) logits of the links it is to score, and the classifier's P(source) of a
    clicked page that was read (None for a homepage or an unreadable page)."""
    logits = agent.logits_of_pages([[link.candidate() for link in step.to_score] for _, step in pages])
    clicked = [index for index, (page, _) in enumerate(pages) if page.depth > 0 and page.ok and is_html(page)]
    probabilities = classifier.predict([(pages[i][0].body, pages[i][0].final_url) for i in clicked])
    page_probabilities: list[float | None] = [None] * len(pages)
    for index, value in zip(clicked, probabilities):
        page_probabilities[index] = float(value)
    return logits, page_probabilities


@app.agent(topic("pages.fetched"))
async def discover_sources(stream):
    loop = asyncio.get_running_loop()
    async for events in stream.take_events(PAGE_BATCH, within=0.1):
        async with kept_if_failed("discover_sources", "pages.fetched", events):
            batch = [(event, page) for event in events for page in await decode_events("pages.fetched", [event])
                     if page.reason == DISCOVER_REASON]
            if not batch:
                continue
            agent, classifier, policy = models()
            threshold = settings.source_threshold if settings.source_threshold is not None else classifier.threshold
            opened: dict[str, DiscoveryEpisode] = {}
            prepared = []
            for event, page in batch:
                key = episode_key(page.crawl_id, page.site)
                if key not in opened:
                    value = episodes.get(key)
                    opened[key] = (DiscoveryEpisode.model_validate(value) if value is not None
                                   else open_for(page, settings.discovery_finds))
                episode = opened[key]
                prepared.append((event, page, key, episode, prepare(episode, page, policy)))
            running = [(page, step) for _, page, _, _, step in prepared if step.to_advance]
            logits, page_probabilities = await loop.run_in_executor(None, score_pages, agent, classifier, running)
            scores = zip(logits, page_probabilities)
            for event, page, key, episode, step in prepared:
                if step.to_advance:
                    way_hit, page_probability = next(scores)
                    step = advance(episode, page, step, way_hit, page_probability, threshold, agent.eta, policy,
                                   agent.stopper, agent.click_prior)
                store(episodes, event, key, episode.model_dump(mode="json"))
                await _send(page, scored_anchors(step.to_score), step)
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
