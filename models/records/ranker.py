"""The list ranker: which of a page's candidate record sets (models.records.candidates) is its main list.

Gradient-boosted trees score each candidate from its features; the page's highest-scoring candidate is its list.
LightGBM's LambdaRank trains them listwise — per page, with each candidate graded by how well its records match
the page's labelled records — so they learn to rank within a page, never to calibrate across pages. Several
forests grown from different seeds are averaged: one alone moves a held-out category's F1 by a point or more
from seed to seed.

LightGBM only trains (`sourcewatch train records`, the evaluation's folds). The trees are kept in the model file
as arrays and evaluated here with numpy and torch's sparse product, so a worker reading pages never imports
LightGBM, which brings scikit-learn, SciPy and pandas with it (~145 MB resident per worker).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from models.model_files import load_checked
from models.records.candidates import FEATURES

FORMAT_VERSION = 2
# Seven, not three: with three, a fold's choice between near-equal candidates flipped from one retraining to the
# next (City Scrapers recall ±0.03); scoring 64 candidates by 2,100 trees costs a few milliseconds.
MEMBERS = 7
ROUNDS = 300
# A candidate's grade: its match (0…1) in tenths. LambdaRank's default gain, 2^grade − 1, puts the weight on the
# best-matching candidates of each page.
GRADES = 10
# Trees of up to 15 leaves, each leaf at least 20 candidates: ~7,000 candidates of ~460 pages train them.
TRAINING = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20,
            "bagging_fraction": 0.8, "bagging_freq": 1, "feature_fraction": 0.8,
            "lambdarank_truncation_level": 5, "deterministic": True, "force_row_wise": True, "verbose": -1}
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


@dataclass
class ListRanker:
    """The trees of all members as one forest. A node's child ≥ 0 is another node, < 0 the leaf ~child; a
    tree's root is encoded the same way (a tree of one leaf has a leaf for root)."""

    roots: np.ndarray
    split_feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_value: np.ndarray
    members: int
    features: tuple[str, ...] = FEATURES
    trained_on: dict = field(default_factory=dict)
    # The forest's distinct splits (feature, threshold): the 2,100 trees' ~29,000 nodes ask ~2,700 questions,
    # LightGBM's thresholds being bin bounds.
    _split_features: np.ndarray = field(init=False, repr=False, compare=False)
    _split_thresholds: np.ndarray = field(init=False, repr=False, compare=False)
    # Each leaf's path, a row over the distinct splits: 1 where it turns left, −1 where right; and its count of
    # left turns.
    _paths: torch.Tensor = field(init=False, repr=False, compare=False)
    _left_turns: torch.Tensor = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        leaves, nodes, turns = [], [], []
        stack: list[tuple[int, tuple[tuple[int, bool], ...]]] = [(int(root), ()) for root in self.roots]
        while stack:
            node, path = stack.pop()
            if node < 0:
                for on_path, left in path:
                    leaves.append(~node)
                    nodes.append(on_path)
                    turns.append(1.0 if left else -1.0)
                continue
            stack.append((int(self.left[node]), (*path, (node, True))))
            stack.append((int(self.right[node]), (*path, (node, False))))
        splits = np.stack([self.split_feature.astype(np.float64), self.threshold])
        distinct, split_of_node = np.unique(splits, axis=1, return_inverse=True)
        self._split_features, self._split_thresholds = distinct[0].astype(np.int64), distinct[1]
        rows_of = np.asarray(leaves, dtype=np.int64)  # typed even when every tree is one leaf (no paths)
        # A path never asks one question twice (its second answer would leave one side empty).
        columns = split_of_node.reshape(-1)[np.asarray(nodes, dtype=np.int64)]
        order = np.lexsort((columns, rows_of))  # by leaf, each row's splits in order, as CSR asks
        rows = np.zeros(len(self.leaf_value) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows_of, minlength=len(self.leaf_value)), out=rows[1:])
        with warnings.catch_warnings():
            # CSR, in beta in torch, multiplies twice as fast here as the stable COO layout.
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
            self._paths = torch.sparse_csr_tensor(
                torch.from_numpy(rows), torch.from_numpy(columns[order]),
                torch.from_numpy(np.asarray(turns, dtype=np.float32)[order]),
                (len(self.leaf_value), len(self._split_thresholds)), check_invariants=True)
        left_turns = np.bincount(rows_of, weights=np.asarray(turns) > 0, minlength=len(self.leaf_value))
        self._left_turns = torch.from_numpy(left_turns.astype(np.float32)[:, None])

    def scores(self, features: np.ndarray) -> np.ndarray:
        """Each candidate's score: the members' mean of their trees' sum. A candidate goes left where its
        feature is ≤ the split's threshold, compared in double precision as LightGBM compares, and reaches the
        leaf whose path turns it the way every node on it does: its left turns along the path add up to the
        leaf's. Each distinct split is asked once; each candidate's score adds the values of the one leaf per
        tree it reaches (not a product with every leaf: 4x faster for 64 candidates). A handful of numpy and
        torch calls, not a walk of a dozen calls per level: each call over a large array lets go of the GIL and
        waits to take it back, which in a worker, beside the event loop, cost up to 5 ms a call
        (streams.threads)."""
        values = np.asarray(features, dtype=np.float64)
        if not len(values):
            return np.zeros(0)
        goes_left = torch.from_numpy((values.T[self._split_features] <= self._split_thresholds[:, None])
                                     .astype(np.float32))
        leaves, candidates = torch.nonzero((self._paths @ goes_left) == self._left_turns, as_tuple=True)
        return np.bincount(candidates.numpy(), weights=self.leaf_value[leaves.numpy()],
                           minlength=len(values)) / self.members

    def choose(self, features: np.ndarray) -> int | None:
        """The index of the page's main list among its candidates (None: no candidates)."""
        if not len(features):
            return None
        return int(np.argmax(self.scores(features)))

    @classmethod
    def from_lightgbm(cls, boosters: Sequence, trained_on: dict | None = None) -> ListRanker:
        """The forest of trained LightGBM boosters (one per member)."""
        nodes: dict[str, list] = {"split_feature": [], "threshold": [], "left": [], "right": []}
        leaves: list[float] = []

        def add(tree: dict) -> int:
            if "leaf_value" in tree:
                leaves.append(tree["leaf_value"])
                return ~(len(leaves) - 1)
            if tree["decision_type"] != "<=" or tree["missing_type"] not in ("None", "NaN"):
                raise ValueError(f"a split this ranker cannot walk: {tree['decision_type']}, missing values "
                                 f"{tree['missing_type']}")
            # Children first: a node's index is only known to its parent, so any order of numbering walks alike.
            left, right = add(tree["left_child"]), add(tree["right_child"])
            for name, value in zip(nodes, (tree["split_feature"], tree["threshold"], left, right)):
                nodes[name].append(value)
            return len(nodes["threshold"]) - 1

        roots = [add(tree["tree_structure"]) for booster in boosters for tree in booster.dump_model()["tree_info"]]
        return cls(roots=np.asarray(roots, dtype=np.int64),
                   split_feature=np.asarray(nodes["split_feature"], dtype=np.int64),
                   threshold=np.asarray(nodes["threshold"], dtype=np.float64),
                   left=np.asarray(nodes["left"], dtype=np.int64), right=np.asarray(nodes["right"], dtype=np.int64),
                   leaf_value=np.asarray(leaves, dtype=np.float64), members=len(boosters),
                   trained_on=trained_on or {})

    def save(self, path: Path) -> None:
        arrays = {name: torch.from_numpy(getattr(self, name)) for name in _ARRAYS}
        torch.save({"format_version": FORMAT_VERSION, "features": list(self.features), "members": self.members,
                    "trained_on": self.trained_on, **arrays}, path)

    @classmethod
    def load(cls, path: Path) -> ListRanker:
        saved = load_checked(path, "list ranker", FORMAT_VERSION, features=list(FEATURES))
        return cls(**{name: saved[name].numpy() for name in _ARRAYS}, members=saved["members"],
                   features=tuple(saved["features"]), trained_on=saved["trained_on"])


