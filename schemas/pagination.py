"""pagination.tags: the paginating links of a listing page."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.base import Message


class TaggedLink(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    text: str = ""
    label: Literal["PAGE", "NEXT", "OTHER"]
    score: float = 1.0


class PaginationTags(Message):
    page_url: str
    model: str
    links: list[TaggedLink] = Field(default_factory=list)
