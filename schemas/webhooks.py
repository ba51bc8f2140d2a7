"""webhooks.set and webhooks.deliveries: where a watched page's new items are posted, and how each post went."""

from __future__ import annotations

from typing import Literal

from schemas.base import Message


class WebhookSet(Message):
    """A watched source page's webhook: its new items are posted there (an empty `url` removes it)."""

    source_url: str
    url: str


class WebhookDelivery(Message):
    """One new item posted to one webhook: delivered, or failed after every attempt."""

    item_event_id: str
    source_url: str
    url: str
    state: Literal["delivered", "failed"]
    attempts: int
    # The receiver's last HTTP status (None: no answer), and why the last attempt failed.
    status: int | None = None
    error: str = ""
