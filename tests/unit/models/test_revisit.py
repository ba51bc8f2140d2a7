"""Revisit series, policies and metrics on series small enough to check by hand."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from models.revisit.data import load_events, to_series, usable_series
from models.revisit.evaluation import evaluate_policies, summarize, window_counts
from models.revisit.policies import adaptive, hour_of_week, poisson, poisson_rate, rc

START = datetime(2024, 1, 1, tzinfo=UTC)  # a Monday
HOUR = timedelta(hours=1)


def _series(event_hours: list[float]):
    return to_series("s", [START + timedelta(hours=h) for h in event_hours], HOUR)


def test_events_land_in_the_tick_that_ends_at_or_after_them():
    series = _series([0.5, 1.0, 1.2, 5.0])
    # The grid starts one tick before the first event's hour: tick 1 is (00:00−1h, 00:00], tick 2 (00:00, 01:00].
    assert series.start == START - HOUR
    assert series.counts.tolist() == [0, 0, 2, 1, 0, 0, 1]
    assert series.updated.tolist() == [False, False, True, True, False, False, True]


def test_metrics_of_a_window_by_hand():
    series = _series([0.5, 3.5, 3.7])  # updates in ticks 2 and 5
    fetch = np.array([False, True, False, False, True])  # window ticks 1…5: fetch at ticks 2 and 5
    counts = window_counts(series, 1, 6, fetch)
    hit, updates, rest, quiet, delay, items, fetches = counts
    assert (hit, updates, rest, quiet, items, fetches) == (2, 2, 3, 3, 3, 2)
    # Items at 1.5 h, 4.5 h and 4.7 h after the grid start; fetches at the ends of ticks 2 (2 h) and 5 (5 h).
    assert delay == pytest.approx(0.5 + 0.5 + 0.3)
    figures = summarize([counts])
    assert figures["timeliness"] == 1.0 and figures["friendliness"] == 1.0
    assert figures["delay_h"] == pytest.approx(1.3 / 3, abs=1e-4) and figures["fetches_per_item"] == pytest.approx(0.6667)


def test_an_item_no_fetch_follows_waits_until_the_window_ends():
    series = _series([0.5, 8.5])
    counts = window_counts(series, 1, 11, np.zeros(10, dtype=bool))
    assert counts[0] == 0 and counts[4] == pytest.approx((10 - 1.5) + (10 - 9.5))


def test_fixed_intervals():
    assert rc(7, 1).all()
    assert np.flatnonzero(rc(7, 3)).tolist() == [2, 5]


def test_the_adaptive_interval_shrinks_on_change_and_grows_without():
    busy = _series([h + 0.5 for h in range(400)])  # an update every tick
    quiet = _series([0.5, 399.5])
    busy_fetches = np.flatnonzero(adaptive(busy, 1, 300))
    quiet_fetches = np.flatnonzero(adaptive(quiet, 1, 300))
    assert np.diff(busy_fetches)[-5:].tolist() == [1] * 5  # down to the 1-tick bound
    assert len(quiet_fetches) < 15 and np.diff(quiet_fetches)[-1] > 50  # growing towards 168


def test_poisson_fetches_more_often_for_busier_sources_and_lower_thresholds():
    busy, slow = _series([h * 2 + 0.5 for h in range(100)]), _series([h * 20 + 0.5 for h in range(20)])
    assert poisson_rate(busy, 100) > poisson_rate(slow, 100) > 0
    assert poisson(busy, 100, 100, 200, 0.5).sum() > poisson(slow, 100, 100, 200, 0.5).sum()
    assert poisson(slow, 100, 100, 200, 0.1).sum() > poisson(slow, 100, 100, 200, 0.5).sum()


def test_hour_of_week_learns_the_hour_a_source_posts_at():
    # Every day at 09:30: the tick ending 10:00 is the updated one.
    series = _series([24 * day + 9.5 for day in range(60)])
    probabilities = hour_of_week(series, 24 * 50, 24 * 50, 24 * 57)
    hours = (series.start.hour + np.arange(24 * 50, 24 * 57)) % 24
    assert set(hours[probabilities > 0.5].tolist()) == {10}


def test_every_policy_is_reported_with_thresholds_chosen_on_validation(tmp_path):
    rng = np.random.default_rng(3)
    rows = ["source_id,event_time"]
    for source in range(4):
        # Weekday mornings with noise, over 120 days.
        for day in range(120):
            if day % 7 < 5 and rng.random() < 0.7:
                moment = START + timedelta(days=day, hours=9 + float(rng.random()))
                rows.append(f"src{source},{moment.isoformat()}")
    path = tmp_path / "events.csv"
    path.write_text("\n".join(rows) + "\n")
    sources, skipped = usable_series(load_events([path]), HOUR)
    assert len(sources) == 4 and skipped == []
    result = evaluate_policies(sources)
    assert {f"rc_{k}" for k in range(1, 24)} | {"adaptive", "poisson", "how", "logreg"} <= set(result)
    assert result["rc_1"]["timeliness"] == 1.0 and result["rc_1"]["friendliness"] == 0.0
    for name in ("poisson", "how", "logreg"):
        assert "micro" in result[name] and {"at_t95", "at_t90"} <= set(result[name])
    # A source posting on weekday mornings is caught far more cheaply by its hour of week than by RC(1).
    assert result["how"]["at_t90"]["friendliness"] > 0.5


def test_sources_with_too_few_events_are_skipped():
    events = {"few": [START + timedelta(hours=h) for h in range(5)],
              "many": [START + timedelta(hours=3 * h) for h in range(40)]}
    used, skipped = usable_series(events, HOUR)
    assert [s.source_id for s in used] == ["many"] and skipped == ["few"]


def test_the_lstm_learns_a_daily_posting_hour_and_saves_its_recipe(tmp_path):
    from models.revisit.model import UpdatePredictor, train

    series = [to_series(f"s{n}", [START + timedelta(days=day, hours=9.5 + n * 0.1) for day in range(40)], HOUR)
              for n in range(3)]
    model = train(series, [s.train_end for s in series], epochs=6)
    probabilities = model.probabilities(series[0], series[0].train_end, len(series[0].counts))
    hours = (series[0].start.hour + np.arange(series[0].train_end, len(series[0].counts))) % 24
    assert probabilities[hours == 10].mean() > 3 * probabilities[hours != 10].mean()
    model.save(tmp_path / "revisit.pt")
    loaded = UpdatePredictor.load(tmp_path / "revisit.pt")
    assert np.allclose(loaded.probabilities(series[0], 300, 400), model.probabilities(series[0], 300, 400))
    unseen = to_series("new", [START + timedelta(days=day, hours=9.5) for day in range(40)], HOUR)
    assert loaded.source_index("new") == 0 and len(loaded.probabilities(unseen, 20, 50)) == 30  # cold start


def test_a_model_file_of_another_format_is_refused(tmp_path):
    import torch

    from models.model_files import ModelVersionError
    from models.revisit.model import UpdatePredictor

    torch.save({"format_version": 99}, tmp_path / "old.pt")
    with pytest.raises(ModelVersionError, match="revisit model format 99; this code reads 3"):
        UpdatePredictor.load(tmp_path / "old.pt")


def test_a_crawler_sees_an_update_only_at_its_next_fetch():
    from models.revisit.model import observed_bits

    updated = np.array([0, 1, 0, 0, 1, 1, 0, 0, 0, 1], dtype=bool)
    fetch = np.array([1, 0, 0, 1, 0, 1, 0, 0, 1, 0], dtype=bool)
    # Fetch at 3 sees the update at 1; at 5 those at 4 and 5; at 8 nothing new; the update at 9 is unseen.
    assert observed_bits(updated, fetch).astype(int).tolist() == [0, 0, 0, 1, 0, 1, 0, 0, 0, 0]
