"""revisit.ticks, revisit.decisions, revisit.outcomes and revisit.observed: the scheduler's clock, its choices,
what the revisits it asked for found, and the updates each read placed in time."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from schemas.base import Message


class RevisitTick(Message):
    """Tick `tick_at` (the end of the tick, on the scheduler's clock) of one watched source page."""

    page_url: str
    tick_at: datetime


class RevisitDecision(Message):
    page_url: str
    tick_at: datetime
    # The policy and its version, e.g. the model's version string.
    policy: str
    fetch: bool
    probability: float | None = None


class RevisitOutcome(Message):
    """What the revisit of a source page at one tick gave: whether the page could be read, and its new items."""

    # 2: `in_navigation` added.
    schema_version: int = 2
    page_url: str
    tick_at: datetime
    # False when the fetch failed (the error says why); a 304 Not Modified is read, with no new items.
    read: bool
    error: str = ""
    new_items: int = 0
    # The listed time of each new item, where the listing gives one.
    published: list[datetime | None] = Field(default_factory=list)
    # The listed time of every item the page lists (a page's first read bootstraps its history from them).
    listed: list[datetime | None] = Field(default_factory=list)
    # How many of them link to an item's own page.
    linked: int = 0
    # The records are the site's navigation (a menu read where the page shows no list of its own).
    in_navigation: bool = False
    # Validators of this fetch, for the next revisit's conditional GET.
    etag: str | None = None
    last_modified: str | None = None


class RevisitObserved(Message):
    """The updates one read of a watched page placed since the watch began (agents.page_knowledge places them:
    an item with a listed time at its tick, one dated by day or not at all at its likeliest tick since the
    previous read): the live figures' y_t, one record per read, so any period's live figures are computed over
    exactly that period's ticks."""

    page_url: str
    # The read's tick (its end), and the ticks (their ends) it placed updates at.
    tick_at: datetime
    update_ticks: list[datetime]
