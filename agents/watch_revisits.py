"""Stage `revisit`: sources.found → the watch table (watch.stopped → out of it); a timer → revisit.ticks; ticks → revisit.decisions and
crawl.requests (reason "revisit"); revisit.outcomes → each source's history and its live figures (metrics), and
revisit.observed (the update ticks each read placed, for any period's live figures).

The core is agents.revisit. A source's state lives in the `revisit-sources` table, keyed by its page URL in
its site's partition (every topic here is keyed by site), so it follows the site to whichever worker owns
it and a restarted worker resumes from the table's changelog. The timer only reads the table; every change
happens in an agent, on an event of the source's own partition. A tick at or before a source's last decided
tick — the table's, or the one this worker decided last — (sent again after a restart, or by a worker that had
just given the page up) is dropped, so decisions are made once per tick; the timer sends ticks only for the
pages whose ticks this worker decides.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import cache

import faust

from agents.page_knowledge import rhythm_counts
from agents.revisit import (
    RevisitClock,
    rhythm_figures,
    WatchedSource,
    current_model_path,
    decide,
    first_read,
    observe,
    start_watching,
    tick_message,
    withdrawal_reason,
)
from models.revisit.rhythm import summarize_rhythm
from models.revisit.rhythm_model import RhythmLSTM, load_model
from models.revisit.schedule import starvation_ticks
from schemas.base import derived_event_id
from schemas.links import WatchStopped
from schemas.revisit import RevisitObserved, RevisitTick
from streams import metrics
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.tables import store
from streams.topics import send, topic

log = logging.getLogger(__name__)
TICK_BATCH = 1024
clock = RevisitClock.from_settings(settings)
max_interval = starvation_ticks(settings.revisit_max_interval_hours, clock.tick_hours)
watched = app.Table("revisit-sources", partitions=settings.topic_partitions,
                    schema=faust.Schema(key_type=str, key_serializer="json", value_serializer="json"))
# The tick last sent per source by this worker's timer, so one tick goes out once per source.
_ticks_sent: dict[str, int] = {}
# The tick this worker last decided per source, beside the table's `last_tick`: while a worker takes over a
# killed one's partitions, a source's value in the table was seen older than a decision the same worker had
# made a second before (the 2-worker soak with faults: one tick decided twice, 1 s apart, with other
# probabilities — the second from the state before the first), so the table alone cannot rule out a repeat.
_ticks_decided: dict[str, int] = {}


@cache
def model() -> RhythmLSTM:
    loaded = load_model(current_model_path(settings))
    if loaded.tick_hours != clock.tick_hours:
        # Its rhythm's slots and window are in ticks of its own length.
        raise ValueError(f"the revisit model {loaded.version} works on {loaded.tick_hours:g}-h ticks; "
                         f"SOURCEWATCH_REVISIT_TICK_HOURS is {clock.tick_hours:g}: train one for those ticks")
    log.info("revisit model %s (threshold %s, trained on %s)", loaded.version, loaded.threshold, loaded.trained_on)
    return loaded


@cache
def operating_threshold() -> float:
    """The model's threshold, or the one the operating knob (a target timeliness) picks on its validation curve."""
    target = settings.revisit_target_timeliness
    threshold = model().operating_threshold if target is None else model().threshold_for(target)
    log.info("revisit threshold %.4g (target timeliness %s)", threshold, target if target is not None else "the model's")
    return threshold


def _watched_source(page_url: str, what: str) -> WatchedSource | None:
    """A watched page's state, or None (counted) for a message about a page that is not watched."""
    value = watched.get(page_url)
    if value is None:
        metrics.count(f"{what}_of_unwatched_sources", "revisit")
        return None
    return WatchedSource.model_validate(value)


@app.agent(topic("sources.found"))
async def watch_sources(stream):
    async for event in stream.events():
        async with kept_if_failed("watch_sources", "sources.found", [event]):
            for found in await decode_events("sources.found", [event]):
                if found.url in watched:
                    continue
                source = start_watching(found.url, found.site, clock.for_page(found.url).tick(),
                                        discovered=found.kind == "discovered")
                request = first_read(source, clock)
                watched[found.url] = source.model_dump(mode="json")
                await send("crawl.requests", request)
                metrics.count("sources_watched", "revisit")
                log.info("watching %s (found by %s)", found.url, found.crawl_id)


