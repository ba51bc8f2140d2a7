"""deadletter: a message that could not be read, or that an agent failed to handle, kept with the reason."""

from __future__ import annotations

import re

from schemas.base import Message

# A failed batch's reason names its stage first: `sourcewatch resend` finds the messages to send again by it.
_FAILED = re.compile(r"(\w+) raised \w")


def failure_reason(stage: str, error: BaseException, traceback_text: str) -> str:
    """The reason of a message in a batch agent `stage` failed to handle."""
    return f"{stage} raised {type(error).__name__}: {error}\n{traceback_text}"


def failed_stage(reason: str) -> str | None:
    """The agent that failed on the message, for a failed batch's reason; None for a message that failed to
    validate (resent, it would fail alike)."""
    found = _FAILED.match(reason)
    return found.group(1) if found else None


class DeadLetter(Message):
    topic: str
    partition: int
    offset: int
    reason: str
    # The raw message, as text (undecodable bytes replaced), so nothing is lost.
    key: str = ""
    value: str = ""
