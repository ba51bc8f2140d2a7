"""Stage `sink`: every sinkable topic → ClickHouse, in batches by size and time.

One agent per topic, all writing through one client: with embedded chDB this
worker is the only process that may open the data directory, so it records
itself as the owner and answers `sourcewatch sql` at POST /sql/ on its web port.
"""

from __future__ import annotations

import json
import os
from functools import cache

import faust
from aiohttp.web import Request, Response

from agents.sink_rows import SINKS, rows_for
from infra.clickhouse import ClickHouse
from infra.sql_owner import claim_chdb
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events
from streams.topics import topic


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


def _sink_agent(name: str, table: str) -> None:
    async def sink(stream):
        clickhouse = store()
        async for events in stream.take_events(settings.sink_batch_size, within=settings.sink_flush_seconds):
            messages = await decode_events(name, events)
            _, rows = rows_for(name, messages)
            await clickhouse.insert_async(table, rows)
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


for _name, (_table, _) in SINKS.items():
    _sink_agent(_name, _table)


@app.page("/sql/")
class SqlView(faust.web.View):
    """Runs one query on the worker's ClickHouse (chDB allows one process) and returns JSON."""

    async def post(self, request: Request) -> Response:
        query = (await request.json()).get("query", "")
        try:
            columns, rows = await store().query_async(query)
        except Exception as exc:  # the query's error goes back to the caller, the worker goes on
            return self.bytes(json.dumps({"error": str(exc)}).encode(), status=400, content_type="application/json")
        body = json.dumps({"columns": columns, "rows": rows}, default=str).encode()
        return self.bytes(body, content_type="application/json")