@app.agent(topic("watch.stopped"))
async def stop_watching(stream):
    async for event in stream.events():
        async with kept_if_failed("stop_watching", "watch.stopped", [event]):
            for stopped in await decode_events("watch.stopped", [event]):
                if watched.pop(stopped.url, None) is None:
                    metrics.count("stops_of_unwatched_sources", "revisit")
                    continue
                _ticks_sent.pop(stopped.url, None)
                _ticks_decided.pop(stopped.url, None)
                metrics.count("sources_unwatched", "revisit")
                log.info("no longer watching %s (%s)", stopped.url, stopped.reason)


def _decided_here() -> Callable[[str], bool]:
    """Whether this worker decides a site's ticks: the partition its ticks go to is one of its own.

    The table also holds pages this worker does not decide: its standby copy of another worker's partitions
    (Faust keeps one, and keeps applying their changelogs), and the pages of partitions it gave up at a
    rebalance (an in-memory table drops only what it recovered). Their values here lag behind the owner's, so
    every tick of theirs went out again from here and was dropped by the owner as a duplicate: in a 2-worker
    1,000-site soak 13,873 of the 36,830 ticks handled. The partition is the one a send picks (the consumer's
    view of the topic, the producer's partitioner); while that view lacks the topic, the tick goes out as
    before and its owner's guard drops it if it is not due."""
    ticks_topic = topic("revisit.ticks").get_topic_name()
    own = {tp.partition for tp in app.assignor.assigned_actives() if tp.topic == ticks_topic}

    def decided_here(site: str) -> bool:
        partition = app.consumer.key_partition(ticks_topic, site.encode("utf-8"))
        return partition is None or partition in own

    return decided_here


# Each page's tick goes out within a sixtieth of a tick of its end (a minute of an hour's tick; at least every
# 0.25 s on a fast simulated clock): the pages' phases spread their ticks over the tick (RevisitClock).
@app.timer(interval=min(max(clock.real_seconds_per_tick() / 60, 0.25), 60.0))
async def emit_ticks():
    decided_here = _decided_here()
    for url, value in list(watched.items()):
        if app.should_stop:
            # The worker is stopping: its producer goes next, and a send then crashes the worker. The ticks not
            # sent are sent by whichever worker owns the pages next (from the table).
            break
        now = clock.for_page(url).tick()
        if value["last_tick"] < now and _ticks_sent.get(url, -1) < now and decided_here(value["site"]):
            _ticks_sent[url] = now
            await send("revisit.ticks", tick_message(WatchedSource.model_validate(value), now, clock))


@app.agent(topic("revisit.ticks"))
async def decide_revisits(stream):
    predictor = model()
    async for events in stream.take_events(TICK_BATCH, within=0.05):
        async with kept_if_failed("decide_revisits", "revisit.ticks", events):
            # Per source, its latest tick in the batch: an earlier one still queued behind it (a backlog, a tick
            # sent again) is passed over, and counts as a tick without a fetch.
            due: dict[str, tuple[faust.types.EventT, WatchedSource, RevisitTick]] = {}
            for event in events:
                for tick in await decode_events("revisit.ticks", [event]):
                    source = _watched_source(tick.page_url, "ticks")
                    if source is None:
                        continue
                    page_clock = clock.for_page(tick.page_url)
                    if page_clock.tick_of(tick.tick_at) <= max(source.last_tick,
                                                               _ticks_decided.get(tick.page_url, -1)):
                        metrics.count("duplicate_ticks", "revisit")
                        continue
                    if page_clock.tick_of(tick.tick_at) > page_clock.tick() + 1:
                        # Deciding it would hold the page's ticks back until then (a skewed clock sent it).
                        log.warning("tick %s of %s is in the future; dropped", tick.tick_at, tick.page_url)
                        metrics.count("future_ticks", "revisit")
                        continue
                    if tick.page_url in due:
                        metrics.count("ticks_passed_over", "revisit")
                        if due[tick.page_url][2].tick_at >= tick.tick_at:
                            continue
                    due[tick.page_url] = (event, source, tick)
            batch = list(due.values())
            decisions = decide(predictor, [(source, tick) for _, source, tick in batch], clock, max_interval,
                               operating_threshold(), settings.revisit_exploration_share)
            written = []
            for event, source, tick in batch:
                _ticks_decided[source.page_url] = clock.for_page(source.page_url).tick_of(tick.tick_at)
                written.append(store(watched, event, source.page_url, source.model_dump(mode="json")))
            # The decisions go out once the state they leave is in the changelog. Sent beside it, a decision
            # reached the broker seconds before its state did (Faust's buffer of table writes), and a worker
            # SIGKILLed in between left a next owner that decided the tick again (the 3-worker soak with
            # faults, traced on its topics). Now a worker killed in between leaves the tick decided with no
            # decision sent: the page is read at a later tick, not twice.
            await asyncio.gather(*written)
            for decision in decisions:
                await send("revisit.decisions", decision.message)
                if decision.request is not None:
                    await send("crawl.requests", decision.request)
                metrics.count("revisit_decisions", "revisit", fetch=str(decision.request is not None).lower())
                if decision.starved:
                    metrics.count("revisits_starved", "revisit")
                if decision.explored:
                    metrics.count("revisits_explored", "revisit")


