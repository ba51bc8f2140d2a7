"""The training epoch both revisit models run: weighted binary cross-entropy over shuffled mini-batches."""

from __future__ import annotations

import torch
from torch import nn


def weighted_bce_epoch(model: nn.Module, optimizer: torch.optim.Optimizer, inputs: tuple[torch.Tensor, ...],
                       targets: torch.Tensor, weights: torch.Tensor, batch_size: int) -> float:
    """One pass over the samples in a random order, `model(*inputs)` giving logits; the mean loss."""
    order = torch.randperm(len(targets))
    total = 0.0
    for start in range(0, len(order), batch_size):
        batch = order[start:start + batch_size]
        loss = nn.functional.binary_cross_entropy_with_logits(model(*(x[batch] for x in inputs)), targets[batch],
                                                              weight=weights[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(batch)
    return total / max(len(order), 1)
