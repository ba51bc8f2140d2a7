"""The stopping model (models.discovery.stopping) retrained with people's verdicts — `sourcewatch retrain
discovery`'s second half — and swapped in only if it stops better on verdicts it never saw.

Each discovery episode carries the stopping model's view of every choice it made (discovery.episodes'
`choices`); people's verdicts label them:
- a site verdict naming the site's source page (`POST /api/v1/sites/verdict`): a source page was reachable at
  every choice — the episode that gave up, spent its budget or ended on another page should have gone on;
- a site verdict saying the site has none: no choice could reach one;
- else a verdict that the page an episode found is a source page (`POST /api/v1/sources/{id}/verdict`): every
  choice on its way could. A find judged wrong labels nothing by itself (whether another page was reachable is
  not known), nor does an episode no one judged.
Where a source page was reachable, the choices an episode made past its first find (looking for another: a
site's events and its news) are left out: whether another was there no verdict says.
The latest verdict of a site (of a page) counts. The candidate is fitted on the samples the agent's own stopping
model was fitted on (its file keeps them: out-of-fold choices on the labelled sites, and a fine-tuned agent's
own choices on a simulated web) and the verdicts' samples. It is compared with the model the workers run now
on the verdicts' samples in folds grouped by site — each fold read by a candidate fitted without that fold's
sites — by what its decisions cost: a stop where a source page was reachable costs the miss cost in clicks,
going on where none was costs a click. It is written to <home>/models/stopping.json (with a digest of the base
samples: a retrained model of another agent is never loaded) only when it costs less.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from models.discovery.agent import RLCrawler
from models.discovery.classifier import SourcePageClassifier
from models.discovery.episode import Fetch, run_episode
from models.discovery.finetuning import PageJudge
from models.discovery.sites import SimulatedSite
from models.discovery.stopping import StoppingModel, fit_stopping, save_retrained
from schemas.discovery import EpisodeEnded
from schemas.links import SiteVerdict, SourceVerdict

Sample = tuple[tuple[float, ...], bool]


@dataclass
class VerdictSamples:
    # (site, features, reachable) of every labelled choice.
    samples: list[tuple[str, tuple[float, ...], bool]]
    # Episodes by how their choices were labelled: "source shown", "no source", "find judged right".
    labelled_episodes: dict[str, int]
    # Episodes with a verdict on their site or find that labels nothing: a find judged wrong with no site
    # verdict, or an episode that made no choice (its homepage unreadable, or run before episodes kept them).
    unlabelled_episodes: int

    @property
    def sites(self) -> list[str]:
        return sorted({site for site, _, _ in self.samples})


@dataclass
class StoppingRetrainResult:
    samples: int
    verdict_sites: int
    labelled_episodes: dict[str, int]
    unlabelled_episodes: int
    base_samples: int
    miss_cost: float
    # Decision costs and errors on the verdicts' samples held out by site: the model the workers run now, and
    # the candidate (each fold's fitted without that fold's sites).
    held_out: dict[str, dict]
    better: bool
    swapped: bool = False
    written_to: str | None = None
    reasons: list[str] = field(default_factory=list)


def verdict_samples(episodes: Sequence[EpisodeEnded], site_verdicts: Sequence[SiteVerdict],
                    source_verdicts: Sequence[SourceVerdict]) -> VerdictSamples:
    """The episodes' choices labelled by the verdicts (see the module)."""
    by_site = {verdict.site: verdict for verdict in sorted(site_verdicts, key=lambda verdict: verdict.created_at)}
    by_page = {verdict.url: verdict for verdict in sorted(source_verdicts, key=lambda verdict: verdict.created_at)}
    samples: list[tuple[str, tuple[float, ...], bool]] = []
    labelled: dict[str, int] = {}
    unlabelled = 0
    for episode in episodes:
        site = by_site.get(episode.site)
        judged = [by_page[url].is_source for url in episode.found if url in by_page]
        if site is None and not judged:
            continue
        if site is not None:
            reachable = site.source_url is not None
            how = "source shown" if reachable else "no source"
        elif judged[-1]:
            reachable, how = True, "find judged right"
        else:
            unlabelled += 1
            continue
        if not episode.choices:
            unlabelled += 1
            continue
        labelled[how] = labelled.get(how, 0) + 1
        # Past its first find an episode looked for another source page, which no verdict says was there.
        choices = episode.choices[:episode.found_at[0]] if reachable and episode.found_at else episode.choices
        samples += [(episode.site, tuple(choice), reachable) for choice in choices]
    return VerdictSamples(samples, labelled, unlabelled)


