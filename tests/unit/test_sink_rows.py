"""Rows for every sinkable topic fit their ClickHouse tables (checked against a real chDB)."""

from datetime import UTC, datetime, timedelta

import pytest

from agents.sink_rows import ROWS, rows_for, stored_topics
from infra.clickhouse import MIGRATIONS, ClickHouse
from schemas.crawl import PageFetched
from schemas.deadletter import DeadLetter
from schemas.discovery import EpisodeEnded
from schemas.expansion import ExpansionRound
from schemas.links import Anchor, LinksScored, SiteVerdict, SourceFound, SourceVerdict, WatchStopped
from schemas.metrics import Metric
from schemas.pagination import PaginationTags, TaggedLink
from schemas.records import ItemDiscovered, RecordExtracted
from schemas.revisit import RevisitDecision, RevisitObserved
from schemas.webhooks import WebhookDelivery, WebhookSet

NOW = datetime(2026, 11, 22, tzinfo=UTC)
RECORD = RecordExtracted(site="e.org", crawl_id="c", source_url="https://e.org/events",
                         page_url="https://e.org/events?page=2", item_url="https://e.org/1", title="Talk", date=NOW,
                         snippet="…", place="City Hall, Room 1006", published=NOW - timedelta(days=9),
                         event_start=NOW, seen_at=NOW)
SAMPLES = {
    "pages.fetched": PageFetched(site="e.org", url="https://e.org/", final_url="https://e.org/", crawl_id="c",
                                 status=200, body="<p>", redirects=["https://e.org/"]),
    "links.scored": LinksScored(site="e.org", page_url="https://e.org/", final_url="https://e.org/", crawl_id="c",
                                depth=0, max_depth=1, max_pages=1, anchors=[Anchor(url="https://e.org/a"),
                                                                            Anchor(url="https://e.org/b", score=0.5)]),
    "sources.found": SourceFound(site="e.org", url="https://e.org/events", crawl_id="c", score=0.9, clicks=1),
    "discovery.episodes": EpisodeEnded(site="e.org", crawl_id="c", homepage="https://e.org/", end="found",
                                       clicks=2, found=["https://e.org/events"], policy="rl"),
    "expansion.rounds": ExpansionRound(site="e.org", expansion_id="x", round=2, operator="forward", returned=3,
                                       new_pages=["https://f.org/events"], reward=0.4,
                                       arm_scores={"keyword": 0.9, "forward": 1.2}, seeds=["https://e.org/events"]),
    "records.extracted": RECORD,
    "changes.detected": ItemDiscovered(site="e.org", crawl_id="c", source_url="https://e.org/events",
                                       page_url="https://e.org/events", item_url="https://e.org/1", title="Talk",
                                       date=NOW, event_start=NOW, first_seen=NOW),
    "revisit.decisions": RevisitDecision(site="e.org", page_url="https://e.org/events", tick_at=NOW,
                                         policy="rc-1h", fetch=True),
    "revisit.observed": RevisitObserved(site="e.org", page_url="https://e.org/events", tick_at=NOW,
                                        update_ticks=[NOW - timedelta(hours=2), NOW]),
    "pagination.tags": PaginationTags(site="e.org", crawl_id="c", source_url="https://e.org/events",
                                      page_url="https://e.org/events?page=2", final_url="https://e.org/events?page=2",
                                      model="default v2", nodes=40, links=[
                                          TaggedLink(url="https://e.org/events", text="1", label="PAGE"),
                                          TaggedLink(url="https://e.org/events?page=3", text="Next", label="NEXT")]),
    "metrics": Metric(site="worker-1", name="pages_fetched", value=3, stage="fetch", labels={"status": "200"}),
    "deadletter": DeadLetter(site="e.org", topic="pages.fetched", partition=0, offset=7, reason="bad"),
    "watch.stopped": WatchStopped(site="e.org", url="https://e.org/events"),
    "sources.verdicts": SourceVerdict(site="e.org", url="https://e.org/events", is_source=False),
    "sites.verdicts": SiteVerdict(site="e.org", homepage="https://e.org/", source_url="https://e.org/events"),
    "webhooks.set": WebhookSet(site="e.org", source_url="https://e.org/events", url="https://hooks.example/in"),
    "webhooks.deliveries": WebhookDelivery(site="e.org", item_event_id="i1", source_url="https://e.org/events",
                                           url="https://hooks.example/in", state="failed", attempts=5, status=503,
                                           error="HTTP 503"),
}


