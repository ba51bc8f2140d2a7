"""The learned stopping decision (models.discovery.stopping): its features, labels, fit and stop point."""

import math

import numpy as np
import pytest

from models.discovery.policies import Candidate
from models.discovery.stopping import FEATURES, StoppingModel, fit_stopping, reachable_labels, stop_features


def candidate(text: str, url: str) -> Candidate:
    return Candidate(url, text, "html/body/nav/a", 1, 0)


def test_the_state_reads_the_scores_the_frontier_and_the_keyword_view():
    frontier = [candidate("About us", "http://a.org/about/"), candidate("Events", "http://a.org/events/"),
                candidate("Shop", "http://a.org/shop/")]
    state = stop_features(np.array([0.9, 0.4, 0.1]), np.array([0.2, 0.7, 0.0]), frontier, clicks=2)
    assert len(state) == len(FEATURES)
    named = dict(zip(FEATURES, state, strict=True))
    assert named["best"] == 0.9 and named["second"] == 0.4 and named["gap"] == pytest.approx(0.5)
    assert named["best_hit"] == 0.7 and named["clicks"] == 2 and named["frontier"] == pytest.approx(np.log(4))
    # The agent's best is "About us" (no keyword); the keyword heuristic sees "Events" (text and path).
    assert named["keyword_of_best"] == 0 and named["keyword_best"] == 0.75


def test_choices_before_the_reaching_click_are_reachable_and_none_of_an_episode_that_reached_nothing():
    assert reachable_labels(3, 2) == [True, True, False]
    assert reachable_labels(3, None) == [False, False, False]


def test_the_fitted_model_goes_on_where_sources_were_reachable_and_stops_at_its_cost_s_point():
    rng = np.random.default_rng(0)
    samples = [([score, 0.1, score - 0.1, 0.5, 2.0, 1.0, 0.0, 0.0], bool(score > 0.5))
               for score in rng.uniform(0, 1, 200)]
    model = fit_stopping(samples, miss_cost=3.0)
    assert model.threshold == 0.25
    assert model.stop_reason([0.9, 0.1, 0.8, 0.5, 2.0, 1.0, 0.0, 0.0]) is None
    reason = model.stop_reason([0.05, 0.1, -0.05, 0.5, 2.0, 1.0, 0.0, 0.0])
    assert reason is not None and reason.startswith("a source page reachable: ")
    assert StoppingModel.from_dict(model.to_dict()) == model
    # A dearer miss (the stream's setting) stops lower on the same probabilities.
    dearer = model.at_miss_cost(7.0)
    assert dearer.threshold == 0.125 and dearer.weights == model.weights and model.at_miss_cost(None) is model
    assert fit_stopping([(sample, False) for sample, _ in samples]) is None  # one class: nothing to learn


def test_an_agent_keeps_its_stopping_model_and_its_click_prior_when_saved(tmp_path):
    import torch

    from models.discovery.agent import RLCrawler, new_agent

    agent = new_agent()
    agent.stopper = StoppingModel((0.0,) * 8, (1.0,) * 8, (0.5,) * 8, -0.2, 2.0)
    agent.click_prior = (0.8, 1.5)
    agent.save(tmp_path / "agent.pt")
    loaded = RLCrawler.load(tmp_path / "agent.pt")
    assert loaded.stopper == agent.stopper and loaded.click_prior == (0.8, 1.5)
    # A file saved before agents carried the calibration: h as the net gives it.
    saved = torch.load(tmp_path / "agent.pt", weights_only=True)
    del saved["click_prior"]
    torch.save(saved, tmp_path / "older.pt")
    assert RLCrawler.load(tmp_path / "older.pt").click_prior is None


def test_only_the_last_click_of_an_episode_that_reached_a_source_page_landed_on_one():
    from models.discovery.episode import Episode
    from models.discovery.training import click_samples

    reached = Episode(site="a", negative=False, clicks=2, reached=["http://a.org/events/"])
    assert click_samples(reached, [-1.0, 2.0]) == [(-1.0, False), (2.0, True)]
    unreached = Episode(site="a", negative=False, clicks=3)
    assert click_samples(unreached, [0.0, 1.0, 2.0]) == [(0.0, False), (1.0, False), (2.0, False)]
    assert click_samples(Episode(site="b", negative=True, clicks=1), [3.0]) == [(3.0, False)]
    assert click_samples(Episode(site="a", negative=False, reached=["http://a.org/"]), []) == []


def test_the_click_prior_is_fitted_on_held_out_clicks_and_left_out_where_they_are_too_few():
    from models.discovery.training import MIN_CLICK_SAMPLES, fit_click_prior

    # Clicks whose h is too shy: a logit z lands on a source page with P = sigmoid(z + 2).
    rng = np.random.default_rng(0)
    logits = rng.normal(-2.0, 2.0, 2000)
    samples = [(float(z), bool(rng.random() < 1 / (1 + math.exp(-(z + 2.0))))) for z in logits]
    a, b = fit_click_prior(samples)
    assert a == pytest.approx(1.0, abs=0.15) and b == pytest.approx(2.0, abs=0.25)
    few = [(1.0, True)] * (MIN_CLICK_SAMPLES - 1) + [(-1.0, False)] * 100
    assert fit_click_prior(few) is None and fit_click_prior([]) is None


