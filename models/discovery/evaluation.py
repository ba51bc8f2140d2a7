"""`sourcewatch eval discovery` and `train discovery`: discovery policies on labelled sites, one episode per
site; cross-validation, held-out runs and the agent's extra figures (fixed clicks, learning curve, judged by
the classifier).

The sites are served here (models.discovery.sites) and fetched directly over HTTP: an episode's clicks are a
handful of local fetches, measured for the policy, not for the pipeline.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from infra.settings import get_settings
from models.discovery.agent import DEFAULT_AGENT, RLCrawler, new_agent
from models.discovery.anchor_boxes import AnchorBoxes
from models.discovery.classifier import DEFAULT_CLASSIFIER, SourcePageClassifier
from models.discovery.data import LabelledSite, load_sites
from models.discovery.episode import Episode, Fetch, figures, run_episode
from models.discovery.finetuning import (
    REWARD_INPUT,
    REWARD_RECIPE,
    STOPPING_WEB_SEED,
    STOPPING_WEB_SITES,
    FinetuneConfig,
    finetune,
    own_simulated_choices,
)
from models.discovery.judged import FoldClassifiers, finds_by_confidence, judged_episodes
from models.discovery.policies import BASELINES, Candidate, DiscoveryPolicy
from models.discovery.qlearning import QLearningCrawler
from models.discovery.sites import SimulatedSite, served, simulated_web
from models.discovery.stopping import StoppingModel, fit_stopping, reliability, stop_threshold
from models.discovery.training import (
    PretrainConfig,
    fit_click_prior,
    greedy_episodes,
    out_of_fold_choices,
    pretrain,
    stopping_samples,
)
from models.text_encoders import get_encoder
from models.web.links import canonical_url, extract_anchors

POLICIES = {"rl": RLCrawler, **BASELINES, "qlearning": QLearningCrawler}
LEARNING = ("rl", "qlearning")
# The agent's figures after fine-tuning, beside its pre-trained ones ("rl") in a cross-validated run.
FINETUNED = "rl_finetuned"
# Figure 6: the agent clicking a fixed number of times, beside its adaptive threshold.
FIXED_STEPS = 3
# What a source page given up may cost, in wasted clicks: the stop points the evaluation reports beside the
# agent's own (models.discovery.stopping.stop_threshold).
MISS_COSTS = (1.0, 2.0, 4.0, 8.0, 16.0)


class NoSites(ValueError):
    """No labelled site folder among the given paths."""


class NotRefittable(ValueError):
    """A saved agent whose stopping model cannot be fitted as asked."""


def _folds(sites: list[LabelledSite], folds: int | None, seed: int) -> list[tuple[list, list]]:
    """Site-grouped folds: (training sites, test sites); without folds, nothing to train on."""
    if not folds:
        return [([], sites)]
    order = random.Random(seed).sample(sites, len(sites))
    parts = [order[index::folds] for index in range(folds)]
    return [([site for other in parts if other is not part for site in other], part) for part in parts]


async def _training_data(sites: list[LabelledSite], homepages: dict[str, str],
                         fetch: Fetch) -> tuple[list[tuple[Candidate, int]], list[str]]:
    """The homepage links of the training sites with their Q bin (2: a source page; 1: its page links to one;
    0: neither), and the text of their source pages (the sample set)."""
    links, samples = [], []
    for site in sites:
        final_url, html = await fetch(homepages[site.name])
        seen = {canonical_url(final_url)}
        for order, anchor in enumerate(extract_anchors(html, final_url)):
            url = canonical_url(anchor.url)
            if not anchor.same_site or url in seen:
                continue
            seen.add(url)
            if site.is_source(url):
                links.append((Candidate(url, anchor.text, anchor.tag_path, 1, order), 2))
                samples.append((await fetch(url))[1])
                continue
            target, page = await fetch(url)
            leads = any(site.is_source(a.url) for a in extract_anchors(page, target)) if page else False
            links.append((Candidate(url, anchor.text, anchor.tag_path, 1, order), int(leads)))
    return links, samples


def _policy(name: str, model: Path | None) -> DiscoveryPolicy:
    if name != "rl":
        return POLICIES[name]()
    return new_agent() if model is None else RLCrawler.load(model)


@asynccontextmanager
async def _renderer(config: PretrainConfig, training: bool) -> AsyncIterator[AnchorBoxes | None]:
    """Headless Chromium for the auxiliary task while an agent trains with it; None otherwise."""
    if not (training and config.auxiliary):
        yield None
        return
    settings = get_settings()
    async with AnchorBoxes(settings.chromium, settings.home / "cache" / "anchor-boxes") as boxes:
        yield boxes


def shipped_classifier() -> SourcePageClassifier:
    return SourcePageClassifier.load(get_settings().source_classifier or DEFAULT_CLASSIFIER)


def _fixed_steps(runs: list[tuple[Episode, list[float]]]) -> dict:
    """The agent clicking exactly k times (first-hit stopping, never stopping on its score), k = 1, 2, 3."""
    result = {}
    for k in range(1, FIXED_STEPS + 1):
        cut = [Episode(e.site, e.negative, min(e.clicks, k), e.reached if e.clicks <= k else [],
                       "found" if e.reached and e.clicks <= k else "budget") for e, _ in runs]
        result[str(k)] = {key: value for key, value in figures(cut).items() if key != "ends"}
    return result


def stopped_at(episode: Episode, chances: list[float], threshold: float) -> Episode:
    """An episode played without stopping, ended where a stopping model giving P(reachable) `chances` at its
    choices would have stopped it at `threshold`: the agent's choices do not depend on the stop, only whether
    it comes, so the same run answers every threshold."""
    stop = next((index for index, chance in enumerate(chances) if chance < threshold), None)
    if stop is None:
        return episode
    return Episode(episode.site, episode.negative, stop, [], "stop", clicked=episode.clicked[:stop])


def _by_miss_cost(runs: list[tuple[Episode, list[float]]]) -> dict:
    """The learned stop's figures at each miss cost of MISS_COSTS, from (episode without stopping, P at its
    choices) pairs."""
    return {f"{cost:g}": {key: value for key, value in figures(
        [stopped_at(episode, chances, stop_threshold(cost)) for episode, chances in runs]).items() if key != "ends"}
        for cost in MISS_COSTS}


@dataclass(frozen=True)
class Finetuning:
    """Fine-tuning after pre-training (Eq. 4): on `sites` sites of the simulated web of `seed`, its truth unread,
    with a content-only classifier trained on the same labelled sites as reward."""

    sites: int
    seed: int = 3
    config: FinetuneConfig = FinetuneConfig()
    # Rehearse the labelled (pre-training) sites in the fine-tuning batches.
    rehearse: bool = True


@dataclass(frozen=True)
class FinetuningWeb:
    """The simulated web served for fine-tuning: its site names, their homepages, a fetch."""

    sites: list[str]
    homepages: dict[str, str]
    fetch: Fetch


@dataclass
class _AgentRun:
    """What the RL agent's evaluation collects over the folds, beside its episodes."""

    episodes: dict[str, Episode] = field(default_factory=dict)
    learning_curve: list = field(default_factory=list)
    finetuning_curve: list = field(default_factory=list)
    fixed_steps: list = field(default_factory=list)
    eta: list = field(default_factory=list)
    judged: list = field(default_factory=list)
    # The same agents stopping at Eq. 5's η, where another rule set their η.
    eq5_episodes: dict[str, Episode] = field(default_factory=dict)
    # The same agents stopping by the stopping model fitted on out-of-fold episodes (models.discovery.stopping).
    learned_episodes: dict[str, Episode] = field(default_factory=dict)
    # (P(reachable), reachable) of the stopping model at the test sites' choices, every fold.
    stop_calibration: list = field(default_factory=list)
    # (the test site's episode without stopping, the stopping model's P(reachable) at each of its choices).
    unstopped: list = field(default_factory=list)

    def report(self, sites: list) -> dict:
        judged = {e.site: e for e in self.judged}
        # The same agents under the other stopping rules, where they were run.
        beside = {name: figures([episodes[site.name] for site in sites])
                  for name, episodes in (("eq5_eta", self.eq5_episodes), ("learned_stop", self.learned_episodes))
                  if len(episodes) == len(sites)}
        return {"episodes": [self.episodes[site.name] for site in sites],
                "fixed_steps": _fixed_steps(self.fixed_steps), "eta": self.eta, **beside,
                "learning_curve": _mean_curve(self.learning_curve),
                "judged_by_classifier": figures([judged[site.name] for site in sites]) | {
                    "finds_by_confidence": finds_by_confidence(self.judged, get_settings().find_sure_at)},
                "judged_episodes": [{"site": e.site, "clicks": e.clicks, "reached": e.reached, "end": e.end,
                                     "false_find": e.false_find, "clicked": e.clicked, "reason": e.reason,
                                     "find_score": e.find_score}
                                    for e in (judged[site.name] for site in sites)]} | (
            {"finetuning_curve": _mean_finetuning(self.finetuning_curve)} if self.finetuning_curve else {}) | (
            {"stopping_calibration": reliability(self.stop_calibration)} if self.stop_calibration else {}) | (
            {"learned_stop_by_miss_cost": _by_miss_cost(self.unstopped)} if self.unstopped else {})


