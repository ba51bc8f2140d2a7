"""The page's rhythm, TSP-R and the cold-start protocol on series small enough to check by hand; the stream's
knowledge of a page equals the evaluation's for the same reads."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agents.page_knowledge import known_windows
from agents.revisit import RevisitClock, observe, start_watching
from models.revisit.coldstart import Watching, evaluate_cold_start, fold_of, grid_of, model_scorer
from models.revisit.data import to_series
from models.revisit.rhythm import (
    HALF_LIFE_DAYS,
    RhythmPrior,
    fading,
    fit_prior,
    slot_rates,
    slots_of,
    summarize_rhythm,
)
from models.revisit.rhythm_model import (
    FIRST_READ_ITEMS,
    RhythmLSTM,
    epoch_start,
    first_read_start,
    model_inputs,
    train,
)
from schemas.revisit import RevisitOutcome
from tests.conftest import TRAINING

START = datetime(2024, 1, 1, tzinfo=UTC)  # a Monday
HOUR = timedelta(hours=1)


def _daily(name: str, hour: float, days: int = 60, every: int = 1):
    return to_series(name, [START + timedelta(days=d, hours=hour) for d in range(0, days, every)], HOUR)


def test_slots_are_hours_of_week_by_the_ticks_start_and_days_at_daily_ticks():
    monday_nine = round(datetime(2024, 1, 1, 10, tzinfo=UTC).timestamp() / 3600)  # the tick (09:00, 10:00]
    assert slots_of(np.array([monday_nine]), 1.0).tolist() == [9]
    assert slots_of(np.array([monday_nine + 24 * 6]), 1.0).tolist() == [6 * 24 + 9]
    tuesday = round(datetime(2024, 1, 3, tzinfo=UTC).timestamp() / 86400)  # the day ending Wednesday 00:00
    assert slots_of(np.array([tuesday]), 24.0).tolist() == [1]


def test_the_rhythm_starts_at_the_prior_and_moves_to_the_pages_own_clock():
    prior = RhythmPrior(1.0, 0.01, tuple([0.5] * 23 + [12.5]), (1.0,) * 7)  # the training pages post at 23:00
    empty = slot_rates(prior, np.zeros(168), np.zeros(168))
    assert empty.reshape(7, 24).argmax(1).tolist() == [23] * 7
    # Twenty days seen, one update a day at 07:00: its own hour wins everywhere, its rate near one a day.
    counts, exposure = np.zeros(168), np.full(168, 20 / 7)
    counts[[d * 24 + 7 for d in range(7)]] = 20 / 7
    rates = slot_rates(prior, counts, exposure).reshape(7, 24)
    assert rates.argmax(1).tolist() == [7] * 7
    assert 0.6 < rates.sum(1).mean() < 1.1


def test_a_pages_peaks_are_told_only_once_it_has_shown_an_update_of_its_own():
    prior = RhythmPrior(1.0, 0.01, tuple([0.5] * 23 + [12.5]), (1.0,) * 7)
    # Watched a year without an update (a listing whose items are years old): its rate is the prior's, and
    # the prior's busiest hours are no peaks of this page.
    quiet = summarize_rhythm(prior, np.zeros(168), np.full(168, 52.0))
    assert quiet.peaks == () and quiet.peak_share == 0
    counts = np.zeros(168)
    counts[[d * 24 + 7 for d in range(7)]] = 20 / 7
    busy = summarize_rhythm(prior, counts, np.full(168, 20 / 7))
    assert busy.peaks[0].endswith("07:00") and len(busy.peaks) == 3


def test_the_sums_fade_by_half_in_a_half_life():
    assert fading(1.0) ** (HALF_LIFE_DAYS * 24) == pytest.approx(0.5)
    assert fading(24.0) ** HALF_LIFE_DAYS == pytest.approx(0.5)


def test_the_prior_is_the_typical_pages_rate_and_shape():
    counts = np.zeros((3, 168))
    counts[:, 21] = [10, 20, 30]  # Monday 21:00
    prior = fit_prior(counts, np.full((3, 168), 10.0), 1.0)
    assert np.argmax(prior.hour_shape) == 21 and np.argmax(prior.day_shape) == 0
    assert prior.rate == pytest.approx(20 / 1680)
    assert np.mean(prior.hour_shape) == pytest.approx(1) and np.mean(prior.day_shape) == pytest.approx(1)


def test_a_first_read_shows_the_last_twenty_items():
    series = _daily("s", 9.5, days=40)
    watch = series.train_end
    first = first_read_start(series, watch)
    items_before = series.counts[first:watch].sum()
    assert items_before == FIRST_READ_ITEMS and series.counts[first] > 0
    assert first_read_start(series, 1) == 1  # nothing listed yet


def test_a_watch_knows_only_what_its_fetches_revealed():
    series = _daily("s", 9.5, days=60)
    a, b = 24 * 40, 24 * 50
    seen: list[tuple[int, int, int]] = []

    def every_fifth(watching, pairs, ticks):
        window = watching.known_window(pairs, ticks, 8)
        for row in range(len(pairs)):
            known = window.ticks[row][window.known[row]] - epoch_start(series)
            seen.append((int(ticks[row]), int(known.max()) if len(known) else -1,
                         int(watching.last_fetch[pairs[row]])))
        return np.where((ticks - a) % 5 == 4, 1.0, 0.0)

    decisions = Watching([series], [(a, b)], np.array([0.5])).run(every_fifth)
    assert np.flatnonzero(decisions[0][0]).tolist() == list(range(4, b - a, 5))
    # At every tick the last known tick is the last fetch (the first read at a − 1 before any), never later.
    for tick, last_known, last_fetch in seen:
        assert last_known == last_fetch < tick
        assert last_fetch == (a - 1 if tick < a + 5 else a + 4 + 5 * ((tick - a - 5) // 5))


def test_the_stream_knows_a_page_as_the_evaluation_does_after_the_same_reads():
    """The live page state (agents.page_knowledge) and the evaluation's watch give the model the same input:
    one implementation of what a crawler knows."""
    series = to_series("s", [START + timedelta(hours=h) for h in np.cumsum(np.tile([7.25, 30.5, 19.0], 30))], HOUR)
    a = series.train_end
    origin = epoch_start(series)
    prior = RhythmPrior(1.0, 0.01, tuple(np.linspace(0.5, 1.5, 24)), (1.0,) * 7)
    model = RhythmLSTM(prior)
    fetch_every = 7
    watching = Watching([series], [(a, len(series.counts))], np.array([0.5]))
    inputs_offline = {}

    def scorer(w, pairs, ticks):
        window = w.known_window(pairs, ticks, model.window)
        inputs_offline[int(ticks[0])] = model_inputs(prior, window)
        return np.where((ticks - a) % fetch_every == fetch_every - 1, 1.0, 0.0)

    watching.run(scorer)
    clock = RevisitClock(1.0)
    source = start_watching("https://example.org/s", "example.org", origin + a - 1)
    item_ticks = np.repeat(np.arange(len(series.counts)), series.counts)
    listed = [clock.tick_time(origin + t) for t in item_ticks[item_ticks < a][-FIRST_READ_ITEMS:]]
    observe(source, RevisitOutcome(site="example.org", page_url=source.page_url,
                                   tick_at=clock.tick_time(origin + a - 1), read=True, listed=listed), clock, prior)
    last = a - 1
    for tick in range(a, a + 6 * fetch_every):
        window = known_windows([source], [origin + tick], model.window, 1.0)
        live_inputs, live_base = model_inputs(prior, window)
        offline_inputs, offline_base = inputs_offline[tick]
        assert np.allclose(live_inputs, offline_inputs, atol=1e-5), tick
        assert np.allclose(live_base, offline_base, atol=1e-5), tick
        if (tick - a) % fetch_every == fetch_every - 1:
            new = item_ticks[(item_ticks > last) & (item_ticks <= tick)]
            observe(source, RevisitOutcome(site="example.org", page_url=source.page_url,
                                           tick_at=clock.tick_time(origin + tick), read=True, new_items=len(new),
                                           published=[clock.tick_time(origin + t) for t in new]), clock, prior)
            last = tick


def test_tsp_r_learns_a_clock_the_prior_does_not_have_and_keeps_its_recipe(tmp_path):
    sources = [_daily(f"s{n}", 7.5 + 0.05 * n, days=90) for n in range(4)]
    model = train(sources, [s.train_end for s in sources], epochs=2)
    # The prior learned the training pages' 07:00.
    assert int(np.argmax(model.prior.hour_shape)) == 7
    model.threshold, model.validation_curve = 0.2, [(0.1, 0.99, 0.5), (0.2, 0.96, 0.8), (0.4, 0.7, 0.95)]
    assert model.threshold_for(0.95) == 0.2 and model.threshold_for(0.9) == 0.2 and model.threshold_for(0.5) == 0.4
    model.save(tmp_path / "tsp-r.pt")
    loaded = RhythmLSTM.load(tmp_path / "tsp-r.pt")
    # A page it never saw, publishing at 15:00: its first read's twenty items put it on its own clock.
    unseen = _daily("new", 15.5, days=90)
    a, b = unseen.train_end, unseen.train_end + 24 * 7
    watching = Watching([unseen], [(a, b)], np.array([1.0]))  # never fetches: the first read is all it knows
    probabilities = []

    def score(w, pairs, ticks):
        probabilities.append(model_scorer(loaded)(w, pairs, ticks)[0])
        return np.zeros(len(pairs))

    watching.run(score)
    hours = (np.arange(a, b) + epoch_start(unseen) - 1) % 24
    p = np.array(probabilities)
    assert p[hours == 15].mean() > 5 * p[hours != 15].mean()


def test_folds_hold_each_source_out_once():
    sources = [_daily(f"s{n}", 9.5) for n in range(7)]
    assigned = fold_of(sources, 3)
    assert sorted(np.bincount(assigned).tolist()) == [2, 2, 3]


@TRAINING
def test_the_cold_start_evaluation_reports_every_policy_with_thresholds_chosen_on_training_sources():
    sources = [_daily(f"s{n}", 7.5 + (n % 3) * 4, days=70, every=1 + n % 2) for n in range(6)]
    result = evaluate_cold_start(sources, None, folds=2, seed=1)
    for name in [f"rc_{k}" for k in range(1, 24)] + ["adaptive"]:
        assert {"timeliness", "friendliness", "delay_h", "fetches_per_item", "micro"} <= set(result[name])
    for name in ("poisson", "how", "logreg", "rhythm", "model"):
        assert len(result[name]["curve"]) == len(grid_of(name))
        for key in ("at_t95", "at_t90"):
            chosen = result[name][key]
            assert chosen is None or len(chosen["thresholds"]) == 2
    # On pages this regular the page's own clock, learned from its first read, catches every item at a
    # friendliness no fixed interval comes near (RC(24) would catch a daily item once a day at 0.96 at best).
    assert any(t == 1.0 and f > 0.9 for t, f in result["rhythm"]["curve"])
    assert any(t == 1.0 and f > 0.9 for t, f in result["model"]["curve"])
    assert result["rc_2"]["timeliness"] < 0.6


def test_the_evaluation_watches_with_the_schedulers_rules_as_the_stream_decides():
    """A score that never fetches: the evaluation's watch and the live stage both revisit by the scheduler's
    rules alone — the longest interval at the likeliest tick left in it, and the same probes — at the same
    ticks (one implementation, models.revisit.schedule)."""
    from agents.revisit import decide, first_read, tick_message
    from models.revisit.schedule import Rules

    series = _daily("s", 7.25, days=70)
    a, b = series.train_end, series.train_end + 24 * 6
    origin = epoch_start(series)
    prior = RhythmPrior(1.0, 0.01, tuple([1.0] * 24), (1.0,) * 7)
    model = RhythmLSTM(prior)
    model.threshold, model.version = 1e9, "never"  # the model alone would never fetch
    rules = Rules(prior, 24, 0.05)
    watching = Watching([series], [(a, b)], np.array([1e9]))
    offline = np.flatnonzero(watching.run(model_scorer(model), rules)[0][0]) + a
    # Without the rules nothing is fetched; with them at least once a day, near the page's 07:00.
    assert not Watching([series], [(a, b)], np.array([1e9])).run(model_scorer(model))[0][0].any()
    assert len(offline) >= 6 and np.diff(np.concatenate([[a - 1], offline])).max() <= 24
    assert sum((origin + tick - 1) % 24 == 7 for tick in offline) >= 4

    clock = RevisitClock(1.0)
    source = start_watching(series.source_id, "example.org", origin + a - 1)
    first_read(source, clock)
    item_ticks = np.repeat(np.arange(len(series.counts)), series.counts)
    listed = [clock.tick_time(origin + t) for t in item_ticks[item_ticks < a][-FIRST_READ_ITEMS:]]
    observe(source, RevisitOutcome(site="example.org", page_url=source.page_url,
                                   tick_at=clock.tick_time(origin + a - 1), read=True, listed=listed), clock, prior)
    live, last = [], a - 1
    for tick in range(a, b):
        decision = decide(model, [(source, tick_message(source, origin + tick, clock))], clock, rules.max_interval_ticks,
                          exploration_share=rules.exploration_share)[0]
        if decision.message.fetch:
            live.append(tick)
            new = item_ticks[(item_ticks > last) & (item_ticks <= tick)]
            observe(source, RevisitOutcome(site="example.org", page_url=source.page_url,
                                           tick_at=clock.tick_time(origin + tick), read=True, new_items=len(new),
                                           published=[clock.tick_time(origin + t) for t in new]), clock, prior)
            last = tick
    assert live == offline.tolist()


def test_the_guaranteed_revisit_is_one_tick_per_interval_at_the_pages_likeliest():
    """A page whose rate peaks at 07:00 and falls after it: with a 12-h bound, read at its peak and at the
    bound — not at every tick of the falling rate (each the likeliest of what is left of its interval)."""
    from models.revisit.schedule import Rules

    counts, exposure = np.zeros((1, 168)), np.full((1, 168), 10.0)
    for day in range(7):
        for hour in range(24):
            counts[0, day * 24 + hour] = max(0, 10 - abs(hour - 7)) * 0.5
    midnight = 24 * 20_000
    for bound, expected in ((12, [7, 19] * 3), (24, [7] * 3)):
        rules, hours, last = Rules(RhythmPrior.flat(1.0, 0.01), bound), [], midnight
        for tick in range(midnight + 1, midnight + 24 * 3 + 1):
            if rules.starved(counts, exposure, np.array([tick]), np.array([tick - last]))[0]:
                hours.append((tick - 1) % 24)
                last = tick
        assert hours == expected, bound