def test_the_stream_s_stored_choice_stops_by_the_model_where_the_agent_has_one():
    from models.discovery.agent import stored_choice
    from models.discovery.episode import FrontierLink

    frontier = [FrontierLink(url="http://a.org/about/", text="About", depth=1, order=0, logit=2.0, hit_logit=-1.0),
                FrontierLink(url="http://a.org/events/", text="Events", depth=1, order=1, logit=1.0, hit_logit=1.0)]
    go_on = StoppingModel((0.0,) * 8, (1.0,) * 8, (0.0,) * 8, 5.0)  # always reachable
    give_up = StoppingModel((0.0,) * 8, (1.0,) * 8, (0.0,) * 8, -5.0)  # never
    choice, view = stored_choice(frontier, eta=0.99, stopper=go_on, clicks=1)
    assert choice is frontier[0]  # η is not asked
    # The stopping model's view comes with the choice: best and second π, their gap, best h, frontier, clicks…
    assert view[:6] == pytest.approx([0.8808, 0.7311, 0.1497, 0.7311, math.log1p(2), 1.0], abs=1e-4)
    assert stored_choice(frontier, eta=0.0, stopper=give_up, clicks=1)[0].startswith("a source page reachable: 0.007")
    assert stored_choice(frontier, eta=0.99)[0].startswith("best score 0.881 ≤ η 0.990")


def test_reliability_bins_the_predictions_against_what_happened():
    from models.discovery.stopping import reliability

    pairs = [(0.05, False)] * 9 + [(0.05, True)] + [(0.92, True)] * 3 + [(0.98, False)]
    result = reliability(pairs)
    assert result["choices"] == 14 and [b["choices"] for b in result["bins"]] == [10, 4]
    low, high = result["bins"]
    assert (low["from"], low["predicted"], low["observed"]) == (0.0, 0.05, 0.1)
    assert (high["from"], high["predicted"], high["observed"]) == (0.9, 0.935, 0.75)
    expected = (9 * 0.05 ** 2 + 0.95 ** 2 + 3 * 0.08 ** 2 + 0.98 ** 2) / 14
    assert result["brier"] == round(expected, 4)
    assert reliability([]) == {"choices": 0, "brier": None, "bins": []}


def test_eval_discovery_plots_the_stopping_model_s_reliability(tmp_path):
    from models.discovery.plots import plot_discovery
    from models.discovery.stopping import reliability

    fixed = {k: {"precision": 0.9, "recall": 0.8, "unit_cost": 1.1, "clicks_on_negative_sites": 1.0} for k in "123"}
    agent = {"precision": 0.95, "recall": 0.9, "unit_cost": 1.05, "clicks_on_negative_sites": 0.1,
             "fixed_steps": fixed, "learning_curve": [],
             "stopping_calibration": reliability([(0.05, False), (0.95, True), (0.6, True)])}
    written = plot_discovery({"rl": agent}, tmp_path / "run")
    assert [path.name for path in written] == ["run-stopping.png", "run-reliability.png"]
    assert all(path.stat().st_size > 10_000 for path in written)
    # No stopping model fitted (held-out runs): no reliability diagram.
    del agent["stopping_calibration"]
    assert [path.name for path in plot_discovery({"rl": agent}, tmp_path / "held")] == ["held-stopping.png"]


def test_an_episode_played_without_stopping_ends_where_the_threshold_would_have_stopped_it():
    from models.discovery.episode import Episode
    from models.discovery.evaluation import _by_miss_cost, stopped_at

    found = Episode("a.org", False, 2, ["http://a.org/events/"], "found", clicked=["/news/", "/events/"])
    # P(reachable) before the first click 0.4, before the second 0.2.
    assert stopped_at(found, [0.4, 0.2], 0.1) is found
    assert stopped_at(found, [0.4, 0.2], 0.3) == Episode("a.org", False, 1, [], "stop", clicked=["/news/"])
    assert stopped_at(found, [0.4, 0.2], 0.5) == Episode("a.org", False, 0, [], "stop", clicked=[])
    nothing = Episode("b.org", True, 3, [], "budget", clicked=["/1", "/2", "/3"])
    figures = _by_miss_cost([(found, [0.4, 0.2]), (nothing, [0.25, 0.5, 0.5])])
    # A miss costing 1 click stops below 0.5 (both at once); 2 below 1/3 (the found one at its second choice, the
    # other at once); 4 below 0.2 (neither).
    assert figures["1"]["recall"] == 0.0 and figures["1"]["clicks_on_negative_sites"] == 0.0
    assert figures["2"]["recall"] == 0.0 and figures["2"]["clicks_on_negative_sites"] == 0.0
    assert figures["4"]["recall"] == 1.0 and figures["4"]["clicks_on_negative_sites"] == 3.0
    assert figures["4"]["unit_cost"] == 2.0


def test_judged_finds_are_split_at_the_sure_level_with_how_many_are_true():
    from models.discovery.episode import Episode
    from models.discovery.judged import finds_by_confidence

    episodes = [Episode("a", False, 1, ["http://a/events/"], "found", find_score=0.97),
                Episode("b", False, 1, [], "found", false_find=True, find_score=0.62),
                Episode("c", False, 2, ["http://c/news/"], "found", find_score=0.75),
                Episode("d", True, 0, [], "stop")]  # no find: not counted
    assert finds_by_confidence(episodes, 0.9) == {"sure_at": 0.9, "sure": {"finds": 1, "true": 1},
                                                  "unsure": {"finds": 2, "true": 1}}
