"""The revisit stage's core: its clock, what a page's reads teach (bootstrap, censoring, bad dates), batched
decisions with the starvation bound, and the live figures from what revisits found."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
import torch

from agents.page_knowledge import known_windows
from agents.revisit import (
    RevisitClock,
    decide,
    first_read,
    observe,
    start_watching,
    tick_message,
    withdrawal_reason,
)
from infra.settings import Settings
from models.revisit.rhythm import RhythmPrior, slots_of
from models.revisit.rhythm_model import RhythmLSTM
from models.revisit.schedule import starvation_ticks
from schemas.revisit import RevisitOutcome

CLOCK = RevisitClock(tick_hours=1.0)
URL = "https://example.org/events"
PRIOR = RhythmPrior.flat(1.0, 0.01)
# 2026-11-23 00:00 UTC as a tick: day d's hour h is DAY + 24·d + h (the tick ending then).
DAY = CLOCK.tick_of(datetime(2026, 11, 23, tzinfo=UTC))


def _rhythm_only(threshold: float) -> RhythmLSTM:
    """TSP-R with its LSTM's correction zeroed: P is the page's rhythm, so these tests read the bookkeeping."""
    model = RhythmLSTM(PRIOR)
    with torch.no_grad():
        for parameter in model.out[-1].parameters():
            parameter.zero_()
    model.threshold, model.version = threshold, "test-rhythm"
    return model


def _outcome(tick: int, new_items: int = 0, published=(), read: bool = True, listed=(), linked: int = 0
             ) -> RevisitOutcome:
    return RevisitOutcome(site="example.org", page_url=URL, tick_at=CLOCK.tick_time(tick), read=read,
                          new_items=new_items, published=list(published), listed=list(listed), linked=linked,
                          etag='"v2"')


def test_ticks_are_epoch_aligned_and_a_moment_belongs_to_the_tick_it_ends_in():
    moment = datetime(2026, 11, 23, 14, 0, tzinfo=UTC)
    tick = CLOCK.tick_of(moment)
    assert CLOCK.tick_time(tick) == moment
    assert CLOCK.tick_of(moment + timedelta(minutes=1)) == tick + 1
    simulated = RevisitClock(1.0, origin=moment, origin_wall=0.0, speed=3600.0)
    assert simulated.real_seconds_per_tick() == 1.0
    # Its origin was read at Unix time 0, so by now it has run far ahead of the wall clock.
    assert simulated.tick() > RevisitClock().tick()


def test_spread_ticks_give_each_page_its_own_phase_under_one_tick_and_the_same_on_every_worker():
    spread = RevisitClock(tick_hours=1.0, spread=True)
    phases = [spread.for_page(f"https://site-{n}.example/events").phase_hours for n in range(2000)]
    assert all(0 <= phase < 1 for phase in phases)
    # Spread over the hour: each quarter of it holds about a quarter of the pages.
    quarters = np.bincount((np.array(phases) * 4).astype(int), minlength=4)
    assert quarters.min() > 400 and quarters.max() < 600
    page = spread.for_page(URL)
    assert page == RevisitClock(tick_hours=1.0, spread=True).for_page(URL) and page.for_page(URL) == page
    assert CLOCK.for_page(URL) == CLOCK
    # Tick i of the page ends i hours plus its phase after the epoch, and the moments after it are the next tick's.
    end = page.tick_time(DAY)
    assert end == CLOCK.tick_time(DAY) + timedelta(hours=page.phase_hours)
    assert page.tick_of(end) == DAY and page.tick_of(end + timedelta(seconds=1)) == DAY + 1
    assert page.tick() in (CLOCK.tick(), CLOCK.tick() - 1)


def test_a_page_with_a_phase_learns_what_a_page_on_the_grid_learns_of_the_same_times_shifted_by_it():
    spread = RevisitClock(tick_hours=1.0, spread=True)
    shift = timedelta(hours=spread.for_page(URL).phase_hours)
    assert shift > timedelta(0)
    # The same page history twice: on the epoch's grid, and on the page's own grid with every time shifted
    # by its phase — listed times with a minute (a time of day; a bare date is a day on either grid).
    listed = [CLOCK.tick_time(DAY + 24 * d + 7) + timedelta(minutes=20) for d in range(20)]
    later = [CLOCK.tick_time(DAY + 24 * 20 + 9) + timedelta(minutes=5), None]
    learned = []
    for clock, moved in ((CLOCK, timedelta(0)), (spread, shift)):
        source = start_watching(URL, "example.org", DAY + 24 * 20)
        first = RevisitOutcome(site="example.org", page_url=URL, tick_at=clock.for_page(URL).tick_time(DAY + 24 * 20),
                               read=True, listed=[moment + moved for moment in listed])
        observe(source, first, clock, PRIOR)
        revisit = RevisitOutcome(site="example.org", page_url=URL, new_items=2,
                                 tick_at=clock.for_page(URL).tick_time(DAY + 24 * 20 + 12),
                                 read=True, published=[later[0] + moved, None])
        counted = observe(source, revisit, clock, PRIOR).counted_ticks
        figures = {name: round(value, 9) for name, value in source.figures(DAY + 24 * 21).items()}
        learned.append((counted, source.known_from, source.recent_updates, figures,
                        np.round(source.counts, 9).tolist(), np.round(source.exposure, 9).tolist()))
    assert learned[0] == learned[1]
    # The timed item at 09:05 is tick 10 of the day; the undated one goes to the hour the page publishes at.
    assert learned[0][0] == (DAY + 24 * 20 + 8, DAY + 24 * 20 + 10)


def test_a_new_watch_is_read_at_once_and_its_dated_items_are_the_pages_history():
    now = DAY + 24 * 20
    source = start_watching(URL, "example.org", now)
    request = first_read(source, CLOCK)
    assert (request.reason, request.tick_at, source.fetches) == ("revisit", CLOCK.tick_time(now), 1)
    # Its listing shows 20 items, one a day at 07:20 UTC for the last 20 days.
    listed = [CLOCK.tick_time(DAY + 24 * d + 7) + timedelta(minutes=20) for d in range(20)]
    observation = observe(source, _outcome(now, listed=listed), CLOCK, PRIOR)
    assert observation.in_order and observation.learned.updates == pytest.approx(20)
    assert source.known_from == DAY + 8 and source.known_until == now
    seven = slots_of(np.array([DAY + 8]), 1.0)[0] % 24
    by_hour = np.array(source.counts).reshape(7, 24).sum(0)
    assert by_hour.argmax() == seven and by_hour.sum() == pytest.approx(by_hour[seven])
    assert sum(source.exposure) == pytest.approx(now - DAY - 7, rel=0.2)  # faded: a little below the ticks
    # The model's window marks the known ticks and the update at 07:20 today; nothing after the read is known.
    window = known_windows([source], [now + 3], 24, 1.0)
    assert window.known[0].tolist() == [True] * 21 + [False] * 3
    assert window.updated[0].tolist().count(True) == 1 and window.ticks[0][window.updated[0]][0] == DAY + 24 * 19 + 8
    # The first read counts in no live figure: what it lists predates the watch.
    assert (source.items, source.update_ticks) == (0, 0)


def test_a_revisit_reveals_only_the_ticks_since_the_last_read_and_shares_an_undated_item_over_them():
    source = start_watching(URL, "example.org", 100)
    observe(source, _outcome(100), CLOCK, PRIOR)
    before = sum(source.counts)
    observe(source, _outcome(106, 1, [None]), CLOCK, PRIOR)
    # One update, shared over ticks 101…106 (the prior is flat: evenly), none placed outside them.
    assert sum(source.counts) == pytest.approx(before + 1, rel=0.01)
    assert sum(source.exposure) == pytest.approx(7, rel=0.01)
    assert len(source.recent_updates) == 1 and 101 <= source.recent_updates[0] <= 106
    window = known_windows([source], [110], 12, 1.0)
    assert window.known[0].tolist() == [False] + [True] * 7 + [False] * 4


def test_outcomes_give_timeliness_friendliness_delay_and_fetches_per_item_as_defined():
    source = start_watching(URL, "example.org", 100)
    # Fetches at 101 (nothing), 103 (one item listed at 102:30 → tick 103: timely), 106 (two items without a
    # time: two updates over ticks 104…106, equally likely under a flat rhythm → the earliest two, 104 and 105,
    # late; each item expected at 104:30, 1.5 h before the revisit).
    source.fetches = 3
    assert observe(source, _outcome(101), CLOCK, PRIOR).counted_ticks == ()
    # Each read says which update ticks it added to the figures (streamed, so any period can be scored).
    assert observe(source, _outcome(103, 1, [CLOCK.tick_time(102) + timedelta(minutes=30)]), CLOCK,
                   PRIOR).counted_ticks == (103,)
    assert observe(source, _outcome(106, 2, [None, None]), CLOCK, PRIOR).counted_ticks == (104, 105)
    assert 103 in source.recent_updates and source.etag == '"v2"'
    figures = source.figures(now_tick=110)
    # 10 ticks, update ticks {103, 104, 105}; fetches at 101 and 106 fell on quiet ticks.
    assert figures["timeliness"] == pytest.approx(1 / 3)
    assert figures["friendliness"] == pytest.approx((7 - 2) / 7)
    assert figures["delay_h"] == pytest.approx((0.5 + 1.5 + 1.5) / 3)
    assert figures["fetches_per_item"] == 1.0


def test_a_discovered_page_whose_first_read_shows_no_list_is_withdrawn_and_only_then():
    def first_reads(discovered: bool, *outcomes: RevisitOutcome) -> list[str | None]:
        source = start_watching(URL, "example.org", 100, discovered=discovered)
        return [withdrawal_reason(source, outcome, observe(source, outcome, CLOCK, PRIOR)) for outcome in outcomes]

    dated = [CLOCK.tick_time(90), None]
    # A find whose first read lists dated items stays, and so does it when a later read lists none (a page
    # emptied); an undated list whose items link to their pages stays too.
    assert first_reads(True, _outcome(100, listed=dated), _outcome(101)) == [None, None]
    assert first_reads(True, _outcome(100, listed=[None, None], linked=2)) == [None]
    # A find whose first read shows no list goes, with the reason; a failed read before it decides nothing.
    assert first_reads(True, _outcome(100, read=False), _outcome(101)) == [None, "its first read shows no list"]
    # Records neither dated nor linked (an article's paragraphs) are no list of items.
    assert first_reads(True, _outcome(100, listed=[None, None, None])) == ["its first read shows no dated or "
                                                                           "linked list"]
    # A page a person listed is kept however it reads.
    assert first_reads(False, _outcome(100)) == [None]


def test_items_from_before_the_watch_began_are_not_counted():
    source = start_watching(URL, "example.org", 100)
    # The first read fails; the next read is the page's first: what it lists is history — listed before the
    # watch began, or undated — except the item listed after the watch began, which counts.
    assert observe(source, _outcome(100, read=False), CLOCK, PRIOR).in_order
    listed = [CLOCK.tick_time(101), None, CLOCK.tick_time(90)]
    assert observe(source, _outcome(102, 3, listed, listed=listed), CLOCK, PRIOR).in_order
    assert (source.items, source.update_ticks) == (1, 1)
    # Later revisits count undated items (placed at the first tick since the previous revisit).
    assert observe(source, _outcome(105, 1, [None]), CLOCK, PRIOR).in_order
    assert (source.items, source.update_ticks) == (2, 2)


def test_an_event_list_is_detected_at_its_first_read_and_its_dates_are_not_publication_times():
    now = DAY + 24 * 5
    source = start_watching(URL, "example.org", now)
    events = [CLOCK.tick_time(now) + timedelta(days=d) for d in (3, 10, 17, 24)] + [CLOCK.tick_time(now - 30)]
    learned = observe(source, _outcome(now, listed=events), CLOCK, PRIOR).learned
    assert learned.event_list and source.dates_are_events and sum(source.counts) == 0
    # A new event next month: an update somewhere since the last read, never at its event date.
    observe(source, _outcome(now + 4, 1, [CLOCK.tick_time(now) + timedelta(days=40)]), CLOCK, PRIOR)
    assert sum(source.counts) == pytest.approx(1, rel=0.01)
    assert now < source.recent_updates[0] <= now + 4
    # Live figures: at the earliest of equally likely ticks, late, never timely.
    assert (source.items, source.timely) == (1, 0)


def test_a_date_after_the_revisit_is_an_event_date_and_a_little_clock_skew_is_tolerated():
    source = start_watching(URL, "example.org", 100)
    assert observe(source, _outcome(101), CLOCK, PRIOR).in_order
    learned = observe(source, _outcome(105, 1, [CLOCK.tick_time(105) + timedelta(days=30)]), CLOCK, PRIOR).learned
    assert learned.future_dates == 1
    # Read as undated: one update somewhere in ticks 102…105 (the earliest of equally likely ticks, not the
    # revisit's), expected at their middle, 2 h before the revisit.
    assert (source.items, source.update_ticks, source.timely) == (1, 1, 0)
    assert source.delay_hours == pytest.approx(2.0)
    # A site clock a few minutes ahead still dates the item at the revisit.
    assert observe(source, _outcome(108, 1, [CLOCK.tick_time(108) + timedelta(minutes=5)]), CLOCK, PRIOR).in_order
    assert (source.items, source.timely) == (2, 1) and 108 in source.recent_updates


def test_old_items_that_reappear_are_not_new_updates():
    source = start_watching(URL, "example.org", 200)
    observe(source, _outcome(200), CLOCK, PRIOR)
    learned = observe(source, _outcome(205, 2, [CLOCK.tick_time(150), CLOCK.tick_time(204)]), CLOCK, PRIOR).learned
    assert learned.republished == 1 and sum(source.counts) == pytest.approx(1, rel=0.01)


def test_an_outcome_older_than_the_last_one_counts_nothing_twice():
    source = start_watching(URL, "example.org", 100)
    assert observe(source, _outcome(101), CLOCK, PRIOR).in_order
    assert observe(source, _outcome(105, 1, [None]), CLOCK, PRIOR).in_order
    assert not observe(source, _outcome(103, 1, [None]), CLOCK, PRIOR).in_order
    assert (source.items, source.update_ticks) == (1, 1)


def test_a_failed_read_teaches_nothing_and_the_next_read_covers_the_whole_gap():
    source = start_watching(URL, "example.org", 100)
    observe(source, _outcome(100), CLOCK, PRIOR)
    # The page 404s at 101…103 and comes back at 104 with one item from 102.
    for tick in (101, 102, 103):
        assert observe(source, _outcome(tick, read=False), CLOCK, PRIOR).learned is None
    assert source.known_until == 100 and sum(source.exposure) == pytest.approx(1)
    observe(source, _outcome(104, 1, [CLOCK.tick_time(102)]), CLOCK, PRIOR)
    assert source.known_until == 104 and sum(source.exposure) == pytest.approx(5, rel=0.01)
    assert source.recent_updates == [102]


def test_a_burst_is_one_busy_tick_for_the_rhythm_and_every_item_for_the_figures():
    source = start_watching(URL, "example.org", 100)
    observe(source, _outcome(100), CLOCK, PRIOR)
    burst = 5000
    learned = observe(source, _outcome(102, burst, [CLOCK.tick_time(102)] * burst), CLOCK, PRIOR).learned
    assert learned.burst and sum(source.counts) == pytest.approx(1, rel=0.01)
    assert (source.items, source.update_ticks, source.timely) == (burst, 1, 1)


@pytest.mark.parametrize("threshold, fetches", [(0.0, True), (1.01, False)])
def test_a_batch_of_ticks_is_decided_at_the_threshold(threshold, fetches):
    sources = [start_watching(f"{URL}/{n}", "example.org", 100) for n in range(3)]
    due = [(source, tick_message(source, 101, CLOCK)) for source in sources]
    decisions = decide(_rhythm_only(threshold), due, CLOCK, max_interval_ticks=None)
    assert [d.message.fetch for d in decisions] == [fetches] * 3
    assert all(0 <= d.message.probability <= 1 and d.message.policy == "test-rhythm" for d in decisions)
    assert [source.last_tick for source in sources] == [101] * 3
    if fetches:
        request = decisions[0].request
        assert (request.reason, request.url, request.source_url) == ("revisit", f"{URL}/0", f"{URL}/0")
        assert request.tick_at == CLOCK.tick_time(101) and request.crawl_id == "revisit-101"
    else:
        assert all(d.request is None for d in decisions)
    # The same tick again (a restart resends it) has the same ids: its rows and requests replace, not add.
    assert tick_message(sources[0], 101, CLOCK).event_id == due[0][1].event_id


def test_exploration_probes_a_small_share_of_ticks_and_the_same_tick_draws_the_same():
    model = _rhythm_only(1.01)
    source = start_watching(URL, "example.org", DAY)
    explored = [tick for tick in range(DAY + 1, DAY + 1 + 24 * 30)
                if decide(model, [(source, tick_message(source, tick, CLOCK))], CLOCK, None, None, 0.05)[0].explored]
    assert 0.02 * 720 < len(explored) < 0.09 * 720
    again = start_watching(URL, "example.org", DAY)
    assert [t for t in range(DAY + 1, DAY + 1 + 24 * 30)
            if decide(model, [(again, tick_message(again, t, CLOCK))], CLOCK, None, None, 0.05)[0].explored] == explored


def _daily_at_seven(model: RhythmLSTM, days: int, dated: bool) -> tuple[list[list[int]], np.ndarray]:
    """A page publishing one item a day at 07:20 UTC, watched from cold start (its first read lists 20 earlier
    ones, dated or not), decided tick by tick as the stream decides by default (the settings' longest interval
    and exploration share): the hours of day fetched, per day, and P per hour of the day after."""
    default = {name: field.default for name, field in Settings.model_fields.items()}
    bound = starvation_ticks(default["revisit_max_interval_hours"], CLOCK.tick_hours)
    start = DAY + 24 * 20
    source = start_watching(URL, "example.org", start)
    first_read(source, CLOCK)
    history = [CLOCK.tick_time(DAY + 24 * d + 7) + timedelta(minutes=20) for d in range(20)]
    observe(source, _outcome(start, listed=history if dated else [None] * 20), CLOCK, model.prior)
    published = {DAY + 24 * d + 8 for d in range(20, 20 + days)}
    fetched_hours: list[list[int]] = [[] for _ in range(days)]
    last_read = start
    for tick in range(start + 1, start + 24 * days + 1):
        decision = decide(model, [(source, tick_message(source, tick, CLOCK))], CLOCK, bound, None,
                          default["revisit_exploration_share"])[0]
        if not decision.message.fetch:
            continue
        fetched_hours[(tick - start - 1) // 24].append((tick - 1 - DAY) % 24)
        new = sorted(t for t in published if last_read < t <= tick)
        observe(source, _outcome(tick, len(new), [CLOCK.tick_time(t - 1) + timedelta(minutes=20) for t in new]),
                CLOCK, model.prior)
        last_read = tick
    after = start + 24 * days
    ticks = list(range(after + 1, after + 25))  # hours 0…23 of the next day
    return fetched_hours, model.predict(known_windows([source] * 24, ticks, model.window, 1.0))


def test_a_page_publishing_at_seven_is_fetched_at_seven_within_three_days():
    # Fetch where an update is three times likelier than the page's usual hour.
    model = _rhythm_only(3.0)
    days, _ = _daily_at_seven(model, 4, dated=True)
    # From its first read's dated history, at once — and at few other hours (an exploring probe at most).
    assert all(7 in hours and len(hours) <= 2 for hours in days), days


@pytest.mark.parametrize("dated", [True, False])
def test_the_shipped_model_learns_a_seven_oclock_page_within_three_days(dated):
    from models.revisit.rhythm_model import load_model

    days, tomorrow = _daily_at_seven(load_model(), 3, dated)
    # Fetched at 07:00 on the third day; its own hour is the likeliest of the day (dated or not: when its first
    # read dates nothing, a revisit sees an item's time). At the shipped threshold a page this busy is also
    # fetched at most other hours (README: the threshold is EPA's, whose pages are quieter).
    assert 7 in days[2], days
    assert int(np.argmax(tomorrow)) == 7 and tomorrow[7] > 5 * np.median(tomorrow), tomorrow.round(4)


def test_a_revisit_carries_when_its_list_was_last_read():
    # For a read-on's dates to go by (agents.overflow.dated_since): none before the page's first read, then the
    # tick of its last successful read — a failed one does not move it.
    always = _rhythm_only(0.0)
    source = start_watching(URL, "example.org", 100)
    assert first_read(source, CLOCK).list_read_before is None
    assert decide(always, [(source, tick_message(source, 101, CLOCK))], CLOCK, None)[0].request.list_read_before is None
    observe(source, _outcome(100), CLOCK, PRIOR)
    observe(source, _outcome(101, read=False), CLOCK, PRIOR)
    revisit = decide(always, [(source, tick_message(source, 102, CLOCK))], CLOCK, None)[0].request
    assert revisit.list_read_before == CLOCK.tick_time(100)


def test_no_page_starves_a_model_that_never_fetches_still_revisits_every_longest_interval():
    never, always = _rhythm_only(1.01), _rhythm_only(0.0)
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


def test_the_pages_last_modified_dates_its_newest_item_when_the_listing_gives_only_the_day():
    from email.utils import format_datetime

    start = DAY + 10
    source = start_watching(URL, "example.org", start)
    observe(source, _outcome(start), CLOCK, PRIOR)
    published = CLOCK.tick_time(start + 4) - timedelta(minutes=20)  # in the tick ending at start + 4
    day = datetime.combine(published.date(), datetime.min.time(), UTC)
    outcome = _outcome(start + 6, 1, [day]).model_copy(update={"last_modified": format_datetime(published, usegmt=True)})
    observe(source, outcome, CLOCK, PRIOR)
    assert source.recent_updates == [start + 4] and source.delay_hours == pytest.approx(2 + 20 / 60)
    # A Last-Modified at or after the fetch (a page that always says "now") dates nothing.
    now = format_datetime(CLOCK.tick_time(start + 9) + timedelta(seconds=5), usegmt=True)
    observe(source, _outcome(start + 9, 1, [day]).model_copy(update={"last_modified": now}), CLOCK, PRIOR)
    assert len(source.recent_updates) == 2 and source.recent_updates[-1] > start + 6


def test_the_guaranteed_revisit_lands_at_the_likeliest_hour_of_the_interval():
    # A model that never asks for a fetch: only the longest-interval bound revisits the page — at 07:00, the
    # hour its rhythm expects items, not 24 h after whatever hour the previous revisit fell on.
    days, _ = _daily_at_seven(_rhythm_only(1e9), 4, dated=True)
    assert all(7 in hours for hours in days[1:]), days


def test_items_dated_by_day_alone_take_the_hours_the_page_reveals_later():
    from email.utils import format_datetime

    from agents.page_knowledge import rhythm_counts

    start = DAY + 24 * 20
    source = start_watching(URL, "example.org", start)
    # The listing dates its 20 items by day only: nothing is known of their hours.
    observe(source, _outcome(start, listed=[CLOCK.tick_time(DAY + 24 * d) for d in range(20)]), CLOCK, PRIOR)
    hours = rhythm_counts(source).reshape(7, 24).sum(0)
    assert hours.max() < 1.5 * hours.mean()
    # Three revisits each find one item, dated by day too, whose time (07:20) the page's Last-Modified gives.
    for d in (20, 21, 22):
        published = CLOCK.tick_time(DAY + 24 * d + 7) + timedelta(minutes=20)
        outcome = _outcome(DAY + 24 * d + 12, 1, [CLOCK.tick_time(DAY + 24 * d)])
        observe(source, outcome.model_copy(update={"last_modified": format_datetime(published, usegmt=True)}), CLOCK,
                PRIOR)
    # The listing's twenty earlier items are now read at the hour the page has shown: most of them at 07:00.
    hours = rhythm_counts(source).reshape(7, 24).sum(0)
    assert hours.argmax() == 7 and hours[7] > 0.5 * hours.sum(), hours.round(2)