_ARRAYS = ("roots", "split_feature", "threshold", "left", "right", "leaf_value")


def train_ranker(pages: Sequence[tuple[np.ndarray, np.ndarray]], seed: int = 0, rounds: int = ROUNDS,
                 members: int = MEMBERS) -> ListRanker:
    """A ranker fitted to pages given as (candidate features, each candidate's match against the page's labels,
    0…1). Pages without two candidates or without any matching one teach no ranking and are skipped."""
    usable = [(np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32))
              for x, y in pages if len(y) > 1 and np.max(y) > 0]
    if not usable:
        raise ValueError("no page with two candidates of which one matches its labels: nothing to rank")
    import lightgbm  # training only: see the module

    features = np.concatenate([x for x, _ in usable])
    grades = np.concatenate([np.rint(y * GRADES) for _, y in usable]).astype(np.int32)
    page_sizes = [len(y) for _, y in usable]
    boosters = [lightgbm.train(TRAINING | {"seed": seed + member},
                               lightgbm.Dataset(features, grades, group=page_sizes), num_boost_round=rounds)
                for member in range(members)]
    return ListRanker.from_lightgbm(boosters, {"seed": seed})


_loaded: dict[Path, ListRanker] = {}


def default_ranker() -> ListRanker:
    """The shipped ranker, loaded once per process."""
    if DEFAULT_RANKER not in _loaded:
        _loaded[DEFAULT_RANKER] = ListRanker.load(DEFAULT_RANKER)
    return _loaded[DEFAULT_RANKER]