def _log_dates_not_read(page_url: str, learned) -> None:
    """Say why dates a read listed were not read as publication times, and count them."""
    if learned.event_list:
        log.info("%s lists events (dates after the read): its dates are not read as publication times", page_url)
        metrics.count("event_lists", "revisit")
    elif learned.future_dates:
        log.info("%s listed %d items dated after the read: read as undated", page_url, learned.future_dates)
        metrics.count("future_dates", "revisit", learned.future_dates)
    if learned.republished:
        log.info("%s shows %d old items again (dated over a day before the last read): not new updates",
                 page_url, learned.republished)
        metrics.count("republished_items", "revisit", learned.republished)
    if learned.burst:
        log.info("%s gained a burst of items: each tick counts one update at most", page_url)
        metrics.count("update_bursts", "revisit")


@app.agent(topic("revisit.outcomes"))
async def observe_revisits(stream):
    predictor = model()
    async for event in stream.events():
        async with kept_if_failed("observe_revisits", "revisit.outcomes", [event]):
            for outcome in await decode_events("revisit.outcomes", [event]):
                source = _watched_source(outcome.page_url, "outcomes")
                if source is None:
                    continue
                observation = observe(source, outcome, clock, predictor.prior)
                if not observation.in_order:
                    metrics.count("outcomes_out_of_order", "revisit")
                if observation.learned is not None:
                    _log_dates_not_read(outcome.page_url, observation.learned)
                if (reason := withdrawal_reason(source, outcome, observation)) is not None:
                    # Stopped as a person's stop is (stop_watching takes it out of the table, its webhook stops, the
                    # stop and its reason are stored); nothing of this read is kept.
                    log.warning("%s withdrawn from watching: %s", outcome.page_url, reason)
                    metrics.count("finds_withdrawn", "revisit")
                    await send("watch.stopped", WatchStopped(site=outcome.site, url=outcome.page_url, reason=reason))
                    continue
                if observation.counted_ticks:
                    await send("revisit.observed", RevisitObserved(
                        event_id=derived_event_id(outcome.event_id, "observed"), site=outcome.site,
                        page_url=outcome.page_url, tick_at=outcome.tick_at,
                        update_ticks=[clock.for_page(outcome.page_url).tick_time(tick)
                                      for tick in observation.counted_ticks]))
                if not outcome.read:
                    log.info("revisit of %s failed: %s", outcome.page_url, outcome.error)
                    metrics.count("revisits_failed", "revisit")
                watched[outcome.page_url] = source.model_dump(mode="json")
                now = clock.for_page(outcome.page_url).tick()
                # The figures' sums too (a period's own figures come from revisit.observed and the decisions).
                counts = {"ticks_watched": now - source.added_tick, "revisits": source.fetches,
                          "new_items": source.items, "update_ticks": source.update_ticks, "timely_ticks": source.timely,
                          "delay_hours_sum": source.delay_hours}
                for name, value in (source.figures(now) | counts | rhythm_figures(source, predictor.prior)).items():
                    if value is not None:
                        metrics.gauge(name, "revisit", round(value, 4), source=outcome.page_url)
                if source.counts:
                    rhythm = summarize_rhythm(predictor.prior, rhythm_counts(source), source.exposure)
                    metrics.gauge("rhythm_peaks", "revisit", rhythm.peak_share, source=outcome.page_url,
                                  peaks=", ".join(rhythm.peaks))
