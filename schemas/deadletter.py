"""deadletter: a message that could not be read, kept with the reason."""

from __future__ import annotations

from schemas.base import Message


class DeadLetter(Message):
    topic: str
    partition: int
    offset: int
    reason: str
    # The raw message, as text (undecodable bytes replaced), so nothing is lost.
    key: str = ""
    value: str = ""