def decision_cost(model: StoppingModel, samples: Sequence[Sample]) -> dict:
    """What the model's decisions on these choices cost: a stop where a source page was reachable costs the miss
    cost, going on where none was costs a click."""
    stops_missing = sum(1 for features, reachable in samples if reachable and model.stop_reason(features) is not None)
    wasted = sum(1 for features, reachable in samples if not reachable and model.stop_reason(features) is None)
    return {"choices": len(samples), "stopped_where_reachable": stops_missing, "went_on_where_not": wasted,
            "cost": round(stops_missing * model.miss_cost + wasted, 4)}


def held_out_costs(base: StoppingModel, current: StoppingModel, judged: VerdictSamples, folds: int,
                   seed: int = 0) -> dict[str, dict]:
    """The current model on every verdict sample, and candidates fitted on the base samples and the other
    folds' verdict samples (folds grouped by site) on each fold's; their costs added up."""
    sites = judged.sites
    random.Random(seed).shuffle(sites)
    fold_of = {site: index % folds for index, site in enumerate(sites)}
    with_verdicts = {"choices": 0, "stopped_where_reachable": 0, "went_on_where_not": 0, "cost": 0.0}
    for fold in range(folds):
        trained = [(features, label) for site, features, label in judged.samples if fold_of[site] != fold]
        tested = [(features, label) for site, features, label in judged.samples if fold_of[site] == fold]
        candidate = fit_stopping([*base.samples, *trained], current.miss_cost)
        if candidate is None:
            raise ValueError("the base samples and verdicts hold one class only")
        for key, value in decision_cost(candidate, tested).items():
            with_verdicts[key] += value
    with_verdicts["cost"] = round(with_verdicts["cost"], 4)
    every = [(features, label) for _, features, label in judged.samples]
    return {"current": decision_cost(current, every), "with_verdicts": with_verdicts}


def retrain_stopping(base: StoppingModel, current: StoppingModel, judged: VerdictSamples, out: Path,
                     dry_run: bool, folds: int = 5) -> StoppingRetrainResult:
    """Compare (see the module) and write the candidate, fitted on the base samples and every verdict sample, to
    `out` when it costs less on the held-out verdicts. `base`: the agent's own stopping model (its samples);
    `current`: the one the workers run, at the miss cost they stop by."""
    if not base.samples:
        raise ValueError("the agent's stopping model keeps no samples (saved before models kept them): refit it "
                         "with `sourcewatch train discovery --from AGENT --stop-rule learned`")
    sites = judged.sites
    if len(sites) < 2:
        raise ValueError(f"labelled choices on {len(sites)} site(s): at least 2 are needed to hold some out")
    held_out = held_out_costs(base, current, judged, min(folds, len(sites)))
    reasons = []
    if held_out["with_verdicts"]["cost"] >= held_out["current"]["cost"]:
        reasons.append(f"held-out verdicts: decisions cost {held_out['with_verdicts']['cost']} with them vs "
                       f"{held_out['current']['cost']} now")
    result = StoppingRetrainResult(len(judged.samples), len(sites), judged.labelled_episodes,
                                   judged.unlabelled_episodes, len(base.samples), current.miss_cost, held_out,
                                   better=not reasons, reasons=reasons)
    if result.better and not dry_run:
        samples = [*base.samples, *((features, label) for _, features, label in judged.samples)]
        save_retrained(fit_stopping(samples, current.miss_cost), base, out)
        result.swapped, result.written_to = True, str(out)
    return result


async def rehearsed_verdicts(agent: RLCrawler, classifier: SourcePageClassifier, sites: Sequence[SimulatedSite],
                             homepages: dict[str, str], fetch: Fetch, max_steps: int, max_finds: int = 1
                             ) -> tuple[list[EpisodeEnded], list[SiteVerdict]]:
    """What the stream and a diligent person would leave on the topics for these simulated sites: each site's
    episode as the stream runs it (the agent stopping by its model, the classifier judging where it arrived),
    with its choices (up to `max_finds` source pages a site, the stream's setting), and a verdict on every site
    from the simulated web's truth — its source page, or none (`eval discovery --verdicts`)."""
    judge = PageJudge(classifier, fetch, prior=lambda: agent.last_hit_score)
    episodes, verdicts = [], []
    for site in sites:
        homepage = homepages[site.name]
        episode = await run_episode(agent, site.name, homepage, judge.fetch, judge, site.negative, max_steps,
                                    max_finds=max_finds)
        episodes.append(EpisodeEnded(site=site.name, crawl_id="rehearsal", homepage=homepage, end=episode.end,
                                     clicks=episode.clicks, found=episode.reached, found_at=episode.found_at,
                                     policy=agent.name, choices=agent.stop_states))
        verdicts.append(SiteVerdict(site=site.name, homepage=homepage,
                                    source_url=min(site.source_urls) if site.source_urls else None))
    return episodes, verdicts