async def _test(policy: DiscoveryPolicy, test: list, sites: list, homepages: dict[str, str], fetch: Fetch,
                max_steps: int, episodes: dict[str, Episode], max_finds: int = 1) -> None:
    for site in test:
        episode = await run_episode(policy, site.name, homepages[site.name], fetch, site.is_source, site.negative,
                                    max_steps, seed=sites.index(site), max_finds=max_finds)
        episode.source_pages = site.source_count
        episodes[site.name] = episode


async def _test_agent(agent: RLCrawler, test: list, sites: list, homepages: dict[str, str], fetch: Fetch,
                      max_steps: int, classifier: SourcePageClassifier, run: _AgentRun,
                      eq5_eta: float | None = None, stopper: StoppingModel | None = None, max_finds: int = 1) -> None:
    if eq5_eta is not None:
        eta, agent.eta = agent.eta, eq5_eta
        await _test(agent, test, sites, homepages, fetch, max_steps, run.eq5_episodes, max_finds)
        agent.eta = eta
    own = agent.stopper
    if stopper is not None:
        await _unstopped(agent, stopper, test, homepages, fetch, max_steps, run)
        agent.stopper = stopper
        await _test(agent, test, sites, homepages, fetch, max_steps, run.learned_episodes, max_finds)
    elif own is not None:  # a saved agent with its own stopping model: its stop points, as the folds' are
        await _unstopped(agent, own, test, homepages, fetch, max_steps, run)
    # As the stream runs it: the learned stop where there is one, and the classifier deciding where an episode ends.
    run.judged += await judged_episodes(agent, classifier, test, homepages, fetch, max_steps, max_finds)
    agent.stopper = own
    run.fixed_steps += await greedy_episodes(agent, test, homepages, fetch, FIXED_STEPS)
    run.eta.append(agent.eta)
    await _test(agent, test, sites, homepages, fetch, max_steps, run.episodes, max_finds)


