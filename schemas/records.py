"""records.extracted and changes.detected: the items of a listing page, and new ones."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from schemas.base import Message


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    item_url: str
    title: str = ""
    date: datetime | None = None
    snippet: str = ""
    position: int = 0


class RecordsExtracted(Message):
    page_url: str
    records: list[Record] = Field(default_factory=list)


class ChangesDetected(Message):
    page_url: str
    new_records: list[Record] = Field(default_factory=list)
    known_items: int = 0
