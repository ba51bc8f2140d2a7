"""discovery.episodes: how each discovery episode ended, and at what cost."""

from __future__ import annotations

from pydantic import Field

from schemas.crawl import CrawlScoped

# Why an episode ended: a source page reached, the agent's best score at or below its threshold (or no link
# left), the click budget spent, the homepage unreadable.
EPISODE_ENDS = ("found", "stop", "budget", "error")
# The fetch reason of an episode's homepage and of its clicks.
DISCOVER_REASON = "discover"


class EpisodeEnded(CrawlScoped):
    homepage: str
    end: str
    clicks: int
    found: list[str] = Field(default_factory=list)
    # The clicks spent when each was found (an episode may go on past its first find; empty before it could).
    found_at: list[int] = Field(default_factory=list)
    # The agent and classifier that ran it, e.g. their files' training records.
    policy: str
    reason: str = ""
    # The stopping model's view of each choice the policy made (models.discovery.episode.EpisodeState.choices).
    choices: list[list[float]] = Field(default_factory=list)

    @property
    def unit_cost(self) -> float | None:
        """Clicks per source page found (DESIGN.md)."""
        return self.clicks / len(self.found) if self.found else None

    @property
    def harvest_rate(self) -> float:
        """Source pages found per click."""
        return len(self.found) / self.clicks if self.clicks else 0.0
