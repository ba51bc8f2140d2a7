"""The base of every message: frozen, strict, versioned, with a stable event id.

The event id is what makes at-least-once delivery idempotent downstream: a
redelivered or replayed message carries the same id, and the ClickHouse tables
keep one row per id.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_event_id() -> str:
    return uuid.uuid4().hex


def derived_event_id(source_event_id: str, *parts: str) -> str:
    """The id of a message derived from another: the same input always yields the same id,
    so a redelivered input produces rows that replace, not add to, the earlier ones."""
    return hashlib.sha1("\x00".join((source_event_id, *parts)).encode()).hexdigest()


# A site is a registered domain, or host:port (a DNS name is at most 253 characters): longer is not a site.
MAX_SITE_CHARS = 300


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    event_id: str = Field(default_factory=new_event_id)
    # The site (registered domain, or host:port for IP hosts) that keys the message.
    site: str = Field(max_length=MAX_SITE_CHARS)
    created_at: datetime = Field(default_factory=utc_now)