@pytest.fixture(scope="module")
def clickhouse(tmp_path_factory):
    store = ClickHouse(f"chdb://{tmp_path_factory.mktemp('chdb')}")
    assert store.migrate() == [version for version, _ in MIGRATIONS]
    assert store.migrate() == []  # idempotent
    yield store
    store.close()


@pytest.mark.parametrize("topic", sorted(stored_topics()))
def test_rows_insert_and_a_replay_does_not_double_count(clickhouse, topic):
    table, rows = rows_for(topic, [SAMPLES[topic]])
    assert rows
    clickhouse.insert(table, rows)
    clickhouse.insert(table, rows)  # the same message delivered again
    _, counted = clickhouse.query(f"SELECT count() FROM {table}")
    assert counted == [[len(rows)]]


def test_every_stored_topic_has_rows_and_a_table_the_migrations_create():
    from infra.clickhouse import current_definitions
    from schemas.registry import TOPICS

    for topic, table in stored_topics().items():
        assert TOPICS[topic].value_model in ROWS
        assert {table, f"{table}_store"} <= set(current_definitions())


def test_a_page_without_pagination_still_gets_a_row(clickhouse):
    page = SAMPLES["pagination.tags"].model_copy(update={"links": [], "event_id": "no-pagination"})
    table, rows = rows_for("pagination.tags", [page])
    assert [row["label"] for row in rows] == ["NONE"]


def test_an_item_read_again_keeps_one_row_with_its_first_and_last_sight(clickhouse):
    later = datetime(2026, 11, 23, tzinfo=UTC)
    for seen_at in (later, NOW, later):  # read again on a revisit, and once replayed
        table, rows = rows_for("records.extracted", [RECORD.model_copy(update={"seen_at": seen_at, "event_id": "x"})])
        clickhouse.insert(table, rows)
    _, rows = clickhouse.query("SELECT first_seen, last_seen FROM records WHERE item_url = 'https://e.org/1'")
    assert [[value.replace(tzinfo=UTC) for value in row] for row in rows] == [[NOW, later]]
    _, rows = clickhouse.query("SELECT place, published, event_start FROM records WHERE item_url = 'https://e.org/1'")
    assert [[row[0], *(value.replace(tzinfo=UTC) for value in row[1:])] for row in rows] == [
        ["City Hall, Room 1006", NOW - timedelta(days=9), NOW]]


def test_a_series_meetings_sharing_a_title_and_a_link_are_a_row_each(clickhouse):
    """An item is its link, title and date (record_key): two meetings of one series at one meeting point."""
    meetings = [RECORD.model_copy(update={"item_url": "https://maps.example/stein", "title": "OL Training",
                                          "date": NOW + timedelta(days=days), "event_id": f"m{days}"})
                for days in (7, 35)]
    table, rows = rows_for("records.extracted", meetings)
    clickhouse.insert(table, rows)
    _, rows = clickhouse.query("SELECT date FROM records WHERE title = 'OL Training' ORDER BY date")
    assert [row[0].replace(tzinfo=UTC) for row in rows] == [NOW + timedelta(days=7), NOW + timedelta(days=35)]


def test_a_new_item_keeps_its_event_start_and_no_publication_date(clickhouse):
    table, rows = rows_for("changes.detected", [SAMPLES["changes.detected"].model_copy(update={"event_id": "kinds"})])
    clickhouse.insert(table, rows)
    _, rows = clickhouse.query("SELECT date, published, event_start FROM changes WHERE event_id = 'kinds'")
    assert rows[0][1] is None and rows[0][0].replace(tzinfo=UTC) == rows[0][2].replace(tzinfo=UTC) == NOW


async def test_a_batch_whose_table_was_dropped_goes_in_once_the_table_is_back(clickhouse):
    from agents.sink_writer import store_until_accepted

    clickhouse.client.command("DROP TABLE deadletters_store")
    clickhouse.client.command("DROP VIEW deadletters")
    table, rows = rows_for("deadletter", [DeadLetter(site="e.org", topic="pages.fetched", partition=1, offset=9,
                                                     reason="dropped table")])
    failures = []
    await store_until_accepted(clickhouse, table, rows, on_failure=lambda: failures.append(1))
    assert failures == [1]  # the first insert failed; the schema check between tries created the table again
    assert clickhouse.query("SELECT reason FROM deadletters")[1] == [["dropped table"]]
