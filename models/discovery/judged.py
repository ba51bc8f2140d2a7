"""The RL agent as the stream runs it: episodes that end where the classifier judges a page a source page
(with the agent's h of the clicked link as the prior), not where the labels say one is. A judged page counts as reached
only when the labels agree; `false_finds` counts episodes with a find the labels say is no source page.

With cross-validation the classifier of each fold is trained on the fold's training sites (the pages are
encoded once for all folds); held out, it is the shipped classifier or the one in settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from models.discovery.agent import RLCrawler
from models.discovery.classifier import (
    DEFAULT_INPUT,
    SourcePageClassifier,
    labelled_pages,
    page_vectors,
    train_classifier,
)
from models.discovery.data import LabelledSite
from models.discovery.episode import Episode, Fetch, run_episode
from models.discovery.finetuning import PageJudge


class FoldClassifiers:
    """Source-page classifiers trained on a subset of the labelled sites' pages, encoded once."""

    def __init__(self, paths: Sequence[Path], encoder, page_input: str = DEFAULT_INPUT,
                 recipe: str = "logistic") -> None:
        self.pages = labelled_pages(paths)
        self.encoder = encoder
        self.page_input = page_input
        self.recipe = recipe
        self.vectors = page_vectors(self.pages, encoder, page_input)
        self.labels = np.array([page.source for page in self.pages])

    def trained_on(self, sites: Sequence[LabelledSite]) -> SourcePageClassifier:
        names = {site.name for site in sites}
        keep = np.array([page.site in names for page in self.pages])
        groups = [page.site for page, kept in zip(self.pages, keep, strict=True) if kept]
        return SourcePageClassifier(train_classifier(self.vectors[keep], self.labels[keep], groups, self.recipe),
                                    self.encoder,
                                    trained_on=sorted(names), page_input=self.page_input)


async def judged_episodes(agent: RLCrawler, classifier: SourcePageClassifier, sites: Sequence[LabelledSite],
                          homepages: dict[str, str], fetch: Fetch, max_steps: int,
                          max_finds: int = 1) -> list[Episode]:
    judge = PageJudge(classifier, fetch, prior=lambda: agent.last_hit_score)
    episodes = []
    for site in sites:
        episode = await run_episode(agent, site.name, homepages[site.name], judge.fetch, judge, site.negative,
                                    max_steps, max_finds=max_finds)
        true = [url for url in episode.reached if site.is_source(url)]
        episode.false_find = len(true) < len(episode.reached)
        episode.source_pages = site.source_count
        episode.find_score = judge.judged.get(episode.reached[0]) if episode.reached else None
        episode.reached = true
        episodes.append(episode)
    return episodes


def finds_by_confidence(episodes: Sequence[Episode], sure_at: float) -> dict:
    """The judged episodes' finds split at `sure_at` (the service's sure level): how many in each part, and how
    many of them the labels call source pages — whether an unsure find is worth a person's look."""
    def part(finds: list[Episode]) -> dict:
        return {"finds": len(finds), "true": sum(1 for e in finds if not e.false_find)}

    finds = [e for e in episodes if e.find_score is not None]
    return {"sure_at": sure_at, "sure": part([e for e in finds if e.find_score >= sure_at]),
            "unsure": part([e for e in finds if e.find_score < sure_at])}
