"""Pre-training of the RL crawler agent on labelled sites, defaults as the seed's Table I (DESIGN.md row 1).

Episodes of at most 3 clicks on one site each, batches of 3 sites, 50 epochs; ε-greedy exploration from 0.9
down by 0.1 every 2 epochs to 0.1. Reward (Eq. 3): +1 for the click that reaches a source page,
max(floor, −0.1 − ⌊epoch/2⌋·0.1) for any other (DESIGN.md writes the floor as −0.1, which keeps the penalty at
−0.1; it is a setting). REINFORCE (Eq. 8, 10): each click's log-softmax over its action set, weighted by the
return from that click on. Our addition: the binary cross-entropy of each click's π(a) against whether it
lay on the way to the source page reached — the softmax alone leaves the scores' level free, and the stop
threshold compares levels — and of each click's h(a) against whether it landed on the source page. With
the auxiliary task, the loss is α·Lc + (1−α)·La: Lc the above, La the mean squared error of
the anchors' predicted boxes (theirs and their neighbours', models.discovery.anchor_boxes) on the episode's pages,
which are rendered when first fetched. After training, η (Eq. 5) is the weighted mean of the agent's click
scores in ε = 0 episodes on the training sites, clicks on the way to a source page and the others weighing
half each.

Our addition, the default stop rule: η chosen out of fold. On its own training sites the agent is sure of
itself (their source links score ~0.9, their other links ~0.05), so Eq. 5 lands near 0.5; on sites it never
saw, right links score anywhere from 0.05 up and the best link of a site without a source page up to ~0.45
(site-grouped CV on <data>/sites), and η = 0.5 stops on many sites that have one. So the training sites are
split in CALIBRATION_FOLDS parts; an agent pre-trained briefly (CALIBRATION_EPOCHS, no auxiliary task) on the
other parts plays each part with ε = 0 and no stopping, and η is the threshold that makes the fewest errors
on those held-out episodes: a site with a source page that it would stop before reaching, or a click on a
site without one, one error each (ties: the lowest, since a missed source page costs users more than a
click). The same held-out episodes recalibrate h as the prior for judging a clicked page (fit_click_prior):
on its own training sites h is as sure of itself as π, and fine-tuning moves it further (on a simulated web
whose pages the reward's classifier judges strictly, it learns to expect few hits).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from models.discovery.agent import RLCrawler, new_agent
from models.discovery.anchor_boxes import AnchorBoxes
from models.discovery.data import LabelledSite
from models.discovery.episode import Episode, Fetch, run_episode
from models.discovery.stopping import MISS_COST, fit_stopping, reachable_labels


@dataclass(frozen=True)
class PretrainConfig:
    epochs: int = 50
    batch_sites: int = 3
    max_steps: int = 3
    learning_rate: float = 1e-3
    epsilon_start: float = 0.9
    epsilon_end: float = 0.1
    miss_floor: float = -0.1
    outcome_weight: float = 1.0
    # The auxiliary box task and its weight: L = α·Lc + (1−α)·La.
    auxiliary: bool = True
    alpha: float = 0.5
    # How the agent stops: at η with the fewest errors on training sites held out from brief agents
    # ("out_of_fold"), at Eq. 5's η ("eq5"), or by the stopping model fitted on those held-out episodes
    # ("learned"; η as out_of_fold beside it).
    stop_rule: str = "out_of_fold"
    # The learned stopping model's cost of a source page given up, in wasted clicks.
    miss_cost: float = MISS_COST
    seed: int = 0


CALIBRATION_FOLDS = 3
CALIBRATION_EPOCHS = 20
# Held-out clicks of each kind (landed on a source page or not) below which h is not recalibrated.
MIN_CLICK_SAMPLES = 5


def epsilon_at(epoch: int, config: PretrainConfig) -> float:
    """Table I's schedule: ε falls by 0.1 every 2 epochs from its start to its end."""
    return max(config.epsilon_end, config.epsilon_start - 0.1 * (epoch // 2))


def miss_reward(epoch: int, config: PretrainConfig) -> float:
    """Eq. 3's reward for a click that did not reach a source page."""
    return max(config.miss_floor, -0.1 - 0.1 * (epoch // 2))


def _episode_loss(agent: RLCrawler, episode: Episode, epoch: int, config: PretrainConfig) -> torch.Tensor:
    """Eq. 8/10 over the episode's clicks: −return · log π(click | action set), the return summing +1 for the
    click that reached a source page and Eq. 3's miss reward for every other; plus the outcome BCE of each
    click's π, whose target is whether the click lies on the way to the source page reached (a hub page's
    link leads there as surely as the last link does), and of its h, whether it landed on the source page.
    With boxes on the episode's pages: α·that + (1−α)·the auxiliary task's loss."""
    hits = [index == episode.clicks - 1 and bool(episode.reached) for index in range(episode.clicks)]
    rewards = [1.0 if hit else miss_reward(epoch, config) for hit in hits]
    returns = np.cumsum(rewards[::-1])[::-1]
    on_way = set(episode.way)
    bce = nn.functional.binary_cross_entropy_with_logits
    loss = torch.zeros(())
    for index, (click, hit, ret) in enumerate(zip(agent.clicks, hits, returns)):
        outcome = (bce(click.logit, torch.tensor(float(index in on_way)))
                   + bce(click.hit_logit, torch.tensor(float(hit))))
        loss = loss - float(ret) * click.log_prob + config.outcome_weight * outcome
    box_loss = agent.box_loss()
    return loss if box_loss is None else config.alpha * loss + (1 - config.alpha) * box_loss


async def greedy_episodes(agent: RLCrawler, sites: Sequence[LabelledSite], homepages: dict[str, str],
                           fetch: Fetch, max_steps: int, states: list[list[list[float]]] | None = None,
                           clicks: list[tuple[float, bool]] | None = None) -> list[tuple[Episode, list[float]]]:
    """ε = 0 episodes without stopping: each with the agent's best score at every choice (and, into `states`,
    the stopping model's view of every choice; into `clicks`, each click's h logit and whether it landed on a
    source page)."""
    agent.learning, eta, agent.eta, stopper, agent.stopper = False, agent.eta, None, agent.stopper, None
    runs = []
    for site in sites:
        episode = await run_episode(agent, site.name, homepages[site.name], fetch, site.is_source, site.negative,
                                    max_steps)
        runs.append((episode, list(agent.best_scores)))
        if states is not None:
            states.append(list(agent.stop_states))
        if clicks is not None:
            clicks += click_samples(episode, agent.clicked_hit_logits)
    agent.eta, agent.stopper = eta, stopper
    return runs


def click_samples(episode: Episode, hit_logits: Sequence[float]) -> list[tuple[float, bool]]:
    """(h's logit, landed on a source page) for each click of an episode played without stopping: such an
    episode ends at the first source page it lands on, so only its last click can have."""
    landed = len(hit_logits) - 1 if episode.reached and not episode.negative else -1
    return [(logit, index == landed) for index, logit in enumerate(hit_logits)]


def recall_at_clicks(runs: list[tuple[Episode, list[float]]], max_steps: int) -> list[float]:
    """Of the sites with a source page, the share reached within 1, 2, … clicks (the seed's Figure 5)."""
    positive = [episode for episode, _ in runs if not episode.negative]
    return [round(sum(1 for e in positive if e.reached and e.clicks <= k) / len(positive), 4) if positive else 0.0
            for k in range(1, max_steps + 1)]


def fewest_errors_threshold(runs: list[tuple[Episode, list[float]]]) -> float:
    """The η that makes the fewest errors on ε = 0 episodes run without stopping (each with its best score at
    every choice): a site with a source page on whose way a best score is ≤ η, or each click on a site
    without one made before a best score ≤ η. Candidates lie midway between neighbouring scores."""
    scores = sorted({0.0, 1.0, *(score for _, best in runs for score in best)})
    candidates = [(low + high) / 2 for low, high in zip(scores, scores[1:])]

    def errors(eta: float) -> int:
        count = 0
        for episode, best in runs:
            clicks = next((index for index, score in enumerate(best) if score <= eta), len(best))
            if episode.negative:
                count += min(clicks, episode.clicks)
            elif episode.reached:
                count += clicks < episode.clicks
        return count

    return min(candidates, key=lambda eta: (errors(eta), eta))


class OutOfFoldChoices(NamedTuple):
    """What brief agents' episodes on sites they never saw tell: η, the stopping model's samples, h's."""

    eta: float
    stopping_samples: list[tuple[list[float], bool]]
    # (h's logit of a click, whether the click landed on a source page): fit_click_prior's samples.
    click_samples: list[tuple[float, bool]]


async def out_of_fold_choices(sites: Sequence[LabelledSite], homepages: dict[str, str], fetch: Fetch,
                              config: PretrainConfig, encoder_name: str,
                              then: Callable[[RLCrawler, list[LabelledSite]], Awaitable[object]] | None = None,
                              ) -> OutOfFoldChoices:
    """η by the fewest errors on each part of the sites, played by a brief agent trained on the others, and the
    stopping model's samples (stopping_samples) and the clicks' (fit_click_prior) from the same out-of-fold
    episodes. `then(agent, its training sites)` is done to each brief agent before it plays: a fine-tuned
    agent's brief agents are fine-tuned too (models.discovery.finetuning)."""
    order = random.Random(config.seed).sample(list(sites), len(sites))
    parts = [order[index::CALIBRATION_FOLDS] for index in range(CALIBRATION_FOLDS)]
    brief = replace(config, epochs=CALIBRATION_EPOCHS, auxiliary=False, stop_rule="eq5")
    runs: list[tuple[Episode, list[float]]] = []
    states: list[list[list[float]]] = []
    clicks: list[tuple[float, bool]] = []
    for part in parts:
        agent = new_agent(encoder_name, seed=config.seed)
        seen = [site for site in order if site not in part]
        await pretrain(agent, seen, homepages, fetch, brief)
        if then is not None:
            await then(agent, seen)
        runs += await greedy_episodes(agent, part, homepages, fetch, config.max_steps, states, clicks)
    return OutOfFoldChoices(fewest_errors_threshold(runs), stopping_samples(runs, states), clicks)


def fit_click_prior(samples: Sequence[tuple[float, bool]]) -> tuple[float, float] | None:
    """Platt's calibration of h as a prior: (a, b) with P(the click lands on a source page) = sigmoid(a · h's
    logit + b), a logistic fit over held-out clicks; None where they hold fewer than MIN_CLICK_SAMPLES clicks
    of either kind."""
    from sklearn.linear_model import LogisticRegression

    landed = sum(1 for _, hit in samples if hit)
    if min(landed, len(samples) - landed) < MIN_CLICK_SAMPLES:
        return None
    x = np.array([[logit] for logit, _ in samples])
    y = np.array([hit for _, hit in samples])
    # Nearly unregularised, as Platt's fit is: two parameters over the 50–70 clicks brief agents make on 56 sites.
    fitted = LogisticRegression(C=1e4).fit(x, y)
    return float(fitted.coef_[0][0]), float(fitted.intercept_[0])


def stopping_samples(runs: list[tuple[Episode, list[float]]], states: list[list[list[float]]]
                     ) -> list[tuple[list[float], bool]]:
    """(state, reachable) at every choice of episodes played without stopping (greedy_episodes with `states`)."""
    return [(state, label) for (episode, _), episode_states in zip(runs, states, strict=True)
            for state, label in zip(episode_states, reachable_labels(
                len(episode_states), episode.clicks if episode.reached and not episode.negative else None),
                strict=True)]


def adaptive_threshold(runs: list[tuple[Episode, list[float]]]) -> float:
    """Eq. 5: the weighted mean click score; clicks on the way to a source page and the others weigh half each."""
    hits, misses = [], []
    for episode, best_scores in runs:
        for index, score in enumerate(best_scores[:episode.clicks]):
            (hits if index in episode.way else misses).append(score)
    if not hits or not misses:
        return float(np.mean(hits or misses))
    return (float(np.mean(hits)) + float(np.mean(misses))) / 2


async def pretrain(agent: RLCrawler, sites: Sequence[LabelledSite], homepages: dict[str, str], fetch: Fetch,
                   config: PretrainConfig = PretrainConfig(), curve_sites: Sequence[LabelledSite] = (),
                   progress: Callable[[int, dict], None] | None = None,
                   anchor_boxes: AnchorBoxes | None = None) -> list[dict]:
    """Train the agent on the sites, then set its η; returns each epoch's learning-curve point (recall at 1, 2, 3
    clicks with ε = 0 on `curve_sites`, or on the training sites when none are given). With `anchor_boxes`
    (and config.auxiliary) the auxiliary task trains too, on every page the episodes fetch."""
    agent.anchor_boxes = anchor_boxes if config.auxiliary else None
    training_fetch = _rendering(fetch, agent.anchor_boxes) if agent.anchor_boxes is not None else fetch
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    optimizer = torch.optim.Adam(agent.net.parameters(), lr=config.learning_rate)
    history = []
    for epoch in range(config.epochs):
        _, losses = await train_epoch(agent, sites, homepages, training_fetch, config, epoch, rng, optimizer)
        runs = await greedy_episodes(agent, curve_sites or sites, homepages, fetch, config.max_steps)
        point = {"epoch": epoch + 1, "epsilon": epsilon_at(epoch, config), "loss": mean_loss(losses),
                 "recall_at_clicks": recall_at_clicks(runs, config.max_steps)}
        history.append(point)
        if progress:
            progress(epoch + 1, point)
    agent.eta = adaptive_threshold(await greedy_episodes(agent, sites, homepages, fetch, config.max_steps))
    agent.learning, agent.anchor_boxes = False, None
    if config.stop_rule in ("out_of_fold", "learned") and len(sites) >= CALIBRATION_FOLDS:
        history[-1]["eta_eq5"] = agent.eta
        # The learned stopping model is kept beside η for the evaluation to compare, with its samples (a
        # fine-tuned agent's model adds its own choices to them); the agent stops by it when the rule says so.
        choices = await out_of_fold_choices(sites, homepages, fetch, config, agent.encoder.name)
        agent.eta, agent.click_prior = choices.eta, fit_click_prior(choices.click_samples)
        history[-1]["stopping_samples"] = choices.stopping_samples
        history[-1]["stopper"] = fit_stopping(choices.stopping_samples, config.miss_cost)
        if config.stop_rule == "learned":
            agent.stopper = history[-1]["stopper"]
    agent.trained_on = sorted(site.name for site in sites)
    return history


async def train_epoch(agent: RLCrawler, sites: Sequence[LabelledSite], homepages: dict[str, str], fetch: Fetch,
                      config: PretrainConfig, epoch: int, rng: random.Random,
                      optimizer: torch.optim.Optimizer) -> tuple[list[Episode], list[float]]:
    """One epoch of REINFORCE: the sites in a random order, in batches of config.batch_sites, one ε-greedy
    episode each (a site tells which pages are source pages: by its labels, or by a classifier's judgement),
    one optimizer step per batch. Returns the episodes and each batch's loss; the net is left in eval mode."""
    agent.net.train()
    order = rng.sample(list(sites), len(sites))
    episodes, losses = [], []
    for start in range(0, len(order), config.batch_sites):
        batch = order[start:start + config.batch_sites]
        loss = torch.zeros(())
        for site in batch:
            agent.learning, agent.epsilon = True, epsilon_at(epoch, config)
            episode = await run_episode(agent, site.name, homepages[site.name], fetch, site.is_source,
                                        site.negative, config.max_steps, seed=rng.randrange(1 << 30))
            episodes.append(episode)
            if agent.clicks:
                loss = loss + _episode_loss(agent, episode, epoch, config)
        if loss.requires_grad:
            optimizer.zero_grad()
            (loss / len(batch)).backward()
            optimizer.step()
            losses.append(loss.item() / len(batch))
    agent.net.eval()
    return episodes, losses


def mean_loss(losses: list[float]) -> float | None:
    return round(float(np.mean(losses)), 4) if losses else None


def _rendering(fetch: Fetch, anchor_boxes: AnchorBoxes) -> Fetch:
    """A fetch that has each page's anchor boxes measured before the agent reads the page."""
    async def fetch_and_render(url: str) -> tuple[str, str]:
        final_url, html = await fetch(url)
        await anchor_boxes.measure(final_url, html)
        return final_url, html

    return fetch_and_render
