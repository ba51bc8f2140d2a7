"""Text cut, spliced and garbled at random places (seeded): hostile documents made from a valid one."""

from __future__ import annotations

import random
from collections.abc import Sequence


def garbled(text: str, rng: random.Random, splices: Sequence[str]) -> str:
    """`text` with 1–20 changes: a run of up to 50 characters cut, one of `splices` put in, or a character
    replaced by a random one below U+3000."""
    chars = list(text)
    for _ in range(rng.randint(1, 20)):
        at = rng.randrange(len(chars)) if chars else 0
        roll = rng.random()
        if roll < 0.3:
            del chars[at:at + rng.randint(1, 50)]
        elif roll < 0.6:
            chars[at:at] = rng.choice(splices)
        elif chars:
            chars[at] = chr(rng.randrange(0, 0x3000))
    return "".join(chars)
