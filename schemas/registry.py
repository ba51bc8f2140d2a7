"""The topic registry: every topic's name, value model, partition count and ClickHouse table, declared once.

Keys are always the site (see schemas.sites), so one site's messages share a
partition and per-site state lives in one worker.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from schemas.base import Message
from schemas.crawl import CrawlRequest, PageFetched
from schemas.deadletter import DeadLetter
from schemas.discovery import EpisodeEnded
from schemas.expansion import ExpansionRound
from schemas.links import LinksScored, SiteVerdict, SourceFound, SourceVerdict, WatchStopped
from schemas.metrics import Metric
from schemas.pagination import PaginationTags
from schemas.records import ItemDiscovered, RecordExtracted
from schemas.revisit import RevisitDecision, RevisitObserved, RevisitOutcome, RevisitTick
from schemas.webhooks import WebhookDelivery, WebhookSet


@dataclass(frozen=True)
class TopicSpec:
    name: str
    value_model: type[Message]
    # None: the settings' default partition count.
    partitions: int | None = None
    # The ClickHouse table the sink fills from this topic (views over `<table>_store`); None: not stored.
    table: str | None = None


TOPICS: dict[str, TopicSpec] = {
    spec.name: spec
    for spec in (
        TopicSpec("crawl.requests", CrawlRequest),
        TopicSpec("pages.fetched", PageFetched, table="fetches"),
        TopicSpec("links.scored", LinksScored, table="links"),
        TopicSpec("sources.found", SourceFound, table="sources"),
        TopicSpec("watch.stopped", WatchStopped, table="watch_stops"),
        TopicSpec("sources.verdicts", SourceVerdict, table="source_verdicts"),
        TopicSpec("sites.verdicts", SiteVerdict, table="site_verdicts"),
        TopicSpec("discovery.episodes", EpisodeEnded, table="discovery_episodes"),
        TopicSpec("expansion.rounds", ExpansionRound, table="expansion_rounds"),
        TopicSpec("pagination.tags", PaginationTags, table="pagination"),
        TopicSpec("records.extracted", RecordExtracted, table="records"),
        TopicSpec("changes.detected", ItemDiscovered, table="changes"),
        TopicSpec("revisit.ticks", RevisitTick),
        TopicSpec("revisit.decisions", RevisitDecision, table="revisit_decisions"),
        TopicSpec("revisit.outcomes", RevisitOutcome),
        TopicSpec("revisit.observed", RevisitObserved, table="revisit_observed"),
        TopicSpec("webhooks.set", WebhookSet, table="webhooks"),
        TopicSpec("webhooks.deliveries", WebhookDelivery, table="webhook_deliveries"),
        TopicSpec("metrics", Metric, table="metrics"),
        TopicSpec("deadletter", DeadLetter, partitions=1, table="deadletters"),
    )
}


class InvalidMessage(ValueError):
    """A message that is not valid JSON for its topic's model; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def encode(message: Message) -> bytes:
    return message.model_dump_json().encode("utf-8")


def decode(topic: str, raw: bytes | None) -> Message:
    """The message a topic's raw value holds, or InvalidMessage with the reason."""
    spec = TOPICS[topic]
    if raw is None:
        raise InvalidMessage("empty value")
    try:
        message = spec.value_model.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "message"
        raise InvalidMessage(f"{spec.value_model.__name__}: {where}: {first['msg']}") from exc
    supported = spec.value_model.model_fields["schema_version"].default
    if message.schema_version > supported:
        raise InvalidMessage(
            f"{spec.value_model.__name__}: schema_version {message.schema_version} is newer than {supported}")
    return message
