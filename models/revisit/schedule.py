"""The scheduler's rules beside the model's score: no page starves, and a small share of probes.

The model fetches a page where its score reaches the threshold. Two rules add fetches whatever it says:
- the longest interval: a page is revisited at least once in every `max_interval_ticks` since its last
  revisit — at the tick its rhythm sees likeliest in that interval when it is the likeliest of its day too
  (so the guaranteed revisit lands where items are expected, not at whatever hour the watch began), at the
  interval's last tick at the latest. A page whose rhythm tells nothing is read at the bound.
- exploration: a tick is probed with probability `exploration_share` at a slot the page's rhythm has never
  observed, shrinking as the slot's observed ticks grow (× CELL_STRENGTH / (CELL_STRENGTH + exposure)), so a
  page that changes its rhythm is noticed.

One implementation: the live stage (agents.revisit) and the cold-start evaluation (models.revisit.coldstart)
both run it, so the evaluation's figures are the scheduler's.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.revisit.rhythm import CELL_STRENGTH, RhythmPrior, slot_rates, slots_of


def starvation_ticks(max_interval_hours: float | None, tick_hours: float) -> int | None:
    """The longest interval between two revisits of a page, in ticks (None: unbounded)."""
    return None if max_interval_hours is None else max(1, math.ceil(max_interval_hours / tick_hours - 1e-9))


def exploring(key: str, tick: int, share: float) -> bool:
    """A deterministic draw for a page at a tick (the same tick decided again draws the same), true with
    probability `share`."""
    digest = hashlib.blake2b(f"{key}\x00{tick}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < share


@dataclass(frozen=True)
class Rules:
    """The rules' settings: the longest interval in ticks (None: unbounded) and the exploration share."""

    prior: RhythmPrior
    max_interval_ticks: int | None
    exploration_share: float = 0.0

    def starved(self, counts: np.ndarray, exposure: np.ndarray, ticks: np.ndarray, since: np.ndarray) -> np.ndarray:
        """Whether each page (its slot sums, pages × slots) is due its guaranteed revisit at its tick, `since`
        ticks after its last revisit: the interval's last tick, or before it the tick its rhythm finds likeliest
        in the interval (ties to the later) when that tick is also its likeliest of the day around it. (Without
        that, an interval shorter than a day that holds no daily peak would be read at every tick of a falling
        rate, each the likeliest of what is left.)"""
        bound = self.max_interval_ticks
        if bound is None or not len(ticks):
            return np.zeros(len(ticks), dtype=bool)
        ticks, since = np.asarray(ticks), np.asarray(since)
        rates = slot_rates(self.prior, counts, exposure)
        half_day = max(1, round(12 / self.prior.tick_hours))
        reach = max(bound, half_day)
        offsets = np.arange(-reach, reach + 1)
        around = np.take_along_axis(rates, slots_of(ticks[:, None] + offsets[None, :], self.prior.tick_hours), 1)
        here = reach  # the column of offset 0
        # The interval: from the first tick after the last revisit to its last.
        inside = (offsets[None, :] >= 1 - since[:, None]) & (offsets[None, :] <= bound - since[:, None])
        day = np.abs(offsets) <= half_day

        def largest(mask: np.ndarray) -> np.ndarray:
            return np.where(mask, around, -np.inf).max(1)

        rate = around[:, here]
        before, after = offsets[None, :] < 0, offsets[None, :] > 0
        likeliest = ((rate >= largest(inside & before)) & (rate > largest(inside & after) * (1 + 1e-9))
                     & (rate >= largest(np.broadcast_to(day, around.shape))))
        return (since >= bound) | (likeliest & (since < bound))

    def explored(self, keys: Sequence[str], ticks: Sequence[int], slot_exposure: np.ndarray) -> np.ndarray:
        """Whether each page is probed at its tick, given the ticks its rhythm observed at that tick's slot."""
        if self.exploration_share <= 0:
            return np.zeros(len(keys), dtype=bool)
        shares = self.exploration_share * CELL_STRENGTH / (CELL_STRENGTH + np.asarray(slot_exposure, dtype=float))
        return np.array([exploring(key, int(tick), float(share)) for key, tick, share in zip(keys, ticks, shares)],
                        dtype=bool)

