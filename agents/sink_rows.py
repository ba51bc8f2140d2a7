"""The sink's core: the ClickHouse rows of each message (each topic's table is declared in its registry entry)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemas.base import Message
from schemas.crawl import PageFetched
from schemas.deadletter import DeadLetter
from schemas.discovery import EpisodeEnded
from schemas.expansion import ExpansionRound
from schemas.links import LinksScored, SiteVerdict, SourceFound, SourceVerdict, WatchStopped
from schemas.metrics import Metric
from schemas.webhooks import WebhookDelivery, WebhookSet
from schemas.pagination import PaginationTags
from schemas.records import ItemDiscovered, RecordExtracted
from schemas.registry import TOPICS
from schemas.revisit import RevisitDecision, RevisitObserved

Row = dict[str, Any]


def _fetch_rows(page: PageFetched) -> list[Row]:
    return [{
        "event_id": page.event_id, "site": page.site, "crawl_id": page.crawl_id, "url": page.url,
        "final_url": page.final_url, "depth": page.depth, "reason": page.reason, "status": page.status,
        "error": page.error.value, "error_detail": page.error_detail, "not_modified": int(page.not_modified),
        "content_type": page.content_type, "encoding": page.encoding, "body_bytes": page.body_bytes,
        "truncated": int(page.truncated), "redirects": len(page.redirects), "attempts": page.attempts,
        "fetch_ms": page.fetch_ms, "fetched_at": page.created_at,
    }]


def _link_rows(links: LinksScored) -> list[Row]:
    return [{
        "event_id": links.event_id, "position": position, "site": links.site, "crawl_id": links.crawl_id,
        "page_url": links.final_url, "url": anchor.url, "text": anchor.text, "tag_path": anchor.tag_path,
        "same_site": int(anchor.same_site), "score": anchor.score, "policy": links.policy, "depth": links.depth,
        "created_at": links.created_at,
    } for position, anchor in enumerate(links.anchors)]


def _source_rows(source: SourceFound) -> list[Row]:
    return [{
        "event_id": source.event_id, "site": source.site, "crawl_id": source.crawl_id, "url": source.url,
        "kind": source.kind, "score": source.score, "clicks": source.clicks, "created_at": source.created_at,
    }]


def _episode_rows(episode: EpisodeEnded) -> list[Row]:
    return [{
        "event_id": episode.event_id, "site": episode.site, "crawl_id": episode.crawl_id,
        "homepage": episode.homepage, "end": episode.end, "clicks": episode.clicks, "found": episode.found,
        "unit_cost": episode.unit_cost, "harvest_rate": episode.harvest_rate, "policy": episode.policy,
        "reason": episode.reason, "created_at": episode.created_at,
    }]


def _expansion_rows(round_: ExpansionRound) -> list[Row]:
    return [{
        "event_id": round_.event_id, "site": round_.site, "expansion_id": round_.expansion_id,
        "round": round_.round, "operator": round_.operator, "returned": round_.returned,
        "new_pages": round_.new_pages, "reward": round_.reward, "arm_scores": round_.arm_scores,
        "seeds": round_.seeds, "end": round_.end, "created_at": round_.created_at,
    }]


def _pagination_rows(tags: PaginationTags) -> list[Row]:
    """One row per tagged link; a page without pagination still gets one row (label NONE), so every
    tagged page is counted."""
    links = [(link.url, link.text, link.label) for link in tags.links] or [("", "", "NONE")]
    return [{
        "event_id": tags.event_id, "position": position, "site": tags.site, "crawl_id": tags.crawl_id,
        "source_url": tags.source_url or tags.page_url, "page_url": tags.final_url, "url": url, "text": text,
        "label": label, "model": tags.model, "nodes": tags.nodes, "tagging_ms": tags.tagging_ms,
        "created_at": tags.created_at,
    } for position, (url, text, label) in enumerate(links)]


def _record_rows(record: RecordExtracted) -> list[Row]:
    """One row per record; the records table keeps one row per (source, item) with its first and last sight."""
    return [{
        "site": record.site, "source_url": record.source_url or record.page_url, "item_url": record.item_url,
        "title": record.title, "date": record.date, "snippet": record.snippet, "place": record.place,
        "published": record.published, "event_start": record.event_start, "page_url": record.page_url,
        "position": record.position, "first_seen": record.seen_at, "last_seen": record.seen_at,
    }]


def _new_item_rows(item: ItemDiscovered) -> list[Row]:
    return [{
        "event_id": item.event_id, "site": item.site, "crawl_id": item.crawl_id,
        "source_url": item.source_url or item.page_url, "page_url": item.page_url, "item_url": item.item_url,
        "title": item.title, "date": item.date, "published": item.published, "event_start": item.event_start,
        "first_seen": item.first_seen, "created_at": item.created_at,
    }]


def _decision_rows(decision: RevisitDecision) -> list[Row]:
    return [{
        "event_id": decision.event_id, "site": decision.site, "page_url": decision.page_url,
        "tick_at": decision.tick_at, "policy": decision.policy, "fetch": int(decision.fetch),
        "probability": decision.probability, "created_at": decision.created_at,
    }]


def _observed_rows(observed: RevisitObserved) -> list[Row]:
    return [{
        "event_id": observed.event_id, "position": position, "site": observed.site, "page_url": observed.page_url,
        "tick_at": observed.tick_at, "update_at": update_at, "created_at": observed.created_at,
    } for position, update_at in enumerate(observed.update_ticks)]


def _metric_rows(metric: Metric) -> list[Row]:
    return [{
        "event_id": metric.event_id, "worker": metric.site, "name": metric.name, "stage": metric.stage,
        "value": metric.value, "kind": metric.kind, "labels": metric.labels, "created_at": metric.created_at,
    }]


def _stop_rows(stop: WatchStopped) -> list[Row]:
    return [{"event_id": stop.event_id, "site": stop.site, "url": stop.url, "reason": stop.reason,
             "created_at": stop.created_at}]


def _verdict_rows(verdict: SourceVerdict) -> list[Row]:
    return [{"event_id": verdict.event_id, "site": verdict.site, "url": verdict.url,
             "is_source": int(verdict.is_source), "created_at": verdict.created_at}]


def _site_verdict_rows(verdict: SiteVerdict) -> list[Row]:
    return [{"event_id": verdict.event_id, "site": verdict.site, "homepage": verdict.homepage,
             "source_url": verdict.source_url or "", "created_at": verdict.created_at}]


def _webhook_rows(webhook: WebhookSet) -> list[Row]:
    return [{"event_id": webhook.event_id, "site": webhook.site, "source_url": webhook.source_url,
             "url": webhook.url, "created_at": webhook.created_at}]


def _delivery_rows(delivery: WebhookDelivery) -> list[Row]:
    return [{
        "event_id": delivery.event_id, "site": delivery.site, "item_event_id": delivery.item_event_id,
        "source_url": delivery.source_url, "url": delivery.url, "state": delivery.state,
        "attempts": delivery.attempts, "status": delivery.status, "error": delivery.error,
        "created_at": delivery.created_at,
    }]


def _deadletter_rows(letter: DeadLetter) -> list[Row]:
    return [{
        "event_id": letter.event_id, "topic": letter.topic, "partition": letter.partition, "offset": letter.offset,
        "reason": letter.reason, "key": letter.key, "value": letter.value, "created_at": letter.created_at,
    }]


# message model → the rows of one message (the table is the topic's, in schemas.registry)
ROWS: dict[type[Message], Callable[[Any], list[Row]]] = {
    PageFetched: _fetch_rows,
    LinksScored: _link_rows,
    SourceFound: _source_rows,
    EpisodeEnded: _episode_rows,
    ExpansionRound: _expansion_rows,
    PaginationTags: _pagination_rows,
    RecordExtracted: _record_rows,
    ItemDiscovered: _new_item_rows,
    RevisitDecision: _decision_rows,
    RevisitObserved: _observed_rows,
    Metric: _metric_rows,
    WatchStopped: _stop_rows,
    SourceVerdict: _verdict_rows,
    SiteVerdict: _site_verdict_rows,
    WebhookSet: _webhook_rows,
    WebhookDelivery: _delivery_rows,
    DeadLetter: _deadletter_rows,
}


def stored_topics() -> dict[str, str]:
    """Every topic the sink stores → its ClickHouse table."""
    return {spec.name: spec.table for spec in TOPICS.values() if spec.table is not None}


def rows_for(topic: str, messages: list[Message]) -> tuple[str, list[Row]]:
    """The table a topic's messages go to, and their rows."""
    spec = TOPICS[topic]
    if spec.table is None:
        raise KeyError(f"topic {topic} is not stored in ClickHouse")
    to_rows = ROWS[spec.value_model]
    return spec.table, [row for message in messages for row in to_rows(message)]