async def _unstopped(agent: RLCrawler, stopper: StoppingModel, test: list, homepages: dict[str, str],
                     fetch: Fetch, max_steps: int, run: _AgentRun) -> None:
    """The test sites' episodes played without stopping: (the stopping model's P(reachable), whether it was) at
    every choice — labelled as its training choices are, on sites it never saw — and each episode with its
    choices' P, for the stop points of other miss costs."""
    states: list[list[list[float]]] = []
    runs = await greedy_episodes(agent, test, homepages, fetch, max_steps, states)
    run.stop_calibration += [(stopper.reachable(state), label) for state, label in stopping_samples(runs, states)]
    run.unstopped += [(episode, [stopper.reachable(state) for state in episode_states])
                      for (episode, _), episode_states in zip(runs, states, strict=True)]


async def _episodes(sites: list, homepages: dict[str, str], fetch: Fetch, policies: list[str], max_steps: int,
                    folds: int | None, fold_seed: int, model: Path | None, config: PretrainConfig,
                    progress: Callable[[str], None] | None, finetuning: Finetuning | None = None,
                    max_finds: int = 1) -> dict:
    results: dict[str, dict] = {}
    if "rl" in policies and folds:
        folders = [site.folder.root.parent for site in sites]
        classifiers = FoldClassifiers(folders, get_encoder("use"))
        rewards = FoldClassifiers(folders, get_encoder("use"), REWARD_INPUT, REWARD_RECIPE) if finetuning else None
    async with _renderer(config, "rl" in policies and bool(folds)) as boxes, _finetuning_web(finetuning) as web, \
            _stopping_web("rl" in policies and bool(folds) and finetuning is not None) as stopping_web:
        for name in policies:
            learning = name in LEARNING and bool(folds)
            if name != "rl":
                episodes: dict[str, Episode] = {}
                for train, test in _folds(sites, folds, fold_seed) if learning else [([], sites)]:
                    # A new policy per fold: nothing learned on one fold's test sites reaches another's.
                    policy = _policy(name, None if learning else model)
                    if learning:
                        policy.fit(*await _training_data(train, homepages, fetch))
                    await _test(policy, test, sites, homepages, fetch, max_steps, episodes, max_finds)
                results[name] = {"episodes": [episodes[site.name] for site in sites]}
            else:
                pretrained, finetuned = _AgentRun(), _AgentRun()
                for train, test in _folds(sites, folds, fold_seed) if learning else [([], sites)]:
                    agent = _policy(name, None if learning else model)
                    classifier = classifiers.trained_on(train) if learning else shipped_classifier()
                    curve = await pretrain(agent, train, homepages, fetch, config, curve_sites=test,
                                           anchor_boxes=boxes) if learning else [{}]
                    if learning:
                        pretrained.learning_curve.append(curve)
                    await _test_agent(agent, test, sites, homepages, fetch, max_steps, classifier, pretrained,
                                      curve[-1].get("eta_eq5"), curve[-1].get("stopper"), max_finds)
                    if learning and web is not None:
                        finetuned.finetuning_curve.append(await finetune(
                            agent, web.sites, web.homepages | homepages, web.fetch, rewards.trained_on(train),
                            finetuning.config, rehearsed=train if finetuning.rehearse else ()))
                        # The fine-tuned agent's own stopping model (models.discovery.finetuning).
                        stopper = None
                        if "stopping_samples" in curve[-1]:
                            stopper, agent.click_prior = await _finetuned_choices(
                                agent, train, homepages, fetch, config, finetuning, web, rewards, stopping_web)
                            if config.stop_rule == "learned":
                                agent.stopper = stopper
                        await _test_agent(agent, test, sites, homepages, fetch, max_steps, classifier, finetuned,
                                          stopper=stopper, max_finds=max_finds)
                results[name] = pretrained.report(sites)
                if finetuned.episodes:
                    results[FINETUNED] = finetuned.report(sites)
            if progress:
                progress(name)
    return results


