"""The stopping model retrained with people's verdicts (jobs.retrain_stopping): which choices the verdicts label,
and a candidate swapped in exactly when it stops better on verdicts held out by site."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from jobs.retrain_stopping import decision_cost, retrain_stopping, verdict_samples
from models.discovery.stopping import fit_stopping, load_retrained
from schemas.discovery import EpisodeEnded
from schemas.links import SiteVerdict, SourceVerdict

AT = datetime(2026, 12, 1, tzinfo=UTC)


def _episode(site: str, end: str, choices: int, found: tuple[str, ...] = ()) -> EpisodeEnded:
    return EpisodeEnded(site=site, crawl_id="c", homepage=f"https://{site}/", end=end, clicks=choices,
                        found=list(found), policy="rl",
                        choices=[[0.4 + index / 10, 0.1, 0.3, 0.2, 2.0, float(index), 0.0, 0.0]
                                 for index in range(choices)])


def _site_verdict(site: str, source: str | None, minutes: int = 0) -> SiteVerdict:
    return SiteVerdict(site=site, homepage=f"https://{site}/", source_url=source,
                       created_at=AT + timedelta(minutes=minutes))


def test_verdicts_label_the_episodes_choices_by_what_people_said_of_the_site_or_the_find():
    episodes = [_episode("gave-up.org", "stop", 2), _episode("none.org", "found", 1, ("https://none.org/x/",)),
                _episode("right.org", "found", 2, ("https://right.org/events/",)),
                _episode("wrong.org", "found", 1, ("https://wrong.org/blog/",)),
                _episode("unjudged.org", "stop", 3), _episode("unreadable.org", "error", 0)]
    # The latest verdict of a site counts: gave-up.org was first said to have none, then shown its page.
    sites = [_site_verdict("gave-up.org", None, 0), _site_verdict("gave-up.org", "https://gave-up.org/news/", 5),
             _site_verdict("none.org", None), _site_verdict("unreadable.org", "https://unreadable.org/events/")]
    pages = [SourceVerdict(site="right.org", url="https://right.org/events/", is_source=True),
             SourceVerdict(site="wrong.org", url="https://wrong.org/blog/", is_source=False),
             # A verdict on a found page never outweighs the person's word on its site.
             SourceVerdict(site="none.org", url="https://none.org/x/", is_source=True)]
    judged = verdict_samples(episodes, sites, pages)
    assert [(site, label) for site, _, label in judged.samples] == [
        ("gave-up.org", True), ("gave-up.org", True), ("none.org", False), ("right.org", True), ("right.org", True)]
    assert judged.samples[1][1] == pytest.approx((0.5, 0.1, 0.3, 0.2, 2.0, 1.0, 0.0, 0.0))
    assert judged.labelled_episodes == {"source shown": 1, "no source": 1, "find judged right": 1}
    # A find judged wrong says nothing of the site's other pages; an unreadable homepage made no choice.
    assert judged.unlabelled_episodes == 2
    assert judged.sites == ["gave-up.org", "none.org", "right.org"]


def test_the_choices_past_an_episodes_first_find_are_labelled_only_where_none_was_reachable():
    # Found the events at its 1st click, went on for 2 more (its news not found), then stopped.
    def went_on(site: str) -> EpisodeEnded:
        return _episode(site, "found", 3, (f"https://{site}/events/",)).model_copy(update={"found_at": [1]})

    judged = verdict_samples([went_on("right.org"), went_on("shown.org"), went_on("none.org")],
                             [_site_verdict("shown.org", "https://shown.org/events/"), _site_verdict("none.org", None)],
                             [SourceVerdict(site="right.org", url="https://right.org/events/", is_source=True)])
    # A source page was reachable at its first choice; whether another was at the next two, no verdict says. On
    # a site with none, no choice could reach one.
    assert [(site, label) for site, _, label in judged.samples] == [
        ("right.org", True), ("shown.org", True), ("none.org", False), ("none.org", False), ("none.org", False)]


def _choice(rng: random.Random, best: float) -> tuple[float, ...]:
    return (best, rng.random() * best, rng.random() * 0.2, rng.random(), 2.0 + rng.random(), float(rng.randint(0, 2)),
            rng.random() * 0.3, rng.random() * 0.3)


def _base(rng: random.Random):
    """A model that learned a source page is reachable where the best link's π is above 0.5."""
    samples = [(_choice(rng, best), best > 0.5) for best in (rng.random() for _ in range(200))]
    return fit_stopping(samples, miss_cost=2.0)


