"""links.scored and sources.found: the anchors of a page, and source pages found."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from schemas.base import Message
from schemas.crawl import CrawlScoped


class Anchor(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    text: str = ""
    # DOM tag path from the root, e.g. html/body/nav/ul/li/a
    tag_path: str = ""
    nearby_text: str = ""
    same_site: bool = True
    # Policy score (None for BFS, which does not rank).
    score: float | None = None
    # The RL agent's h(a): the chance that the click lands on a source page itself (a hub's link scores high
    # on π, low here); the prior for judging the page it opens. None for policies without one.
    hit_score: float | None = None


class LinksScored(CrawlScoped):
    """The anchors of one fetched page, in document order, scored by the current policy."""

    page_url: str
    final_url: str
    policy: str = "bfs"
    anchors: list[Anchor] = Field(default_factory=list)


class SourceFound(Message):
    """A page judged to be an event/news listing page (a source page)."""

    url: str
    crawl_id: str
    kind: str = "unknown"
    score: float
    clicks: int


class WatchStopped(Message):
    """A source page no longer to be watched (`DELETE /api/v1/watch`, or a find withdrawn by the revisit stage):
    its revisits and its webhook stop."""

    url: str
    # Why: "requested" (a person, through the API) or the stage's reason for withdrawing a find.
    reason: str = "requested"


class SiteVerdict(Message):
    """A person's verdict on a site discovery ran on: its source page is at `source_url` (one discovery gave up
    before, or missed for another page), or, with none, the site has no source page — labels of the episode's
    choices for retraining the stopping model (`sourcewatch retrain discovery`)."""

    homepage: str
    source_url: str | None = None


class SourceVerdict(Message):
    """A person's verdict on a page found as a source page: a label for retraining the classifier."""

    url: str
    is_source: bool