@asynccontextmanager
async def _finetuning_web(finetuning: Finetuning | None) -> AsyncIterator[FinetuningWeb | None]:
    """The simulated web the agent is fine-tuned on; None without fine-tuning."""
    if finetuning is None:
        yield None
        return
    async with simulated_web(finetuning.sites, finetuning.seed) as (sites, homepages, fetch):
        yield FinetuningWeb([site.name for site in sites], homepages, fetch)


@asynccontextmanager
async def _stopping_web(needed: bool) -> AsyncIterator[tuple[list[SimulatedSite], dict[str, str], Fetch] | None]:
    """The simulated web whose truth labels a fine-tuned agent's own choices for its stopping model (None when
    not needed)."""
    if not needed:
        yield None
        return
    async with simulated_web(STOPPING_WEB_SITES, STOPPING_WEB_SEED) as web:
        yield web


async def _finetuned_choices(agent: RLCrawler, sites: list[LabelledSite], homepages: dict[str, str],
                             fetch: Fetch, config: PretrainConfig, finetuning: Finetuning, web: FinetuningWeb,
                             rewards: FoldClassifiers, stopping_web: tuple[list[SimulatedSite], dict[str, str], Fetch],
                             progress: Callable[[int, dict], None] | None = None
                             ) -> tuple[StoppingModel | None, tuple[float, float] | None]:
    """A fine-tuned agent's stopping model (models.discovery.finetuning) and its clicks' prior
    (models.discovery.training.fit_click_prior): fitted on the out-of-fold choices on the labelled sites of brief
    agents fine-tuned as it was — the same web and settings, each one's reward trained on its own sites only —
    and the stopping model also on its own choices on the stopping web."""
    async def finetune_brief(brief: RLCrawler, seen: list[LabelledSite]) -> None:
        await finetune(brief, web.sites, web.homepages | homepages, web.fetch, rewards.trained_on(seen),
                       finetuning.config, progress, rehearsed=seen if finetuning.rehearse else ())

    choices = await out_of_fold_choices(sites, homepages, fetch, config, agent.encoder.name, finetune_brief)
    stopper = fit_stopping(choices.stopping_samples + await own_simulated_choices(agent, *stopping_web),
                           config.miss_cost)
    return stopper, fit_click_prior(choices.click_samples)


