"""Viterbi decoding of a linear-chain CRF for a batch of sequences, in numpy.

The same best paths as torchcrf's `CRF.decode` (tested on every labelled page), without its per-sequence
backtrack: torchcrf follows each sequence's back-pointers one node at a time through tensor indexing, which
made the pagination tagger's decoding a Python loop over every node of every page. Here both passes step
over positions once for the whole batch, each step a few numpy operations on (batch, tags, tags) arrays.
"""

from __future__ import annotations

import numpy as np
import torch


def best_paths(emissions: torch.Tensor, mask: torch.Tensor, start: torch.Tensor, transitions: torch.Tensor,
               end: torch.Tensor) -> list[list[int]]:
    """The highest-scoring tag sequence of each row; emissions (batch, length, tags), mask (batch, length)
    with every row's true positions first; start, end (tags) and transitions (from, to) the CRF's scores."""
    scores = emissions.detach().float().numpy()
    valid = mask.detach().numpy().astype(bool)
    batch, length, _ = scores.shape
    if length == 0:
        return [[] for _ in range(batch)]
    moves = transitions.detach().float().numpy()[None]
    score = start.detach().float().numpy()[None] + scores[:, 0]
    pointers = np.empty((length - 1, batch, scores.shape[2]), dtype=np.int64)
    for position in range(1, length):
        # candidate[b, i, j]: the best path ending in tag i at the previous position, then tag j here.
        candidate = score[:, :, None] + moves + scores[:, position, None, :]
        best = candidate.argmax(axis=1)
        pointers[position - 1] = best
        score = np.where(valid[:, position, None], np.take_along_axis(candidate, best[:, None, :], 1)[:, 0], score)
    score = score + end.detach().float().numpy()[None]
    last = valid.sum(axis=1) - 1
    rows = np.arange(batch)
    tags = np.zeros(batch, dtype=np.int64)
    path = np.zeros((batch, length), dtype=np.int64)
    final = score.argmax(axis=1)
    for position in range(length - 1, -1, -1):
        followed = pointers[position][rows, tags] if position < length - 1 else tags
        tags = np.where(position == last, final, np.where(position < last, followed, tags))
        path[:, position] = tags
    return [path[row, :last[row] + 1].tolist() for row in range(batch)]
