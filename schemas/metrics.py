"""metrics: one measured value of one stage, streamed to ClickHouse."""

from __future__ import annotations

from pydantic import Field

from schemas.base import Message


class Metric(Message):
    name: str
    value: float
    stage: str
    labels: dict[str, str] = Field(default_factory=dict)