def _mean_finetuning(histories: list[list[dict]]) -> list[dict]:
    """Per fine-tuning epoch, the share of its sites whose episode ended on a judged source page (fold mean)."""
    return [{"epoch": points[0]["epoch"],
             "judged_found": round(sum(p["judged_found"] for p in points) / len(points), 4)}
            for points in zip(*histories)]


def _mean_curve(histories: list[list[dict]]) -> list[dict]:
    """Per epoch, recall at 1, 2, 3 clicks averaged over the folds' held-out sites."""
    return [{"epoch": points[0]["epoch"],
             "recall_at_clicks": [round(sum(p["recall_at_clicks"][k] for p in points) / len(points), 4)
                                  for k in range(len(points[0]["recall_at_clicks"]))]}
            for points in zip(*histories)]


def evaluate_discovery(paths: list[Path], policies: list[str], max_steps: int = 10, folds: int | None = None,
                       fold_seed: int = 0, model: Path | None = None, config: PretrainConfig = PretrainConfig(),
                       progress: Callable[[str], None] | None = None,
                       simweb: tuple[int, int] | None = None, finetuning: Finetuning | None = None,
                       max_finds: int = 1) -> dict:
    """Each policy's figures over one episode per site. With `folds` a learning policy is trained on the other
    folds' sites (site-grouped cross-validation), and with `finetuning` the RL agent of each fold is then
    fine-tuned and tested again (reported as FINETUNED). Without folds, the RL agent is the shipped one (or
    `model`), held out, and the Q-learning crawler runs untrained (learning online only). `simweb` (sites,
    seed) evaluates on the simulated web instead of site folders, held out only."""
    if simweb and folds:
        raise NoSites("the simulated web is for held-out evaluation: no --folds with --simweb")
    if finetuning and not (folds and "rl" in policies):
        raise NoSites("fine-tuning is compared inside cross-validation (--folds, policy rl); to evaluate a "
                      "fine-tuned agent held out, give it with --model")
    if "rl" in policies and not folds:
        model = model or DEFAULT_AGENT
        if not model.is_file():
            raise FileNotFoundError(f"no discovery agent at {model}: train one with `sourcewatch train discovery`")

    async def run() -> dict:
        if simweb:
            async with simulated_web(*simweb) as (sites, homepages, fetch):
                return await _episodes(sites, homepages, fetch, policies, max_steps, folds, fold_seed,
                                       model, config, progress, max_finds=max_finds)
        sites = load_sites(paths)
        if not sites:
            raise NoSites(f"no labelled site folders (with manifest.json) in {', '.join(map(str, paths))}")
        async with served(sites) as (homepages, fetch):
            return await _episodes(sites, homepages, fetch, policies, max_steps, folds, fold_seed, model, config,
                                   progress, finetuning, max_finds)

    results = asyncio.run(run())
    protocol = _protocol(policies, folds, model, simweb, finetuning, max_finds)
    return {name: _report(**result) for name, result in results.items()} | {
        "max_steps": max_steps, "max_finds": max_finds, "protocol": protocol}


