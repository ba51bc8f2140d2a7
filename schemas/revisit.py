"""revisit.ticks and revisit.decisions: the clock of the scheduler and its choices."""

from __future__ import annotations

from datetime import datetime

from schemas.base import Message


class RevisitTick(Message):
    page_url: str
    tick_at: datetime


class RevisitDecision(Message):
    page_url: str
    tick_at: datetime
    policy: str
    fetch: bool
    probability: float | None = None
