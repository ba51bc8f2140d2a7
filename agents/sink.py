"""Stage `sink`: every sinkable topic → ClickHouse, in batches by size and time.

One agent per topic, all writing through one client: with embedded chDB this
worker is the only process that may open the data directory, so it records
itself as the owner and answers `sourcewatch sql` at POST /sql/ on its web port
(read-only, with the API token). A batch's offsets are committed only once its
insert succeeded: a failing ClickHouse pauses the topic's sink, never skips rows.
"""

from __future__ import annotations

import json
import logging
import os
from functools import cache

import faust
from aiohttp.web import Request, Response

from agents.sink_rows import rows_for, stored_topics
from agents.sink_writer import store_until_accepted
from infra.api_access import AccessRule
from infra.clickhouse import ClickHouse
from infra.sql_owner import claim_chdb
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events
from streams.topics import topic

log = logging.getLogger(__name__)



@cache
def store() -> ClickHouse:
    claim_chdb(settings.clickhouse_dsn, os.getpid(), app.conf.web_port)
    clickhouse = ClickHouse.from_settings(settings)
    clickhouse.migrate()
    return clickhouse


def close_store() -> None:
    """Close the worker's ClickHouse client if it was opened (an embedded chDB stays locked to this
    process until then, so another process could not open it after the worker stopped)."""
    if store.cache_info().currsize:
        store().close()
        store.cache_clear()


def _leave_to_the_next_worker(events: list[faust.types.EventT]) -> None:
    """The worker stops with a batch not stored: its partitions are committed no further than the batch, so
    the next worker reads it again (see `streams.held_offsets`). The batch and every message of its
    partitions still in this worker are marked done in this process only (never acked to the consumer), so
    the shutdown does not wait for them."""
    for event in events:
        app.held_offsets.hold(event.message.tp, event.message.offset)
    held = {event.message.tp for event in events}
    for message in [event.message for event in events] + [m for m in app.consumer.unacked if m.tp in held]:
        message.acked = True


def _sink_agent(name: str, table: str) -> None:
    async def sink(stream):
        clickhouse = store()
        async for events in stream.take_events(settings.sink_batch_size, within=settings.sink_flush_seconds):
            # take_events acks a batch when the loop moves on, and also when the agent stops or crashes
            # mid-batch; a reference of our own keeps the batch's offsets uncommitted until it is stored.
            for event in events:
                event.message.incref()
            messages = await decode_events(name, events)
            _, rows = rows_for(name, messages)
            stored = await store_until_accepted(
                clickhouse, table, rows,
                on_failure=lambda: metrics.count("sink_insert_failures", "sink", table=table),
                on_stalled=lambda stalled: metrics.gauge("sink_stalled", "sink", int(stalled), table=table),
                stopping=lambda: app.should_stop)
            if not stored:
                _leave_to_the_next_worker(events)
                return
            for event in events:
                event.message.decref()
            metrics.count("rows_written", "sink", len(rows), table=table)
            if table == "fetches":
                for page in messages:
                    progress.of(page.crawl_id).fetch_rows_written += 1
            elif table == "records":
                for record in messages:
                    progress.of(record.crawl_id).record_rows_written += 1
            elif table == "changes":
                for item in messages:
                    progress.of(item.crawl_id).new_item_rows_written += 1
            elif table == "metrics":
                progress.metrics_rows_written += len(rows)

    app.agent(topic(name), name=f"sink-{table}")(sink)


for _name, _table in stored_topics().items():
    _sink_agent(_name, _table)


@cache
def access() -> AccessRule:
    return AccessRule.from_settings(settings)


@app.page("/sql/")
class SqlView(faust.web.View):
    """Runs one read-only query on the worker's ClickHouse (chDB allows one process) and returns JSON, for
    a caller with the API token on a loopback (or allowed) Host and no foreign Origin."""

    async def post(self, request: Request) -> Response:
        refused = access().refusal(request.method, request.headers)
        if refused is not None:
            log.warning("/sql/ refused (%d): %s", refused.status, refused.reason)
            metrics.count("api_refusals", "sink", route="/sql/", status=str(refused.status))
            return self._json({"error": refused.reason}, refused.status)
        try:
            body = await request.json()
            query, parameters = body["query"], body.get("parameters") or {}
            if not isinstance(query, str) or not isinstance(parameters, dict):
                raise TypeError("query is not a string, or parameters not an object")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return self._json({"error": f'the body must be {{"query": "SELECT ...", "parameters": {{}}}} ({exc})'},
                              400)
        try:
            columns, rows = await store().query_async(query, parameters)
        except Exception as exc:  # the query's error goes back to the caller, the worker goes on
            return self._json({"error": str(exc)}, 400)
        return self._json({"columns": columns, "rows": rows}, 200)

    def _json(self, body: dict, status: int) -> Response:
        return self.bytes(json.dumps(body, default=str).encode(), status=status, content_type="application/json")
