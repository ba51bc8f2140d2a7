"""The revisit stage's core: its clock, batched decisions, and the live figures from what revisits found."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agents.revisit import RevisitClock, decide, observe, start_watching, starvation_ticks, tick_message
from models.revisit.model import GAP_CAP, INPUTS, WINDOW, UpdatePredictor, live_window
from schemas.revisit import RevisitOutcome

CLOCK = RevisitClock(tick_hours=1.0)
URL = "https://example.org/events"


def _model(threshold: float) -> UpdatePredictor:
    model = UpdatePredictor(["epa-1"])
    model.threshold, model.version = threshold, "test-model"
    return model


def _outcome(tick: int, new_items: int = 0, published=(), read: bool = True) -> RevisitOutcome:
    return RevisitOutcome(site="example.org", page_url=URL, tick_at=CLOCK.tick_time(tick), read=read,
                          new_items=new_items, published=list(published), etag='"v2"')


def test_ticks_are_epoch_aligned_and_a_moment_belongs_to_the_tick_it_ends_in():
    moment = datetime(2026, 11, 23, 14, 0, tzinfo=UTC)
    tick = CLOCK.tick_of(moment)
    assert CLOCK.tick_time(tick) == moment
    assert CLOCK.tick_of(moment + timedelta(minutes=1)) == tick + 1
    simulated = RevisitClock(1.0, origin=moment, origin_wall=0.0, speed=3600.0)
    assert simulated.real_seconds_per_tick() == 1.0
    # Its origin was read at Unix time 0, so by now it has run far ahead of the wall clock.
    assert simulated.tick() > RevisitClock().tick()


def test_the_live_window_marks_only_the_ticks_whose_revisit_found_items():
    window = live_window([95, 99, 80], 100, 1.0)
    assert window.shape == (WINDOW, INPUTS)
    assert window[:, 0].tolist() == [0, 0, 0, 0, 0, 1, 0, 0, 0, 1]
    # Ticks since the last update: 10 at tick 90 (the update at 80 lies before the window), 0 at 95 and 99.
    gaps = np.expm1(window[:, 1] * np.log1p(GAP_CAP)).round().astype(int).tolist()
    assert gaps == [10, 11, 12, 13, 14, 0, 1, 2, 3, 0]


@pytest.mark.parametrize("threshold, fetches", [(0.0, True), (1.01, False)])
def test_a_batch_of_ticks_is_decided_at_the_model_threshold(threshold, fetches):
    sources = [start_watching(f"{URL}/{n}", "example.org", 100) for n in range(3)]
    due = [(source, tick_message(source, 101, CLOCK)) for source in sources]
    decisions = decide(_model(threshold), due, CLOCK, max_interval_ticks=None)
    assert [d.message.fetch for d in decisions] == [fetches] * 3
    assert all(0 <= d.message.probability <= 1 and d.message.policy == "test-model" for d in decisions)
    assert [source.last_tick for source in sources] == [101] * 3
    assert [source.fetches for source in sources] == [int(fetches)] * 3
    if fetches:
        request = decisions[0].request
        assert (request.reason, request.url, request.source_url) == ("revisit", f"{URL}/0", f"{URL}/0")
        assert request.tick_at == CLOCK.tick_time(101) and request.crawl_id == "revisit-101"
    else:
        assert all(d.request is None for d in decisions)
    # The same tick again (a restart resends it) has the same ids: its rows and requests replace, not add.
    again = tick_message(sources[0], 101, CLOCK)
    assert again.event_id == due[0][1].event_id


def test_outcomes_give_timeliness_friendliness_delay_and_fetches_per_item_as_defined():
    source = start_watching(URL, "example.org", 100)
    # Fetches at 101 (nothing), 103 (one item listed at 102:30 → tick 103: timely), 106 (two items without a
    # time → placed at 104, the first tick since the last revisit: late, 2 h after that).
    source.fetches = 3
    assert observe(source, _outcome(101), CLOCK)
    assert observe(source, _outcome(103, 1, [CLOCK.tick_time(102) + timedelta(minutes=30)]), CLOCK)
    assert observe(source, _outcome(106, 2, [None, None]), CLOCK)
    assert source.updated_ticks == [103, 106] and source.etag == '"v2"'
    figures = source.figures(now_tick=110)
    # 10 ticks, update ticks {103, 104}; fetches at 101 and 106 fell on quiet ticks.
    assert figures["timeliness"] == 0.5
    assert figures["friendliness"] == pytest.approx((8 - 2) / 8)
    assert figures["delay_h"] == pytest.approx((0.5 + 3 + 3) / 3)
    assert figures["fetches_per_item"] == 1.0


def test_items_from_before_the_watch_began_are_not_counted():
    source = start_watching(URL, "example.org", 100)
    # The first revisit finds what was published since the last read before the watch: listed before it, or
    # undated; only the item listed after the watch began counts.
    assert observe(source, _outcome(102, 3, [CLOCK.tick_time(90), None, CLOCK.tick_time(101)]), CLOCK)
    assert (source.items, source.update_ticks) == (1, 1)
    # Later revisits count undated items (placed at the first tick since the previous revisit).
    assert observe(source, _outcome(105, 1, [None]), CLOCK)
    assert (source.items, source.update_ticks) == (2, 2)


def test_a_date_after_the_revisit_is_an_event_date_not_a_publication_time():
    source = start_watching(URL, "example.org", 100)
    assert observe(source, _outcome(101), CLOCK)
    # An event list: the new item's date is next month's event. It appeared at some tick since the last
    # revisit, not at this one: placed at the earliest (102), late, never timely.
    assert observe(source, _outcome(105, 1, [CLOCK.tick_time(105) + timedelta(days=30)]), CLOCK)
    assert (source.items, source.update_ticks, source.timely) == (1, 1, 0)
    assert source.delay_hours == pytest.approx(4.0)
    # A site clock a few minutes ahead still dates the item at the revisit.
    assert observe(source, _outcome(108, 1, [CLOCK.tick_time(108) + timedelta(minutes=5)]), CLOCK)
    assert (source.items, source.timely) == (2, 1)


def test_an_outcome_older_than_the_last_one_counts_nothing_twice():
    source = start_watching(URL, "example.org", 100)
    assert observe(source, _outcome(101), CLOCK)
    assert observe(source, _outcome(105, 1, [None]), CLOCK)
    assert not observe(source, _outcome(103, 1, [None]), CLOCK)
    assert (source.items, source.update_ticks) == (1, 1)


def test_a_failed_revisit_adds_no_items_and_a_burst_counts_each_item():
    source = start_watching(URL, "example.org", 100)
    assert observe(source, _outcome(101, read=False), CLOCK)
    assert source.items == 0 and source.updated_ticks == []
    assert not observe(source, _outcome(101), CLOCK)  # that tick's outcome is in already
    burst = 5000
    observe(source, _outcome(102, burst, [CLOCK.tick_time(102)] * burst), CLOCK)
    assert (source.items, source.update_ticks, source.timely) == (burst, 1, 1)
    assert source.updated_ticks == [102]


def test_no_page_starves_a_model_that_never_fetches_still_revisits_every_longest_interval():
    never, always = _model(1.01), _model(0.0)
    bound = starvation_ticks(24.0, CLOCK.tick_hours)
    source = start_watching(URL, "example.org", 100)
    fetched = [tick for tick in range(101, 101 + 72)
               if decide(never, [(source, tick_message(source, tick, CLOCK))], CLOCK, bound)[0].message.fetch]
    assert bound == 24 and fetched == [124, 148, 172]
    decision = decide(never, [(source, tick_message(source, 196, CLOCK))], CLOCK, bound)[0]
    assert decision.starved and decision.request is not None and source.last_fetch_tick == 196
    # A revisit the model chose resets the interval; it is no starvation.
    chosen = decide(always, [(source, tick_message(source, 200, CLOCK))], CLOCK, bound)[0]
    assert chosen.message.fetch and not chosen.starved
    assert not decide(never, [(source, tick_message(source, 223, CLOCK))], CLOCK, bound)[0].message.fetch
    assert decide(never, [(source, tick_message(source, 224, CLOCK))], CLOCK, bound)[0].starved
    # Unbounded, the model alone decides; on daily ticks the bound is at least one tick.
    assert not decide(never, [(source, tick_message(source, 400, CLOCK))], CLOCK, None)[0].message.fetch
    assert starvation_ticks(24.0, 24.0) == 1 and starvation_ticks(36.0, 24.0) == 2 and starvation_ticks(None, 1) is None
