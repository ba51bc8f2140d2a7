"""expansion.rounds: each round of a domain expansion (DWDBRM) — the operator the bandit chose, what it
found, its reward and every operator's score then."""

from __future__ import annotations

from pydantic import Field

from schemas.base import Message


class ExpansionRound(Message):
    """Keyed by the site of the expansion's first sample."""

    expansion_id: str
    round: int = Field(ge=1)
    operator: str
    # Pages the operator returned, and those found for the first time (ranked best first).
    returned: int = Field(ge=0)
    new_pages: list[str] = Field(default_factory=list)
    reward: float
    # UCB1's score of every operator after the round (an operator not tried yet is left out).
    arm_scores: dict[str, float] = Field(default_factory=dict)
    seeds: list[str] = Field(default_factory=list)
    # On the last round: why the expansion ended.
    end: str = ""
