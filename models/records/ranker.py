"""The list ranker: which of a page's candidate record sets (models.records.candidates) is its main list.

Gradient-boosted trees score each candidate from its features; the page's highest-scoring candidate is its list.
LightGBM's LambdaRank trains them listwise — per page, with each candidate graded by how well its records match
the page's labelled records — so they learn to rank within a page, never to calibrate across pages. Several
forests grown from different seeds are averaged: one alone moves a held-out category's F1 by a point or more
from seed to seed.

LightGBM only trains (`sourcewatch train records`, the evaluation's folds). The trees are kept in the model file
as arrays and evaluated here with numpy (QuickScorer's bit masks), so a worker reading pages never imports
LightGBM, which brings scikit-learn, SciPy and pandas with it (~145 MB resident per worker).
"""

from __future__ import annotations

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
# Candidates scored in one pass: a page of thousands would otherwise hold (inner nodes × candidates) masks.
SCORED_AT_ONCE = 256


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
    # QuickScorer's layout (Lucchese et al., SIGIR 2015): per tree (a row) its inner nodes' distinct splits and
    # bit masks over its leaves (left to right), each clearing the leaves of the node's left subtree — out of
    # reach when the candidate goes right there; rows padded with masks that clear nothing. ANDing the masks of
    # the nodes a candidate goes right at leaves the leaf it reaches as its tree's lowest bit still set.
    _node_splits: np.ndarray = field(init=False, repr=False, compare=False)
    _node_masks: np.ndarray = field(init=False, repr=False, compare=False)
    # Per tree with inner nodes, its leaves' indices in leaf_value by bit; the trees of one leaf add a constant.
    _leaf_of_bit: np.ndarray = field(init=False, repr=False, compare=False)
    _single_leaves: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        splits = np.stack([self.split_feature.astype(np.float64), self.threshold])
        distinct, split_of_node = np.unique(splits, axis=1, return_inverse=True)
        self._split_features, self._split_thresholds = distinct[0].astype(np.int64), distinct[1]
        split_of_node = split_of_node.reshape(-1)
        trees = [self._layout(int(root), split_of_node) for root in self.roots if root >= 0]
        self._single_leaves = float(sum(self.leaf_value[~root] for root in self.roots if root < 0))
        most = max((len(leaves) for _, _, leaves in trees), default=1)
        if most > 64:
            raise ValueError(f"a tree of {most} leaves: this ranker reads trees of up to 64")
        width = next(dtype for dtype in (np.uint16, np.uint32, np.uint64) if np.iinfo(dtype).bits >= most)
        ones = np.iinfo(width).max
        self._node_splits = np.zeros((len(trees), most - 1), dtype=np.int64)
        self._node_masks = np.full((len(trees), most - 1), ones, dtype=width)
        self._leaf_of_bit = np.zeros((len(trees), np.iinfo(width).bits), dtype=np.int64)
        for tree, (node_splits, cleared, leaves) in enumerate(trees):
            self._node_splits[tree, :len(node_splits)] = node_splits
            self._node_masks[tree, :len(cleared)] = [ones & ~bits for bits in cleared]
            self._leaf_of_bit[tree, :len(leaves)] = leaves

    def _layout(self, root: int, split_of_node: np.ndarray) -> tuple[list[int], list[int], list[int]]:
        """A tree's inner nodes' distinct splits and the bits of their left subtrees' leaves, and its leaves left
        to right (their indices in leaf_value)."""
        node_splits: list[int] = []
        cleared: list[int] = []
        leaves: list[int] = []

        def walk(node: int) -> None:
            if node < 0:
                leaves.append(~node)
                return
            at = len(cleared)
            node_splits.append(int(split_of_node[node]))
            cleared.append(0)
            first = len(leaves)
            walk(int(self.left[node]))
            cleared[at] = ((1 << (len(leaves) - first)) - 1) << first
            walk(int(self.right[node]))

        walk(root)
        return node_splits, cleared, leaves

    def scores(self, features: np.ndarray) -> np.ndarray:
        """Each candidate's score: the members' mean of their trees' sum. A candidate goes left where its
        feature is ≤ the split's threshold, compared in double precision as LightGBM compares; each distinct
        split is asked once, and the leaf each tree leads it to is found from the masks of the nodes where it
        goes right (QuickScorer). A handful of numpy calls over whole arrays, not a walk of a dozen calls per
        level: each call over a large array lets go of the GIL and waits to take it back, which in a worker,
        beside the event loop, cost up to 5 ms a call (streams.threads); and no product with every leaf's path
        (100 candidates: 15.7 ms on one thread, 5.6 ms here; several times that beside a busy worker)."""
        values = np.asarray(features, dtype=np.float64)
        scores = np.full(len(values), self._single_leaves)
        if len(self._node_splits):
            for chunk in range(0, len(values), SCORED_AT_ONCE):
                part = values[chunk:chunk + SCORED_AT_ONCE]
                goes_right = part.T[self._split_features] > self._split_thresholds[:, None]
                masks = np.where(goes_right[self._node_splits], self._node_masks[..., None],
                                 np.iinfo(self._node_masks.dtype).max)
                reached = np.bitwise_and.reduce(masks, axis=1)
                # The lowest bit set: x & -x is a power of two, exact in double precision.
                bits = np.log2((reached & (~reached + 1)).astype(np.float64)).astype(np.int64)
                leaves = np.take_along_axis(self._leaf_of_bit, bits, axis=1)
                scores[chunk:chunk + SCORED_AT_ONCE] += self.leaf_value[leaves].sum(axis=0)
        return scores / self.members

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