def test_a_candidate_that_learned_from_the_verdicts_is_swapped_in_only_when_it_stops_better(tmp_path):
    rng = random.Random(3)
    base = _base(rng)
    # People showed the source pages of sites the model gave up on: their best links scored 0.3–0.45.
    episodes, verdicts = [], []
    for index in range(8):
        site = f"s{index}.org"
        episodes.append(EpisodeEnded(site=site, crawl_id="c", homepage=f"https://{site}/", end="stop", clicks=0,
                                     policy="rl", choices=[list(_choice(rng, 0.3 + rng.random() * 0.15))
                                                           for _ in range(3)]))
        verdicts.append(_site_verdict(site, f"https://{site}/events/"))
    judged = verdict_samples(episodes, verdicts, [])
    every = [(features, label) for _, features, label in judged.samples]
    assert decision_cost(base, every)["stopped_where_reachable"] == len(every)  # it gave up on all of them
    out = tmp_path / "models" / "stopping.json"
    dry = retrain_stopping(base, base, judged, out, dry_run=True, folds=4)
    assert dry.better and not dry.swapped and not out.exists()
    result = retrain_stopping(base, base, judged, out, dry_run=False, folds=4)
    assert result.held_out["with_verdicts"]["cost"] < result.held_out["current"]["cost"] == 2.0 * len(every)
    assert result.swapped and result.written_to == str(out) and result.base_samples == len(base.samples) == 200
    swapped_in = load_retrained(out, base)
    assert swapped_in is not None and len(swapped_in.samples) == 200 + len(every)
    assert decision_cost(swapped_in, every)["stopped_where_reachable"] < len(every)
    # Built on this agent's samples: another agent's stopping model does not load it.
    assert load_retrained(out, _base(random.Random(4))) is None

    # Verdicts that agree with what the model does now buy nothing: nothing is written.
    quiet = [EpisodeEnded(site=f"n{index}.org", crawl_id="c", homepage=f"https://n{index}.org/", end="stop",
                          clicks=0, policy="rl", choices=[list(_choice(rng, 0.1 * rng.random()))])
             for index in range(4)]
    agreeing = verdict_samples(quiet, [_site_verdict(f"n{index}.org", None) for index in range(4)], [])
    assert decision_cost(base, [(features, label) for _, features, label in agreeing.samples])["cost"] == 0
    kept = tmp_path / "kept.json"
    same = retrain_stopping(base, base, agreeing, kept, dry_run=False, folds=4)
    assert not same.better and not kept.exists() and "held-out verdicts" in same.reasons[0]


def test_retraining_refuses_what_it_cannot_compare(tmp_path):
    rng = random.Random(5)
    base = _base(rng)
    one_site = verdict_samples([_episode("a.org", "stop", 2)], [_site_verdict("a.org", "https://a.org/news/")], [])
    with pytest.raises(ValueError, match="on 1 site"):
        retrain_stopping(base, base, one_site, tmp_path / "s.json", dry_run=False)
    two = verdict_samples([_episode("a.org", "stop", 2), _episode("b.org", "stop", 1)],
                          [_site_verdict("a.org", "https://a.org/news/"), _site_verdict("b.org", None)], [])
    unsampled = fit_stopping([(features, label) for features, label in base.samples])
    with pytest.raises(ValueError, match="keeps no samples"):
        retrain_stopping(replace(unsampled, samples=()), base, two, tmp_path / "s.json", dry_run=False)