def _protocol(policies: list[str], folds: int | None, model: Path | None, simweb: tuple[int, int] | None,
              finetuning: Finetuning | None, max_finds: int = 1) -> str:
    where = f"the simulated web ({simweb[0]} sites, seed {simweb[1]}); " if simweb else ""
    if not folds:
        how = (f"rl: {model} held out; " if "rl" in policies else "") + "qlearning untrained (online learning only)"
    else:
        how = f"learning policies: site-grouped {folds}-fold cross-validation"
        if finetuning:
            how += (f"; {FINETUNED}: each fold's agent fine-tuned on {finetuning.sites} simulated sites (seed "
                    f"{finetuning.seed}) with a content-only classifier of its fold as reward"
                    + (", its training sites rehearsed" if finetuning.rehearse else "")
                    + "; its learned stopping model fitted on the out-of-fold choices of brief agents fine-tuned "
                      f"the same way and on its own choices on {STOPPING_WEB_SITES} simulated sites of seed "
                      f"{STOPPING_WEB_SEED}")
    stopping = "first-hit stopping" if max_finds == 1 else f"up to {max_finds} source pages a site"
    return f"{stopping}, ε = 0; " + where + how


def _report(episodes: list[Episode], **details) -> dict:
    return figures(episodes) | details | {
        "episodes": [{"site": e.site, "clicks": e.clicks, "reached": e.reached, "end": e.end} for e in episodes]}


def train_agent(paths: list[Path], config: PretrainConfig = PretrainConfig(),
                progress: Callable[[int, dict], None] | None = None, finetuning: Finetuning | None = None,
                start_from: Path | None = None) -> tuple[RLCrawler, list[dict]]:
    """An agent pre-trained on every labelled site of these folders (served on loopback) — or the one saved
    at `start_from`, not pre-trained again — then, with `finetuning`, fine-tuned on the simulated web with a
    content-only classifier trained on the same sites as reward (models.discovery.finetuning says how η
    follows). Returns the agent and its learning curve (pre-training's on its training sites, then
    fine-tuning's). With the learned stop rule, the agent's stopping model is fitted on brief agents' held-out
    episodes of the sites — for a fine-tuned agent, brief agents fine-tuned as it was, and its own choices on
    the stopping web beside them (models.discovery.finetuning)."""
    sites = load_sites(paths)
    if not sites:
        raise NoSites(f"no labelled site folders (with manifest.json) in {', '.join(map(str, paths))}")

    async def train() -> tuple[RLCrawler, list[dict]]:
        agent = RLCrawler.load(start_from) if start_from else new_agent()
        learned = config.stop_rule == "learned"
        if learned and agent.finetuned_on and finetuning is None:
            raise NotRefittable(f"{start_from} is fine-tuned: its stopping model learns from brief agents fine-tuned "
                                "as it was, so it is fitted where the agent is fine-tuned (--from a pre-trained "
                                "agent, --finetune-simweb N --stop-rule learned)")
        history: list[dict] = []
        async with served(sites) as (homepages, fetch), _renderer(config, not start_from) as boxes, \
                _finetuning_web(finetuning) as web, _stopping_web(learned and finetuning is not None) as stopping_web:
            if not start_from:
                history = await pretrain(agent, sites, homepages, fetch, config, progress=progress,
                                         anchor_boxes=boxes)
            if web is not None:
                rewards = FoldClassifiers(paths, get_encoder("use"), REWARD_INPUT, REWARD_RECIPE)
                history += await finetune(agent, web.sites, web.homepages | homepages, web.fetch,
                                          rewards.trained_on(sites), finetuning.config, progress=progress,
                                          rehearsed=sites if finetuning.rehearse else ())
                if learned:
                    agent.stopper, agent.click_prior = await _finetuned_choices(
                        agent, sites, homepages, fetch, config, finetuning, web, rewards, stopping_web, progress)
            elif start_from and learned:
                # A saved pre-trained agent's: brief agents' held-out episodes of these sites.
                choices = await out_of_fold_choices(sites, homepages, fetch, config, agent.encoder.name)
                agent.stopper = fit_stopping(choices.stopping_samples, config.miss_cost)
                agent.click_prior = fit_click_prior(choices.click_samples)
        return agent, history

    return asyncio.run(train())
