"""The list ranker: which of a page's candidate record sets (models.records.candidates) is its main list.

A few small MLPs (trained alike from different seeds, their scores averaged: one alone varies by several
points of F1 on a held-out category from seed to seed) score each candidate from its features; the page's
highest-scoring candidate is its list.
Trained listwise (ListNet): per page, the softmax of the scores is fitted to a target that puts the weight on
the candidates whose records best match the page's labelled records (softmax of their F1, sharpened), so it
learns to rank within a page, never to calibrate across pages. Features are standardised with the training
set's mean and spread, kept in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import torch
from torch import nn

from models.model_files import load_checked
from models.records.candidates import FEATURES

FORMAT_VERSION = 1
HIDDEN = 32
MEMBERS = 3
EPOCHS = 60
# How sharply the target favours the best-matching candidates: F1 0.05 apart weigh e ≈ 2.7 times apart.
TARGET_SHARPNESS = 20.0
DEFAULT_RANKER = Path(__file__).with_name("list_ranker.pt")


class Ranking(Protocol):
    def choose(self, features: np.ndarray) -> int | None: ...


class LargestRegion:
    """The choice before the ranker, kept as the evaluation's reference: the data region MDR's ranking puts
    first (letters, weighted for links and dates); no choice where MDR found no region."""

    def choose(self, features: np.ndarray) -> int | None:
        if not len(features):
            return None
        scores = features[:, FEATURES.index("mdr_score_share")] * features[:, FEATURES.index("from_mdr")]
        return int(np.argmax(scores)) if scores.max() > 0 else None


class ListRanker(nn.Module):
    def __init__(self, features: Sequence[str] = FEATURES, hidden: int = HIDDEN, members: int = MEMBERS) -> None:
        super().__init__()
        self.features = tuple(features)
        self.hidden = hidden
        self.register_buffer("mean", torch.zeros(len(features)))
        self.register_buffer("spread", torch.ones(len(features)))
        self.members = nn.ModuleList(
            nn.Sequential(nn.Linear(len(features), hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 1)) for _ in range(members))
        self.trained_on: dict = {}

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return torch.stack([self.member_scores(features, index) for index in range(len(self.members))]).mean(0)

    def member_scores(self, features: torch.Tensor, index: int) -> torch.Tensor:
        return self.members[index]((features - self.mean) / self.spread).squeeze(-1)

    @torch.inference_mode()
    def choose(self, features: np.ndarray) -> int | None:
        """The index of the page's main list among its candidates (None: no candidates)."""
        if not len(features):
            return None
        self.eval()
        return int(torch.argmax(self(torch.from_numpy(np.asarray(features, dtype=np.float32)))))

    def save(self, path: Path) -> None:
        torch.save({"format_version": FORMAT_VERSION, "features": list(self.features), "hidden": self.hidden,
                    "members": len(self.members), "trained_on": self.trained_on, "state": self.state_dict()}, path)

    @classmethod
    def load(cls, path: Path) -> ListRanker:
        saved = load_checked(path, "list ranker", FORMAT_VERSION, features=list(FEATURES))
        ranker = cls(saved["features"], saved["hidden"], saved["members"])
        ranker.load_state_dict(saved["state"])
        ranker.trained_on = saved["trained_on"]
        return ranker.eval()


def train_ranker(pages: Sequence[tuple[np.ndarray, np.ndarray]], seed: int = 0, epochs: int = EPOCHS,
                 members: int = MEMBERS) -> ListRanker:
    """A ranker fitted to pages given as (candidate features, each candidate's F1 against the page's labels).
    Pages without two candidates or without any matching one teach no ranking and are skipped."""
    torch.manual_seed(seed)
    usable = [(torch.from_numpy(np.asarray(x, dtype=np.float32)), torch.from_numpy(np.asarray(y, dtype=np.float32)))
              for x, y in pages if len(y) > 1 and np.max(y) > 0]
    if not usable:
        raise ValueError("no page with two candidates of which one matches its labels: nothing to rank")
    ranker = ListRanker(members=members)
    every = torch.cat([x for x, _ in usable])
    ranker.mean.copy_(every.mean(0))
    ranker.spread.copy_(every.std(0) + 1e-6)
    ranker.train()
    for index, member in enumerate(ranker.members):
        rng = np.random.default_rng(seed + index)
        optimizer = torch.optim.Adam(member.parameters(), lr=3e-3, weight_decay=1e-4)
        for _ in range(epochs):
            for page in rng.permutation(len(usable)):
                x, y = usable[page]
                target = torch.softmax(y * TARGET_SHARPNESS, 0)
                loss = -(target * torch.log_softmax(ranker.member_scores(x, index), 0)).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return ranker.eval()


_loaded: dict[Path, ListRanker] = {}


def default_ranker() -> ListRanker:
    """The shipped ranker, loaded once per process."""
    if DEFAULT_RANKER not in _loaded:
        _loaded[DEFAULT_RANKER] = ListRanker.load(DEFAULT_RANKER)
    return _loaded[DEFAULT_RANKER]
