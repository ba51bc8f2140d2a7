"""`sourcewatch eval revisit` as users run it, on the real endoflife.date series."""

from __future__ import annotations

import pytest

from tests.conftest import TRAINING, cli_json, run_cli

pytestmark = pytest.mark.data


@TRAINING
def test_every_policy_on_the_endoflife_series(data_dir, tmp_path):
    plane = tmp_path / "plane.png"
    result = cli_json(["eval", "revisit", "--events", str(data_dir / "revisit" / "endoflife" / "events.csv"),
                       "--tick", "1d", "--no-model", "--plot", str(plane)], {})  # the model's own test trains it
    assert plane.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result["sources_used"] > 100 and result["sources_used"] + result["sources_skipped"] > 200
    for name in [f"rc_{k}" for k in range(1, 24)] + ["adaptive", "poisson", "how", "logreg"]:
        figures = result[name]
        assert {"timeliness", "friendliness", "delay_h", "fetches_per_item", "micro"} <= set(figures)
    assert result["rc_1"]["timeliness"] == 1.0 and result["rc_1"]["friendliness"] == 0.0
    # Longer intervals: less timely, friendlier.
    assert result["rc_2"]["timeliness"] > result["rc_12"]["timeliness"]
    assert result["rc_2"]["friendliness"] < result["rc_12"]["friendliness"]
    for name in ("poisson", "how", "logreg"):
        chosen = result[name]["at_t90"]
        assert chosen is None or 0 < chosen["threshold"] < 1
        assert len(result[name]["curve"]) > 20  # (timeliness, friendliness) at every threshold


def test_a_missing_events_file_is_refused(tmp_path):
    done = run_cli(["eval", "revisit", "--events", str(tmp_path / "nope.csv")], {})
    assert done.returncode == 2 and "no such file" in done.stderr


@TRAINING
def test_the_cold_start_evaluation_on_sources_held_out_by_source(data_dir, tmp_path):
    plane = tmp_path / "cold.png"
    result = cli_json(["eval", "revisit", "--cold-start", "--events",
                       str(data_dir / "revisit" / "endoflife" / "events.csv"), "--tick", "1d", "--folds", "2",
                       "--max-sources", "24", "--plot", str(plane)], {}, timeout=900)
    assert plane.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result["sources_used"] == 24 and result["protocol"]["folds"] == 2
    assert result["protocol"]["first_read_items"] == 20
    # At 1-day ticks the settings' longest interval (12 h) would be a fetch every tick: left out; probes kept.
    assert result["protocol"]["max_interval_hours"] is None and result["protocol"]["exploration_share"] == 0.02
    for name in [f"rc_{k}" for k in range(1, 24)] + ["adaptive"]:
        assert {"timeliness", "friendliness", "delay_h", "fetches_per_item", "micro"} <= set(result[name])
    for name in ("poisson", "how", "logreg", "rhythm", "model", "model_previous"):
        assert len(result[name]["curve"]) == len(result[name]["grid"]) > 20
        for key in ("at_t95", "at_t90"):
            chosen = result[name][key]
            # A threshold per fold, chosen on that fold's training sources.
            assert chosen is None or (len(chosen["thresholds"]) == 2 and 0 <= chosen["timeliness"] <= 1)
    # Every policy watched the same held-out test spans: RC(1) fetches every tick, catching every item.
    assert result["rc_1"]["timeliness"] == 1.0 and result["rc_1"]["friendliness"] == 0.0


def test_cold_start_options_are_checked(data_dir):
    events = str(data_dir / "revisit" / "endoflife" / "events.csv")
    done = run_cli(["eval", "revisit", "--cold-start", "--events", events, "--folds", "1"], {})
    assert done.returncode == 2 and "--folds must be at least 2" in done.stderr
    done = run_cli(["eval", "revisit", "--cold-start", "--no-model", "--events", events], {})
    assert done.returncode == 2 and "no --per-source or --no-model" in done.stderr
    done = run_cli(["eval", "revisit", "--cold-start", "--events", events, "--exploration-share", "1.5"], {})
    assert done.returncode == 2 and "--exploration-share must be in [0, 1)" in done.stderr
