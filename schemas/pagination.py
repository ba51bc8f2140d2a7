"""pagination.tags: the paginating links of a listing page."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.crawl import CrawlScoped


class TaggedLink(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # Absolute canonical URL; empty for a node that leads nowhere (a button, the current page's label).
    url: str
    text: str = ""
    label: Literal["PAGE", "NEXT"]


class PaginationTags(CrawlScoped):
    """The PAGE and NEXT nodes the tagger found on one fetched source or listing page."""

    page_url: str
    final_url: str
    # The tagger's model file name and format version.
    model: str
    nodes: int = 0
    links: list[TaggedLink] = Field(default_factory=list)
    # Digest of the page's text without its pagination: equal digests in one list mean a repeated page.
    content_digest: str = ""
    tagging_ms: float = 0.0
