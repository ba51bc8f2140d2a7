"""metrics: one measured value of one stage, streamed to ClickHouse."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.base import Message


class Metric(Message):
    # 2: `kind` added.
    schema_version: int = 2
    name: str
    value: float
    # "count": the amount counted in the interval (sum them); "gauge": the value at the interval's end.
    kind: Literal["count", "gauge"] = "count"
    stage: str
    labels: dict[str, str] = Field(default_factory=dict)
